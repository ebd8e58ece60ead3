import type { Bin } from './bytes.js';
import type { TrieNode, UseMark } from './trieNode.js';
import { EXTENSION, UNUSED } from './trieNode.js';

/**
 * An extension: a shared run of nibbles leading to one child (a branch, in canonical form).
 * Like a branch, it keeps its encoding (with its child's hash) from the last commit in `enc`;
 * `changed` is set when its child was replaced since.
 */
export class ExtensionNode {
  declare readonly kind: typeof EXTENSION;
  enc: Bin | undefined = undefined;
  changed = false;
  /** Read since the last eviction pass (a CLOCK bit; see DsmTree.evictCold). Not content. */
  used: UseMark = UNUSED;

  constructor(
    /** The nibbles, one char (code 0–15) each; never empty. */
    public path: string,
    public child: TrieNode,
    public gen: number,
  ) {}

  /** A copy owned by `gen`, with the same encoding and change flag. */
  copy(gen: number): ExtensionNode {
    const e = new ExtensionNode(this.path, this.child, gen);
    e.enc = this.enc;
    e.changed = this.changed;
    return e;
  }

  /** True when the extension must be re-encoded. */
  get dirty(): boolean {
    return this.changed || this.enc === undefined;
  }
}
(ExtensionNode.prototype as { kind: number }).kind = EXTENSION;
