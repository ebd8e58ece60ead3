import type { Bin } from './bytes.js';
import type { TrieNode } from './trieNode.js';
import { BRANCH } from './trieNode.js';

/** A branch: 16 children, one per nibble, and the value of a key that ends here. */
export class BranchNode {
  declare readonly kind: typeof BRANCH;
  constructor(
    public children: (TrieNode | undefined)[],
    public value: Bin | undefined,
    public gen: number,
    public ref: Bin | undefined = undefined,
  ) {}

  /** An empty branch owned by generation `gen`. */
  static empty(gen: number): BranchNode {
    return new BranchNode(new Array<TrieNode | undefined>(16).fill(undefined), undefined, gen);
  }
}
(BranchNode.prototype as { kind: number }).kind = BRANCH;
