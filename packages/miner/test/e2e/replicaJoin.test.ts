/**
 * Storage replicas catch up from each other (issue 15), over real processes on 127.0.0.1: a
 * storage node A (every shard, 32 blocks of history) fed by a miner sealing every 100 ms. A
 * replica R of the same shards, which no miner knows, is started empty once A no longer holds
 * the blocks after genesis: it joins from A's checkpoint of its head and follows A by blocks,
 * and holds the miner's head with the miner's state root. SIGKILLed and restarted on its data
 * directory a few blocks later, it recovers from the checkpoint it joined from plus its log and
 * catches up by blocks (no second checkpoint).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { killAll, type Listening, startRole, until, writeGenesis } from '@monsoon/test-utils';
import { genesis, minerHead } from '../helpers/minerProcess.js';
import { stateRootAt } from '../helpers/roles.js';

const WAIT_MS = 60_000;

describe('a storage replica started empty while the cluster runs', () => {
  let dir: string;
  let genesisFile: string;
  let a: Listening;
  let miner: Listening;

  const replicaArgs = (listen: string) => [
    '--genesis',
    genesisFile,
    '--listen',
    listen,
    '--data-dir',
    join(dir, 'r'),
    '--replicas',
    a.address,
    '--sync-interval',
    '100',
    '--checkpoint-every',
    '16',
    '--checkpoint-depth',
    '2',
  ];

  /** Waits until `s` holds the miner's head of now, and returns its state root there and the miner's. */
  const atMinerHead = async (s: Listening) => {
    const target = await minerHead(miner.address);
    const root = await until(() => stateRootAt(s.address, target.hash), {
      what: `block ${target.number} in ${s.address}`,
      timeoutMs: WAIT_MS,
    });
    return { root, miner: toHex(target.stateRoot), number: target.number };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'monsoon-replica-'));
    genesisFile = await writeGenesis(dir, genesis);
    a = await startRole('storage-node', [
      '--genesis',
      genesisFile,
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'a'),
      '--window',
      '32',
      '--fork-window',
      '8',
      '--checkpoint-every',
      '16',
      '--checkpoint-depth',
      '2',
    ]);
    miner = await startRole('miner', [
      '--genesis',
      genesisFile,
      '--storage',
      a.address,
      '--block-interval',
      '100',
      '--coinbase',
      `0x${'c1'.repeat(20)}`,
    ]);
  }, 60_000);

  afterAll(async () => {
    await killAll();
    await rm(dir, { recursive: true, force: true });
  });

  it('joins from a replica checkpoint, follows it, and after a SIGKILL catches up by blocks', async () => {
    // Past A's window: A no longer holds block 1, so blocks alone cannot bring R from genesis.
    await until(async () => (await minerHead(miner.address)).number > 40n, {
      what: 'the miner past block 40',
      timeoutMs: WAIT_MS,
    });
    const r = await startRole('storage-node', replicaArgs('127.0.0.1:0'));
    const joined = await r.proc.waitFor((l) => l.msg === 'replica sync: joined from a peer checkpoint');
    expect(joined.peer).toBe(a.address);
    expect(joined.number as number).toBeGreaterThan(40);
    const first = await atMinerHead(r);
    expect(first.root).toBe(first.miner);
    // It moved on from the checkpoint by blocks, from A.
    await r.proc.waitFor((l) => l.msg === 'replica sync: caught up from a peer');

    r.proc.signal('SIGKILL');
    await r.proc.exited;
    const down = (await minerHead(miner.address)).number;
    await until(async () => (await minerHead(miner.address)).number >= down + 8n, {
      what: '8 blocks sealed while the replica is down',
      timeoutMs: WAIT_MS,
    });
    const r2 = await startRole('storage-node', replicaArgs(r.address));
    const replayed = await r2.proc.waitFor((l) => l.msg === 'log replayed');
    expect(BigInt(replayed.head as number)).toBeLessThanOrEqual(down);
    const again = await atMinerHead(r2);
    expect(again.root).toBe(again.miner);
    expect(again.number).toBeGreaterThan(down);
    const caught = await r2.proc.waitFor((l) => l.msg === 'replica sync: caught up from a peer');
    expect(caught.from).toBe(replayed.head);
    expect(r2.proc.lines.filter((l) => l.msg === 'replica sync: joined from a peer checkpoint')).toEqual([]);
  }, 120_000);
});
