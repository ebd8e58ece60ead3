/**
 * A key's path walked over node encodings found by hash, read in place: no trie nodes are built
 * and nothing is hashed. A source that holds each node under the hash it computed for it (a
 * NodeBag, a client's cache of checked answers) can only hand out the node a hash names, so the
 * walk, started at a root, reads what that root commits to. It is handed exactly the nodes a
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
  const klen = key.length * 2;
  let d = 0;
  let ref: Bin = root;
  for (;;) {
    const b = getBin(ref);
    if (b === undefined) return undefined;
    hashes.push(ref);
    nodes.push(b);
    header(b, 0, b.length);
    if (!isList) bad('a trie node must be an RLP list');
    let start = at;
    let stop = end;
    // Inside one node (and the nodes embedded in it): on to the next hash, or the value.
    for (;;) {
      header(b, start, stop);
      const firstAt = at;
      const firstEnd = end;
      const firstList = isList;
      header(b, firstEnd, stop);
      if (end < stop) {
        // A branch: 17 items, the first two read.
        if (d === klen) {
          for (let i = 2; i <= 16; i++) header(b, end, stop);
          return { value: end > at ? b.subarray(at, end) : undefined, hashes, nodes };
        }
        const n = keyNibble(key, d++);
        if (n === 0) header(b, start, stop);
        for (let i = 2; i <= n; i++) header(b, end, stop);
      } else {
        // A leaf or an extension: the hex-prefixed path, then the value or the child.
        if (firstList || firstEnd === firstAt) bad('node path must be a non-empty byte string');
        const flag = b[firstAt]! >> 4;
        const odd = flag & 1;
        const plen = (firstEnd - firstAt - 1) * 2 + odd;
        let matches = klen - d >= plen;
        for (let i = 0; matches && i < plen; i++) {
          const p = i + (odd ? 1 : 2);
          const byte = b[firstAt + (p >> 1)]!;
          if ((p & 1 ? byte & 0x0f : byte >> 4) !== keyNibble(key, d + i)) matches = false;
        }
        if (flag >= 2) {
          const found = matches && d + plen === klen;
          return { value: found ? b.subarray(at, end) : undefined, hashes, nodes };
        }
        if (!matches) return { value: undefined, hashes, nodes };
        d += plen;
      }
      // The child at at/end (its header read last).
      if (isList) {
        start = at;
        stop = end;
        continue;
      }
      if (end === at) return { value: undefined, hashes, nodes };
      if (end - at !== 32) bad(`a child reference of ${end - at} bytes`);
      ref = byteKeyAt(b, at, at + 32);
      break;
    }
  }
}
