/**
 * A storage node that misses blocks is caught up, not stuck (issue 15). Real processes on
 * 127.0.0.1: two storage nodes (shards 0-7 and 8-15), a miner sealing every 150 ms, a client
 * serving JSON-RPC. Both storage nodes are SIGKILLed and kept down while the miner seals on, far
 * past its "unreachable" threshold (the old miner gave each block 8 tries, then dropped it for
 * good and every later block was refused UNKNOWN_PARENT). One comes back on its data directory
 * (it resumes from its log and is sent the blocks kept for it); the other comes back empty, at
 * genesis, and refuses the next block UNKNOWN_PARENT, so the miner sends it every block from
 * genesis on. Both then reach the miner's head root, and the client reads and commits again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { Miner, MinerNode } from '@monsoon/miner';
import { killAll, type Listening, startRole, until, writeGenesis } from '@monsoon/test-utils';
import { addrs, genesis, minerHead, rules, transfer } from '../helpers/minerProcess.js';
import { freeAddress, rpc, startClientRole, stateRootAt } from '../helpers/roles.js';

const WAIT_MS = 60_000;

/** Sends a raw transaction through the client and waits for its receipt's status. */
async function commit(url: string, raw: Uint8Array): Promise<string> {
  // Until the client takes it: after an outage its channels to storage reconnect on grpc-js's
  // own backoff, so its first reads may still fail UNAVAILABLE.
  const sent = await until(
    async () => {
      const r = await rpc<string>(url, 'eth_sendRawTransaction', [`0x${toHex(raw)}`]);
      if (r.error !== undefined && !/UNAVAILABLE|no replica/.test(r.error.message))
        throw new Error(`eth_sendRawTransaction: ${r.error.message}`);
      return r.result !== undefined && r;
    },
    { what: 'the client to take the transaction', timeoutMs: WAIT_MS },
  );
  const receipt = await until(
    async () =>
      (await rpc<{ status: string } | null>(url, 'eth_getTransactionReceipt', [sent.result])).result ??
      undefined,
    { what: `the receipt of ${sent.result}`, timeoutMs: WAIT_MS },
  );
  return receipt.status;
}

describe('a storage node kept down past the retries is caught up', () => {
  let dir: string;
  let genesisFile: string;
  const storage: Listening[] = [];
  let miner: Listening;
  let rpcUrl: string;

  const storageArgs = (shards: string, listen: string, dataDir: string) => [
    '--genesis',
    genesisFile,
    '--shards',
    shards,
    '--listen',
    listen,
    '--data-dir',
    dataDir,
    '--fsync',
    'none',
  ];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'monsoon-catchup-'));
    genesisFile = await writeGenesis(dir, genesis);
    storage.push(await startRole('storage-node', storageArgs('0-7', '127.0.0.1:0', join(dir, 'a'))));
    storage.push(await startRole('storage-node', storageArgs('8-15', '127.0.0.1:0', join(dir, 'b'))));
    const list = storage.map((s) => s.address).join(',');
    miner = await startRole('miner', [
      '--genesis',
      genesisFile,
      '--storage',
      list,
      '--block-interval',
      '150',
      '--storage-retry-max',
      '100',
      '--coinbase',
      `0x${'c0'.repeat(20)}`,
    ]);
    rpcUrl = await startClientRole(
      genesisFile,
      miner.address,
      storage.map((s) => s.address),
    );
  }, 60_000);

  afterAll(async () => {
    await killAll();
    await rm(dir, { recursive: true, force: true });
  });

  it('both storage nodes reach the miner head root again and the client commits again', async () => {
    const first = await commit(rpcUrl, transfer(0, addrs[40]!, 1_000n));
    expect(first).toBe('0x1');

    const [a, b] = storage as [Listening, Listening];
    a.proc.signal('SIGKILL');
    b.proc.signal('SIGKILL');
    await Promise.all([a.proc.exited, b.proc.exited]);
    const down = (await minerHead(miner.address)).number;
    // Down past the point where the miner reports the nodes unreachable, and many blocks on.
    for (const s of [a, b]) {
      await miner.proc.waitFor(
        (l) =>
          l.msg === 'storage node unreachable; its blocks are kept and sent when it is back' &&
          l.storage === s.address,
      );
    }
    await until(async () => (await minerHead(miner.address)).number >= down + 30n, {
      what: '30 blocks sealed while storage is down',
      timeoutMs: WAIT_MS,
    });

    // a resumes from its log; b starts over from genesis in a new data directory.
    const a2 = await startRole('storage-node', storageArgs('0-7', a.address, join(dir, 'a')));
    const b2 = await startRole('storage-node', storageArgs('8-15', b.address, join(dir, 'b2')));
    const resumed = (await a2.proc.waitFor((l) => l.msg === 'log replayed')).head as number;
    expect(BigInt(resumed)).toBeLessThan(down + 30n);

    const target = await minerHead(miner.address);
    for (const s of [a2, b2]) {
      const root = await until(() => stateRootAt(s.address, target.hash), {
        what: `block ${target.number} in ${s.address}`,
        timeoutMs: WAIT_MS,
      });
      expect(root).toBe(toHex(target.stateRoot));
    }
    const caught = await miner.proc.waitFor(
      (l) => l.msg === 'storage node is behind; catching it up' && l.storage === b.address,
    );
    expect(caught.nodeHead).toBe(0);
    expect(miner.proc.lines.filter((l) => l.msg === 'storage node refused a block')).toEqual([]);

    // The client reads at the head and commits through the recovered storage nodes.
    const balanceOf = async (who: Uint8Array) => {
      const r = await rpc<string>(rpcUrl, 'eth_getBalance', [`0x${toHex(who)}`, 'latest']);
      return r.result === undefined ? undefined : BigInt(r.result);
    };
    // (The client reads at the head it follows, which the storage nodes may not have applied yet.)
    const balance = await until(() => balanceOf(addrs[40]!), { what: 'a read', timeoutMs: WAIT_MS });
    expect(balance).toBe(10n ** 21n + 1_000n);
    expect(await commit(rpcUrl, transfer(1, addrs[41]!, 2_000n))).toBe('0x1');
    expect(await until(() => balanceOf(addrs[41]!), { what: 'a read', timeoutMs: WAIT_MS })).toBe(
      10n ** 21n + 2_000n,
    );
  }, 150_000);
});

