/**
 * The seam between a storage node's versions and the places its trie nodes live besides the
 * in-memory trees: a tiered backend writing cold nodes to LevelDB, a one-sided export placing
 * them in a memory region clients read. Both are content-addressed (node hash → RLP encoding),
 * so what they need from the node is the same: every node once when the node starts, then the
 * nodes each new version creates, then which versions are still held (for reclaiming the nodes
 * none of them reaches).
 */
import type { Version } from '../versionStore.js';

/** A node as a store keeps it: keccak256 and RLP encoding, binary strings (latin1, one char per byte). */
export interface FreshNode {
  readonly hash: string;
  readonly enc: string;
}

/** Told of a storage node's versions as they come and go. */
export interface VersionObserver {
  /**
   * The node starts from `v` (genesis, a restored checkpoint). Every node of it is available
   * through `v.state.state.forEachNode`. Called once, before any block is applied.
   */
  start(v: Version): Promise<void> | void;
  /**
   * A block passed every check and is logged; its version is about to be installed. `fresh`:
   * the hashed nodes it created, children before parents (the same node may repeat). The block is
   * acknowledged only after this resolves, and refused (nothing installed) if it rejects.
   */
  adding(v: Version, fresh: readonly FreshNode[]): Promise<void> | void;
  /** Versions that fell out of the windows, and those still held after they went. */
  dropped(gone: readonly Version[], held: readonly Version[]): void;
  /** The node is closing: finish what is pending. */
  close(): Promise<void>;
}
