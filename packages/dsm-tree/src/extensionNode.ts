import type { Bin } from './bytes.js';
import type { TrieNode } from './trieNode.js';
import { EXTENSION } from './trieNode.js';

/** An extension: a shared run of nibbles leading to one child (a branch, in canonical form). */
export class ExtensionNode {
  declare readonly kind: typeof EXTENSION;
  constructor(
    /** The nibbles, one char (code 0–15) each; never empty. */
    public path: string,
    public child: TrieNode,
    public gen: number,
    public ref: Bin | undefined = undefined,
  ) {}
}
(ExtensionNode.prototype as { kind: number }).kind = EXTENSION;
