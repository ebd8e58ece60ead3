/**
 * A key's path walked over node encodings, read in place: no trie nodes are built and nothing is
 * hashed. `descend` is the walk through one encoding (a node and the nodes embedded in it) that
 * both walkers here share; `walkPath` walks from a root over nodes found by hash (a client's
 * per-root reads), readPacked.ts from a stub over a store's cached encodings (a tiered node's
 * reads and proofs). A source that holds each node under the hash it computed for it (a NodeBag,
 * a client's cache of checked answers) can only hand out the node a hash names, so the walk,
 * started at a root, reads what that root commits to. walkPath is handed exactly the nodes a
 * tree reading the key from that source is handed (root first, down to where the key's path ends
 * or leaves the trie), which is what a client's witness of the read is.
 */

import { byteKeyAt } from '@monsoon/util';
import type { Bin } from './bytes.js';
import { DsmError, DsmErrorCode } from './dsmError.js';
import { keyNibble } from './nibbles.js';

/** What a walk read: the key's value (undefined: not in the trie) and the nodes handed to it, root first. */
export interface WalkedPath {
  readonly value: Uint8Array | undefined;
  /** The nodes' hashes (32-char binary strings), as the source was asked for them. */
  readonly hashes: Bin[];
  readonly nodes: Uint8Array[];
}

/** Where the last header read (see `header`) puts its item: data at [at, end), a list or a string. */
let at = 0;
let end = 0;
let isList = false;

function bad(message: string): never {
  throw new DsmError(DsmErrorCode.BadNode, message);
}

/** Reads the RLP header at `pos` (no further than `limit`) into at/end/isList. */
function header(b: Uint8Array, pos: number, limit: number): void {
  if (pos >= limit) bad('RLP item runs past its list');
  const p = b[pos]!;
  let len: number;
  if (p < 0x80) {
    at = pos;
    end = pos + 1;
    isList = false;
    return;
  }
  if (p < 0xb8 || (p >= 0xc0 && p < 0xf8)) {
    isList = p >= 0xc0;
    at = pos + 1;
    len = p - (isList ? 0xc0 : 0x80);
  } else {
    isList = p >= 0xf8;
    const ll = p - (isList ? 0xf7 : 0xb7);
    len = 0;
    for (let i = 1; i <= ll; i++) len = len * 256 + b[pos + i]!;
    at = pos + 1 + ll;
  }
  end = at + len;
  if (end > limit) bad('RLP item runs past its list');
}

/**
 * What the last `descend` read in its encoding, valid until the next call: where the node's
 * list ends (`nodeEnd`), how many nodes it went through (`levels`: the node and those embedded
 * in it, each a proof level), and where the path went on (`childAt`: the next node's 32-byte
 * hash, when descend returned a depth) or the key's value (bytes [valueAt, valueEnd); valueEnd
 * -1: the key has none).
 */
export const step = { nodeEnd: 0, levels: 0, childAt: 0, valueAt: 0, valueEnd: -1 };

/**
 * Walks `key`'s path from nibble `d` through the node whose encoding (an RLP list) starts at
 * `b[nodeAt]`, and the nodes embedded in it. Returns the nibble depth at the next node, whose
 * hash is the 32 bytes at step.childAt of `b`; or -1 where the path ends in this encoding (its
 * value, if any, in step.valueAt/valueEnd). Throws DsmError BAD_NODE for bytes that are no trie
 * node (which a node's own hash rules out).
 */
export function descend(b: Uint8Array, nodeAt: number, key: Uint8Array, d: number): number {
  const s = step;
  const klen = key.length * 2;
  header(b, nodeAt, b.length);
  if (!isList) bad('a trie node must be an RLP list');
  s.nodeEnd = end;
  s.valueEnd = -1;
  let levels = 0;
  let from = at;
  let to = end;
  for (;;) {
    levels++;
    header(b, from, to);
    const firstAt = at;
    const firstEnd = end;
    const firstList = isList;
    header(b, firstEnd, to);
    if (end < to) {
      // A branch: 17 items, the first two read.
      if (d === klen) {
        for (let i = 2; i <= 16; i++) header(b, end, to);
        if (end > at) found(at, end);
        break;
      }
      const n = keyNibble(key, d++);
      if (n === 0) header(b, from, to);
      for (let i = 2; i <= n; i++) header(b, end, to);
    } else {
      // A leaf or an extension: the hex-prefixed path, then the value or the child.
      if (firstList || firstEnd === firstAt) bad('node path must be a non-empty byte string');
      const flag = b[firstAt]! >> 4;
      const after = followPath(b, firstAt, firstEnd, key, d);
      if (flag >= 2) {
        if (after === klen) found(at, end);
        break;
      }
      if (after < 0) break;
      d = after;
    }
    // The child: embedded (read on in this encoding), empty, or a hash.
    if (isList) {
      from = at;
      to = end;
      continue;
    }
    if (end === at) break;
    if (end - at !== 32) bad(`a child reference of ${end - at} bytes`);
    s.levels = levels;
    s.childAt = at;
    return d;
  }
  s.levels = levels;
  return -1;
}

function found(from: number, to: number): void {
  step.valueAt = from;
  step.valueEnd = to;
}

/**
 * The depth after the hex-prefix path at b[at, stop) (a leaf's or an extension's) when it is
 * `key`'s nibbles from `d` on, else -1.
 */
function followPath(b: Uint8Array, at: number, stop: number, key: Uint8Array, d: number): number {
  const first = b[at]!;
  if (d + (stop - at - 1) * 2 + ((first >> 4) & 1) > key.length * 2) return -1;
  let n = d;
  if (first & 0x10 && (first & 0x0f) !== keyNibble(key, n++)) return -1;
  for (let i = at + 1; i < stop; i++) {
    if (b[i]! >> 4 !== keyNibble(key, n) || (b[i]! & 0x0f) !== keyNibble(key, n + 1)) return -1;
    n += 2;
  }
  return n;
}

/**
 * Walks `key`'s path from the node with hash `root`, each node asked of `getBin` by its hash.
 * Undefined when `getBin` lacks a node on the path (nothing is read further).
 * Throws DsmError BAD_NODE for bytes that are no trie node (which a node's own hash rules out).
 */
export function walkPath(
  root: Bin,
  key: Uint8Array,
  getBin: (hash: Bin) => Uint8Array | undefined,
): WalkedPath | undefined {
  const hashes: Bin[] = [];
  const nodes: Uint8Array[] = [];
  let d = 0;
  let ref: Bin = root;
  for (;;) {
    const b = getBin(ref);
    if (b === undefined) return undefined;
    hashes.push(ref);
    nodes.push(b);
    d = descend(b, 0, key, d);
    if (d < 0) {
      const value = step.valueEnd < 0 ? undefined : b.subarray(step.valueAt, step.valueEnd);
      return { value, hashes, nodes };
    }
    ref = byteKeyAt(b, step.childAt, step.childAt + 32);
  }
}
