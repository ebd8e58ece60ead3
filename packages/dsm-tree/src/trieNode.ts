/**
 * The four node kinds of the DSM-Tree. Nodes are plain objects linked by pointers; traversal
 * never hashes or looks anything up by hash.
 *
 * Hashes live in parents: a branch or extension keeps its own RLP encoding from the last commit
 * (`enc`), which holds its children's hashes (or, for children under 32 bytes, their whole
 * encodings). A write marks the changed slot in each ancestor (`BranchNode.mask`,
 * `ExtensionNode.changed`); a commit re-encodes exactly the marked nodes, copying the unchanged
 * slots from the old encoding, so it never loads an unchanged child. Leaves cache nothing.
 *
 * `gen` implements copy-on-write: a tree may mutate a node in place only when the node's `gen`
 * equals the tree's current generation; `snapshot()` moves both trees to fresh generations, so
 * every node reachable from a snapshot is frozen from then on. (A commit may still store the
 * encoding of a frozen node: that is the same for every tree that reaches it.)
 */
import type { BranchNode } from './branchNode.js';
import type { ExtensionNode } from './extensionNode.js';
import type { HashNode } from './hashNode.js';
import type { LeafNode } from './leafNode.js';

export const BRANCH = 0;
export const EXTENSION = 1;
export const LEAF = 2;
export const STUB = 3;

export type TrieNode = BranchNode | ExtensionNode | LeafNode | HashNode;
export type InnerNode = BranchNode | ExtensionNode | LeafNode;

/**
 * A node's read mark (`used`), a small integer so the field never changes representation (a
 * boolean field that once held a number had V8 migrate every node object it met afterwards):
 * UNUSED, USED (read since the last eviction pass: see DsmTree.evictCold), or IN_BAG while a
 * proveMany builds its bag and the node is in it already (see DsmTree.writeProof; a read too,
 * cleared back to USED when the call ends, so no node carries it between calls). Truthy when read.
 */
export const UNUSED = 0;
export const USED = 1;
export const IN_BAG = 2;
export type UseMark = typeof UNUSED | typeof USED | typeof IN_BAG;

/** Generation 0 is never a tree's: nodes decoded from bytes are frozen from birth. */
export const FROZEN_GEN = 0;

let lastGen = FROZEN_GEN;
/** A fresh generation number for a tree. */
export function nextGen(): number {
  return ++lastGen;
}
