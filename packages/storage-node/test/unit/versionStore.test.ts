/**
 * The versions a node holds stay bounded: by blocks (`window`) and, however full the blocks,
 * by the account updates they hold (`maxUpdates`), never below VERSION_CAP_FLOOR blocks; a
 * losing fork by `forkWindow`. Counted after many blocks, not timed.
 */
import { describe, expect, it } from '@jest/globals';
import { keccak } from '@monsoon/keccak';
import type { BlockHeader } from '@monsoon/protocol';
import { type ShardState, VERSION_CAP_FLOOR, type Version, VersionStore } from '@monsoon/storage-node';
import { toHex } from '@monsoon/util';

/** A version on `parent` changing `updates` accounts, told apart by `tag` (its state unused here). */
function version(number: bigint, updates: number, parent?: Version, tag = 0): Version {
  const hash = keccak.keccak256(Uint8Array.of(Number(number >> 8n), Number(number & 255n), tag));
  return {
    hash,
    id: toHex(hash),
    header: { number, parentHash: parent?.hash ?? new Uint8Array(32), difficulty: 0n } as BlockHeader,
    headerRlp: new Uint8Array(0),
    totalDifficulty: 0n,
    state: {} as ShardState,
    updates,
  };
}

/** Applies `blocks` blocks of `updates(n)` updates each, pruning after each; returns the store. */
function chain(
  opts: ConstructorParameters<typeof VersionStore>[1],
  blocks: number,
  updates: (n: number) => number,
) {
  let v = version(0n, 0);
  const store = new VersionStore(v, opts);
  for (let n = 1; n <= blocks; n++) {
    v = version(BigInt(n), updates(n), v);
    store.add(v);
    store.prune();
  }
  return store;
}

const held = (s: VersionStore) => s.all().reduce((n, v) => n + (v.updates ?? 0), 0);

describe('VersionStore', () => {
  it('holds at most maxUpdates account updates on the head chain, down to VERSION_CAP_FLOOR blocks', () => {
    // 100 updates a block: the 256-block window would hold 25,600.
    const capped = chain({ maxUpdates: 10_000 }, 1_000, () => 100);
    expect(held(capped)).toBeLessThanOrEqual(10_000);
    expect(capped.size).toBe(100);
    expect(capped.get({ kind: 'number', number: 901n })).toBeDefined();
    expect(capped.get({ kind: 'number', number: 900n })).toBeUndefined();

    // Very full blocks: the floor binds.
    const full = chain({ maxUpdates: 10_000 }, 1_000, () => 5_000);
    expect(full.size).toBe(VERSION_CAP_FLOOR);

    // Sparse blocks: the block window binds.
    const sparse = chain({ window: 200, maxUpdates: 10_000 }, 1_000, (n) => n % 3);
    expect(sparse.size).toBe(201);
  });

  it('keeps a losing fork only forkWindow blocks below the head', () => {
    let v = version(0n, 0);
    const store = new VersionStore(v, { window: 50, forkWindow: 5 });
    const fork = version(1n, 0, v, 9);
    for (let n = 1; n <= 20; n++) {
      v = version(BigInt(n), 1, v);
      store.add(v);
      if (n === 1) store.add(fork);
      store.prune();
      expect(store.byHash(fork.hash) !== undefined).toBe(n <= 6);
    }
    expect(store.size).toBe(21);
  });
});
