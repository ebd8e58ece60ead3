import type { Bin } from './bytes.js';
import { STUB } from './trieNode.js';

/**
 * A hash stub: a node known only by its hash (pruned, evicted, or not yet fetched). Immutable.
 * Reaching one on a read or write either resolves it (from a node bag or resolver, checked by
 * hash) or fails with a typed MissingNode error naming the hash.
 */
export class HashNode {
  declare readonly kind: typeof STUB;
  constructor(
    /** keccak256 of the node's encoding, as a 32-char binary string. */
    public readonly ref: Bin,
  ) {}
}
(HashNode.prototype as { kind: number }).kind = STUB;
