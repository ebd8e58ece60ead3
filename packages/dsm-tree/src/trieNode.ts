/**
 * The four node kinds of the DSM-Tree. Nodes are plain objects linked by pointers; traversal
 * never hashes or looks anything up by hash.
 *
 * Every node but a stub caches `ref`: what its parent embeds for it, i.e. keccak256 of its RLP
 * encoding (a 32-char binary string) or, when that encoding is shorter than 32 bytes, the encoding
 * itself. `ref === undefined` means dirty. A dirty node's ancestors are always dirty too.
 *
 * `gen` implements copy-on-write: a tree may mutate a node in place only when the node's `gen`
 * equals the tree's current generation; `snapshot()` moves both trees to fresh generations, so
 * every node reachable from a snapshot is frozen from then on.
 *
 * A leaf stores its whole key, not just the remainder: its path at nibble depth d is key[d..].
 * Its encoding therefore depends on where it hangs, so a leaf that moves to another depth is
 * re-created (or, when owned, re-dirtied) rather than reused with a stale `ref`.
 */
import type { BranchNode } from './branchNode.js';
import type { Bin } from './bytes.js';
import type { ExtensionNode } from './extensionNode.js';
import type { HashNode } from './hashNode.js';
import type { LeafNode } from './leafNode.js';

export const BRANCH = 0;
export const EXTENSION = 1;
export const LEAF = 2;
export const STUB = 3;

export type TrieNode = BranchNode | ExtensionNode | LeafNode | HashNode;
export type InnerNode = BranchNode | ExtensionNode | LeafNode;

/** Generation 0 is never a tree's: nodes decoded from bytes are frozen from birth. */
export const FROZEN_GEN = 0;

let lastGen = FROZEN_GEN;
/** A fresh generation number for a tree. */
export function nextGen(): number {
  return ++lastGen;
}

/** True when `ref` is a hash (as opposed to an embedded encoding). */
export function isHashRef(ref: Bin): boolean {
  return ref.length === 32;
}
