import type { Bin } from './bytes.js';
import { LEAF, UNUSED, type UseMark } from './trieNode.js';

/**
 * A leaf: a key and its value. It stores the whole key, so its path at nibble depth d is
 * key[d..] and it caches nothing that depends on where it hangs: a leaf can move up or down
 * (a branch collapsing or splitting) unchanged. Its hash lives in its parent's encoding.
 */
export class LeafNode {
  declare readonly kind: typeof LEAF;
  /** Read since the last eviction pass (a CLOCK bit; see DsmTree.evictCold). Not content. */
  used: UseMark = UNUSED;
  constructor(
    /** The full key, as a binary string. */
    public key: Bin,
    /** The value, as a binary string (never empty). */
    public value: Bin,
    public gen: number,
  ) {}
}
(LeafNode.prototype as { kind: number }).kind = LEAF;
