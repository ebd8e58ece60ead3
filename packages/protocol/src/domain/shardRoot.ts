/** The shard counts a state can be split into: one or two nibbles of the hashed key (DESIGN.md §2). */
export const SHARD_COUNTS: readonly number[] = Object.freeze([16, 256]);

/** The root of one shard of the state trie. */
export interface ShardRoot {
  /** The shard index, below the shard count. */
  readonly shard: number;
  /**
   * How the state trie refers to the shard's subtree: its 32-byte hash; for a shard so small
   * its subtree encodes under 32 bytes, that encoding; empty for an empty shard.
   */
  readonly root: Uint8Array;
}
