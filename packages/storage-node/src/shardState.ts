/**
 * One version of a storage node's state: the full state trie, holding the accounts (with their
 * storage and code) of the node's own shards, and only the roots of all other shards. Its root
 * is therefore the chain's state root, which is how a block's state root is checked against the
 * shard roots the miner sent. Versions share structure (copy-on-write); `apply` never changes
 * the version it starts from.
 */

import { DsmTree, StateTree, toHex } from '@monsoon/dsm-tree';
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import {
  applyAccountUpdate,
  type GenesisAccount,
  insertGenesisAccount,
  type ShardLayout,
  type ShardUpdate,
} from '@monsoon/protocol';
import { StorageError, StorageErrorCode } from './storageError.js';

/** A 32-byte stand-in for a subtree no one will read (it only shapes the skeleton). */
const PLACEHOLDER = new Uint8Array(32).fill(0xee);

export class ShardState {
  private constructor(
    readonly layout: ShardLayout,
    /** Shards this node holds, ascending. */
    readonly owned: readonly number[],
    readonly state: StateTree,
    private readonly ownedSet: ReadonlySet<number>,
  ) {}

  /**
   * The genesis state of `owned` shards. Accounts of other shards are only hashed (one shard at
   * a time) to get their shard roots; none of them is kept.
   */
  static fromGenesis(
    alloc: readonly GenesisAccount[],
    layout: ShardLayout,
    owned: readonly number[],
    opts: { hash?: Keccak } = {},
  ): ShardState {
    const keccak = opts.hash ?? defaultKeccak;
    const ownedSet = new Set(owned);
    const byShard = new Map<number, GenesisAccount[]>();
    for (const a of alloc) {
      const s = layout.shardOfKey(keccak.keccak256(a.address));
      const list = byShard.get(s);
      if (list === undefined) byShard.set(s, [a]);
      else list.push(a);
    }
    ShardState.checkShardable(layout, (s) => (byShard.get(s)?.length ?? 0) > 0);
    const accounts = new DsmTree({ hash: keccak });
    for (const s of layout.all()) {
      if (ownedSet.has(s)) continue;
      accounts.graft(layout.path(s), ShardState.shardRootOf(byShard.get(s) ?? [], s, layout, keccak));
    }
    const state = new StateTree({ hash: keccak }, accounts);
    for (const s of owned) for (const a of byShard.get(s) ?? []) insertGenesisAccount(state, a);
    return new ShardState(
      layout,
      [...owned].sort((a, b) => a - b),
      state,
      ownedSet,
    );
  }

  /**
   * A state can be sharded only when every node above the shards is a branch: at least two
   * non-empty shards (16), and under each first nibble none or at least two (256). Otherwise
   * the real trie has a leaf or extension where the shards would hang, and no set of shard
   * roots describes it. Refused with BadGenesis saying why.
   */
  static checkShardable(layout: ShardLayout, nonEmpty: (shard: number) => boolean): void {
    const top = new Set<number>();
    const under = new Map<number, number>();
    for (const s of layout.all()) {
      if (!nonEmpty(s)) continue;
      const first = layout.path(s)[0]!;
      top.add(first);
      under.set(first, (under.get(first) ?? 0) + 1);
    }
    const lonely = layout.depth === 2 ? [...under].filter(([, n]) => n === 1).map(([f]) => f) : [];
    if (top.size < 2 || lonely.length > 0) {
      throw new StorageError(
        StorageErrorCode.BadGenesis,
        top.size < 2
          ? `the state has accounts under ${top.size} first nibble(s); ${layout.count} shards need at least two`
          : `first nibble(s) ${lonely.join(', ')} hold a single non-empty shard, so the trie has no branch there to hang ${layout.count} shards from; use 16 shards or a larger state`,
      );
    }
  }

  /** A state from a checkpoint (its trie already holds the grafted shard roots). */
  static restore(layout: ShardLayout, owned: readonly number[], state: StateTree): ShardState {
    return new ShardState(
      layout,
      [...owned].sort((a, b) => a - b),
      state,
      new Set(owned),
    );
  }

