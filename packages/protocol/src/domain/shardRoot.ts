/** The shard counts a state can be split into: one or two nibbles of the hashed key (DESIGN.md §2). */
export const SHARD_COUNTS: readonly number[] = Object.freeze([16, 256]);

/** The root of one shard of the state trie. */
export interface ShardRoot {
  /** The shard index, below the shard count. */
  readonly shard: number;
  /** The root hash of the shard's subtree, 32 bytes. */
  readonly root: Uint8Array;
}