describe('a storage node further behind than the miner holds blocks', () => {
  afterAll(async () => {
    await killAll();
  });

  it('is reported loudly and counted refused, not retried forever', async () => {
    const dir2 = await mkdtemp(join(tmpdir(), 'monsoon-catchup-gap-'));
    try {
      const g = await writeGenesis(dir2, genesis);
      // A port nothing listens on yet: the storage node is "down" while the miner seals.
      const address = await freeAddress();
      const lines: { msg: string; meta: Record<string, unknown> | undefined }[] = [];
      const log = {
        info: () => undefined,
        warn: () => undefined,
        error: (msg: string, meta?: Record<string, unknown>) => lines.push({ msg, meta }),
      };
      const node = await MinerNode.start(
        await Miner.create(genesis, { rules }),
        {
          blockIntervalMs: 0,
          storage: [address],
          storageCatchUpBlocks: 4,
          storageFeed: { retryMinMs: 5, retryMaxMs: 20, maxBacklog: 2 },
        },
        log,
      );
      try {
        for (let i = 0; i < 10; i++) await node.sealNow();
        // Back, empty (at genesis): it lacks blocks 1-8, which the miner no longer keeps for it.
        await startRole('storage-node', ['--genesis', g, '--listen', address, '--data-dir', join(dir2, 's')]);
        await until(() => node.storageCounters.refused > 0, { what: 'the gap reported', timeoutMs: 30_000 });
        expect(lines.map((l) => l.msg)).toContain(
          'storage node is behind further than this miner holds blocks',
        );
        expect(
          lines.find((l) => l.msg === 'storage node is behind further than this miner holds blocks')?.meta,
        ).toMatchObject({ storage: address, nodeHead: 0 });
        expect(node.storageCounters.caughtUp).toBe(0);
      } finally {
        await node.close();
      }
    } finally {
      await rm(dir2, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a miner restarted on its chain log', () => {
  afterAll(async () => {
    await killAll();
  });

  it('catches up a storage node with the blocks it restored', async () => {
    const dir3 = await mkdtemp(join(tmpdir(), 'monsoon-catchup-restart-'));
    try {
      const g = await writeGenesis(dir3, genesis);
      const address = await freeAddress();
      const opts = {
        blockIntervalMs: 0,
        storage: [address],
        dataDir: join(dir3, 'miner'),
        storageFeed: { retryMinMs: 5, retryMaxMs: 20 },
      };
      const first = await MinerNode.start(await Miner.create(genesis, { rules }), opts);
      for (let i = 0; i < 6; i++) await first.sealNow();
      await first.close();
      // The storage node comes up at genesis; the restarted miner has only its log.
      await startRole('storage-node', ['--genesis', g, '--listen', address, '--data-dir', join(dir3, 's')]);
      const again = await MinerNode.start(await Miner.create(genesis, { rules }), opts);
      try {
        const next = await again.sealNow();
        expect(next.block.header.number).toBe(7n);
        const root = await until(() => stateRootAt(address, next.block.hash), {
          what: 'block 7 in storage',
          timeoutMs: 30_000,
        });
        expect(root).toBe(toHex(next.block.header.stateRoot));
        expect(again.storageCounters).toMatchObject({ refused: 0, caughtUp: 6 });
      } finally {
        await again.close();
      }
    } finally {
      await rm(dir3, { recursive: true, force: true });
    }
  }, 60_000);
});