  /** The root of shard `s` holding exactly `accounts`. */
  private static shardRootOf(
    accounts: readonly GenesisAccount[],
    s: number,
    layout: ShardLayout,
    keccak: Keccak,
  ): Uint8Array | undefined {
    if (accounts.length === 0) return undefined;
    const skeleton = new DsmTree({ hash: keccak });
    for (const o of layout.all()) if (o !== s) skeleton.graft(layout.path(o), PLACEHOLDER);
    const temp = new StateTree({ hash: keccak }, skeleton);
    for (const a of accounts) insertGenesisAccount(temp, a);
    temp.rootBin();
    return temp.accounts.refAt(layout.path(s));
  }

  /** Every shard's root: 32-byte hash, shorter embedded node, or undefined when empty. */
  shardRoots(): (Uint8Array | undefined)[] {
    this.state.rootBin();
    return this.layout.all().map((s) => this.state.accounts.refAt(this.layout.path(s)));
  }

  /** The state root. */
  root(): Uint8Array {
    return this.state.root();
  }

  /** True when this node holds the account with this trie key. */
  holdsKey(key: Uint8Array): boolean {
    return this.ownedSet.has(this.layout.shardOfKey(key));
  }

  /**
   * The next version: `updates` applied to this node's shards, every other shard set to its
   * root in `expectedRoots` (indexed by shard), then checked: own shards must end at their
   * expected roots and the whole at `stateRoot`. Throws a StorageError (WrongShard,
   * ShardRootMismatch, StateRootMismatch) and leaves nothing behind when a check fails.
   */
  apply(
    updates: readonly ShardUpdate[],
    expectedRoots: readonly (Uint8Array | undefined)[],
    stateRoot: Uint8Array,
  ): ShardState {
    const next = this.state.snapshot();
    for (const u of updates) {
      if (!this.ownedSet.has(u.shard)) {
        throw new StorageError(
          StorageErrorCode.WrongShard,
          `updates for shard ${u.shard}, which this node does not hold`,
          {
            shard: u.shard,
          },
        );
      }
      // The accounts' trie keys in one call: each checks its shard, then places its update.
      const keys = next.keccak.keccak256Batch(u.accounts.map((a) => a.address));
      for (let i = 0; i < u.accounts.length; i++) {
        const a = u.accounts[i]!;
        const key = keys.subarray(32 * i, 32 * i + 32);
        const s = this.layout.shardOfKey(key);
        if (s !== u.shard) {
          throw new StorageError(
            StorageErrorCode.WrongShard,
            `account 0x${toHex(a.address)} is in shard ${s}, listed under shard ${u.shard}`,
            { address: toHex(a.address), shard: s, listed: u.shard },
          );
        }
        applyAccountUpdate(next, a, key);
      }
    }
    for (const s of this.layout.all()) {
      if (!this.ownedSet.has(s)) next.accounts.graft(this.layout.path(s), expectedRoots[s]);
    }
    const root = next.root();
    for (const s of this.owned) {
      const got = next.accounts.refAt(this.layout.path(s));
      const want = expectedRoots[s];
      if (toHex(got ?? new Uint8Array(0)) !== toHex(want ?? new Uint8Array(0))) {
        throw new StorageError(
          StorageErrorCode.ShardRootMismatch,
          `shard ${s} ends at ${got ? toHex(got) : 'empty'}, the block expects ${want ? toHex(want) : 'empty'}`,
          { shard: s, found: got ? toHex(got) : '', expected: want ? toHex(want) : '' },
        );
      }
    }
    if (toHex(root) !== toHex(stateRoot)) {
      throw new StorageError(
        StorageErrorCode.StateRootMismatch,
        `the shard roots give state root ${toHex(root)}, the header says ${toHex(stateRoot)}`,
        { found: toHex(root), expected: toHex(stateRoot) },
      );
    }
    return new ShardState(this.layout, this.owned, next, this.ownedSet);
  }
}
