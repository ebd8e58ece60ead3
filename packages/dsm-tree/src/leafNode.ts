import type { Bin } from './bytes.js';
import { LEAF } from './trieNode.js';

/** A leaf: the rest of the key's path and a value. Stores the whole key (see trieNode.ts). */
export class LeafNode {
  declare readonly kind: typeof LEAF;
  constructor(
    /** The full key, as a binary string. */
    public key: Bin,
    /** The value, as a binary string (never empty). */
    public value: Bin,
    public gen: number,
    public ref: Bin | undefined = undefined,
  ) {}
}
(LeafNode.prototype as { kind: number }).kind = LEAF;
