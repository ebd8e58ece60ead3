/**
 * A block sealed because the pending block was full (not by the timer) goes everywhere a timed
 * one goes: to the storage nodes, which apply it, and to peer miners, which adopt it. Real
 * processes on 127.0.0.1: one storage node with every shard, a miner sealing only when its
 * pending block is full (3 transactions; the timer an hour away), and a peer miner following it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { unary } from '@monsoon/edge';
import {
  atHash,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  StorageServiceClient,
  TxStatus,
} from '@monsoon/protocol';
import { killAll, startRole, until, writeGenesis } from '@monsoon/test-utils';
import { addrs, genesis, genesisTree, minerHead, submit, transfer } from '../helpers/minerProcess.js';

const WAIT_MS = 30_000;
const HOUR_MS = '3600000';

describe('blocks sealed because the pending block was full', () => {
  let dir: string;
  let storage: string;
  let sealer: string;
  let peer: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'monsoon-full-'));
    const g = await writeGenesis(dir, genesis);
    storage = (
      await startRole('storage-node', [
        '--genesis',
        g,
        '--shards',
        '0-15',
        '--listen',
        '127.0.0.1:0',
        '--data-dir',
        join(dir, 's'),
        '--fsync',
        'none',
      ])
    ).address;
    sealer = (
      await startRole('miner', [
        '--genesis',
        g,
        '--storage',
        storage,
        '--block-interval',
        HOUR_MS,
        '--max-block-txs',
        '3',
        '--coinbase',
        `0x${'a1'.repeat(20)}`,
      ])
    ).address;
    peer = (
      await startRole('miner', [
        '--genesis',
        g,
        '--storage',
        storage,
        '--peers',
        sealer,
        '--block-interval',
        HOUR_MS,
        '--coinbase',
        `0x${'b2'.repeat(20)}`,
      ])
    ).address;
  }, 60_000);

  afterAll(async () => {
    await killAll();
    await rm(dir, { recursive: true, force: true });
  });

  it('reach the storage nodes and the peer miners', async () => {
    const full = genesisTree();
    // 7 transfers into blocks of 3: blocks 1 and 2 are sealed for fullness, the 7th waits. (The
    // bag is the genesis's; the paths the later transfers read are not changed by the earlier
    // blocks below the miner's top layer, so none is stale.)
    const res = await submit(sealer, {
      transactions: Array.from({ length: 7 }, (_, i) => transfer(i, addrs[40 + i]!, 1_000n)),
      bag: full.proveAccounts(addrs.slice(0, 7).concat(addrs.slice(40, 47))),
      prefetchedRoot: full.root(),
    });
    expect(res.results.map((r) => r.status)).toEqual(Array(7).fill(TxStatus.Accepted));
    const head = await minerHead(sealer);
    expect(head.number).toBe(2n);

    const c = new StorageServiceClient(storage, credentials.createInsecure());
    // Until the block arrives the node answers NOT_FOUND, which `until` takes as "not yet".
    const roots = await until(
      async () =>
        getShardRootsResponseFromProto(
          await unary(c, c.getShardRoots, getShardRootsRequestToProto({ at: atHash(head.hash) })),
        ),
      { what: 'the second full block in storage', timeoutMs: WAIT_MS },
    );
    c.close();
    expect(toHex(roots.stateRoot)).toBe(toHex(head.stateRoot));

    const adopted = await until(
      async () => {
        const h = await minerHead(peer);
        return h.number >= 2n ? h : undefined;
      },
      { what: 'the peer miner to adopt both full blocks', timeoutMs: WAIT_MS },
    );
    expect(toHex(adopted.hash)).toBe(toHex(head.hash));
  }, 120_000);
});
