/**
 * Real processes on 127.0.0.1: two storage nodes (shards 0-7 and 8-15) and two miners that
 * gossip with each other and both send their blocks to storage. Transactions submitted to one
 * miner over gRPC end up, through blocks, in both storage nodes, whose heads and roots agree
 * with both miners'.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeAccount, toHex } from '@monsoon/dsm-tree';
import { unary } from '@monsoon/edge';
import { keccak } from '@monsoon/keccak';
import {
  atHash,
  getAccountRequestToProto,
  getAccountResponseFromProto,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  HEAD,
  StorageServiceClient,
  TxStatus,
} from '@monsoon/protocol';
import { killAll, startRole, until, writeGenesis } from '@monsoon/test-utils';
import { addrs, genesis, genesisTree, minerHead, submit, transfer } from '../helpers/minerProcess.js';

const storageClient = (address: string) => new StorageServiceClient(address, credentials.createInsecure());
const WAIT_MS = 30_000;

describe('two miners and two storage nodes, as processes', () => {
  let dir: string;
  let storage: string[];
  let miners: string[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'monsoon-miner-'));
    const g = await writeGenesis(dir, genesis);
    const a = await startRole('storage-node', [
      '--genesis',
      g,
      '--shards',
      '0-7',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'a'),
    ]);
    const b = await startRole('storage-node', [
      '--genesis',
      g,
      '--shards',
      '8-15',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'b'),
    ]);
    storage = [a.address, b.address];
    const m1 = await startRole('miner', [
      '--genesis',
      g,
      '--storage',
      storage.join(','),
      '--block-interval',
      '400',
      '--coinbase',
      `0x${'a1'.repeat(20)}`,
      // Submissions recovered on a worker thread while earlier ones execute.
      '--recovery-threads',
      '1',
    ]);
    const m2 = await startRole('miner', [
      '--genesis',
      g,
      '--storage',
      storage.join(','),
      '--peers',
      m1.address,
      '--block-interval',
      '700',
      '--coinbase',
      `0x${'b2'.repeat(20)}`,
    ]);
    miners = [m1.address, m2.address];
  }, 60_000);

  afterAll(async () => {
    await killAll();
    await rm(dir, { recursive: true, force: true });
  });

  it('transactions submitted to one miner reach both storage nodes; miners and storage agree on the head', async () => {
    const full = genesisTree();
    const txs = Array.from({ length: 20 }, (_, i) => transfer(i, addrs[40 + (i % 10)]!, 1_000n + BigInt(i)));
    const res = await submit(miners[0]!, {
      transactions: txs,
      bag: full.proveAccounts(addrs.slice(0, 20).concat(addrs.slice(40, 50))),
      prefetchedRoot: full.root(),
    });
    // Accepted, or stale when a block sealed between our read and the submission changed a path.
    expect(res.results.filter((r) => r.status === TxStatus.Invalid)).toEqual([]);
    const accepted = res.results.filter((r) => r.status === TxStatus.Accepted).length;
    expect(accepted).toBeGreaterThan(0);

    // The recipient of sender 0 gets its value in a block applied by the storage node of its shard.
    const who = addrs[40]!;
    const shardOfWho = keccak.keccak256(who)[0]! >> 4;
    const holder = storageClient(storage[shardOfWho < 8 ? 0 : 1]!);
    const balance = await until(
      async () => {
        const r = getAccountResponseFromProto(
          await unary(
            holder,
            holder.getAccount,
            getAccountRequestToProto({ address: who, at: HEAD, omitLevels: 0 }),
          ),
        );
        const b = decodeAccount(r.accountRlp!).balance;
        return b > 10n ** 21n ? b : undefined;
      },
      { what: 'the transfer in storage', timeoutMs: WAIT_MS },
    );
    expect(balance).toBeGreaterThan(10n ** 21n);
    holder.close();

    // Every block a miner makes reaches both storage nodes, and the other miner follows it.
    const h = await minerHead(miners[0]!);
    for (const address of storage) {
      const c = storageClient(address);
      // Until the block arrives the node answers NOT_FOUND, which `until` takes as "not yet".
      const r = await until(
        async () =>
          getShardRootsResponseFromProto(
            await unary(c, c.getShardRoots, getShardRootsRequestToProto({ at: atHash(h.hash) })),
          ),
        { what: `block ${h.number} in ${address}`, timeoutMs: WAIT_MS },
      );
      expect(toHex(r.stateRoot)).toBe(toHex(h.stateRoot));
      c.close();
    }
    await until(async () => (await minerHead(miners[1]!)).number >= h.number, {
      what: 'the second miner to catch up',
      timeoutMs: WAIT_MS,
    });
  }, 120_000);
});
