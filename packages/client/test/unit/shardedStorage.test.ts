/**
 * What the client reads state at: the newest block every shard can be read at, from what each
 * replica says it applied (the least over shards of the most any replica of the shard applied).
 */
import type { Server } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ShardedStorage } from '@monsoon/client';
import { makeAccount, StateTree } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { serveStorage } from '../helpers/storageStandIn.js';

// Enough accounts that every shard's subtree is a node of its own.
const state = new StateTree();
for (let i = 0; i < 64; i++)
  state.putAccount(keccak.keccak256(Uint8Array.of(9, i)).subarray(12), makeAccount({ balance: 1n }));
const servers: Server[] = [];
const addresses: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < 2; i++) {
    const s = await serveStorage(state, new Uint8Array(32).fill(0xbb), 'none');
    servers.push(s.server);
    addresses.push(s.address);
  }
});
afterAll(() => {
  for (const s of servers) s.forceShutdown();
});

/** Makes `r` hold shards [from, to) only (a replica's shards are read-only outside the client). */
function holdOnly(r: { shards: ReadonlySet<number> }, from: number, to: number): void {
  const shards = r.shards as Set<number>;
  shards.clear();
  for (let s = from; s < to; s++) shards.add(s);
}

describe('ShardedStorage.readableNumber', () => {
  it('is the least over shards of the most a replica of each applied, -1 with a shard no replica holds', async () => {
    const storage = await ShardedStorage.connect(addresses);
    const [a, b] = storage.replicas as [(typeof storage.replicas)[0], (typeof storage.replicas)[0]];
    // Both hold every shard: the one further on decides.
    a.appliedNumber = 5n;
    b.appliedNumber = 7n;
    expect(storage.readableNumber).toBe(7n);
    // Shards 8-15 held by `a` alone: they are readable at 5 only.
    holdOnly(b, 0, 8);
    expect(storage.readableNumber).toBe(5n);
    a.appliedNumber = 9n;
    expect(storage.readableNumber).toBe(9n);
    // `a` holds only shards 8-15: shards 0-7 are `b`'s, readable at 7.
    holdOnly(a, 8, 16);
    expect(storage.readableNumber).toBe(7n);
    // Nobody holds shards 8-15 any more: no block can be read at.
    holdOnly(a, 0, 8);
    expect(storage.readableNumber).toBe(-1n);
    // Asked again and again, the same answer (nothing is kept between calls).
    expect([storage.readableNumber, storage.readableNumber]).toEqual([-1n, -1n]);
    storage.close();
  });
});
