/**
 * A tree's reads below a stub over node encodings, read in place: what DsmTree's get, prove,
 * proveMany and faultPath do from a stub down when the tree's source hands out encodings for
 * reads (VerifiedNodeSource.readBin). Nothing below the stub is decoded into node objects or put
 * into the tree, so a store that holds its cold nodes packed (a tiered storage node's cache of
 * encodings) answers reads and proofs without making objects for the garbage collector to trace
 * and promote. The answers are the tree's own: get's value; the proof nodes the tree writes, in
 * its order, with its levels left out (omitLevels counts embedded nodes as levels, as the tree
 * does) and each node once per proveMany; and a fault walk's misses (the source records them).
 * Each child is looked up by where its hash lies in its parent's bytes (no string made unless a
 * proveMany must tell nodes apart, or the node is missing). walkPath (a client's witnesses) is
 * the same walk from a root; this one starts at any stub and writes proofs.
 */

import { byteKeyAt } from '@monsoon/util';
import { type Bin, binToHex } from './bytes.js';
import { DsmError, DsmErrorCode } from './dsmError.js';
import { type VerifiedNodeSource, withoutStack } from './dsmTree.js';
import { keyNibble } from './nibbles.js';
import type { ByteWriter } from './nodeCodec.js';

/** A source that serves reads in place (see VerifiedNodeSource.readBin). */
export type PackedSource = VerifiedNodeSource & Required<Pick<VerifiedNodeSource, 'readBin'>>;

/** Where the last RLP header read (`rlpItem`) puts its item: payload [pos, end), a list or a string. */
let pos = 0;
let end = 0;
let list = false;

/** Where walk found the key's value: bytes [valueAt, valueEnd) of valueIn (undefined: none). */
let valueIn: Uint8Array | undefined;
let valueAt = 0;
let valueEnd = 0;
/** The node walk last found lacking, and its depth. */
let missRef: Bin = '';
let missDepth = 0;

function badNode(message: string): never {
  throw new DsmError(DsmErrorCode.BadNode, message);
}

/** Reads the RLP header at `at` (an item that must end by `limit`) into pos/end/list. */
function rlpItem(b: Uint8Array, at: number, limit: number): void {
  if (at >= limit) badNode('RLP item runs past its list');
  const p = b[at]!;
  if (p < 0x80) {
    pos = at;
    end = at + 1;
    list = false;
    return;
  }
  list = p >= 0xc0;
  const base = list ? 0xc0 : 0x80;
  if (p - base < 56) {
    pos = at + 1;
    end = pos + p - base;
  } else {
    const lenBytes = p - base - 55;
    let len = 0;
    for (let k = 1; k <= lenBytes; k++) len = len * 256 + b[at + k]!;
    pos = at + 1 + lenBytes;
    end = pos + len;
  }
  if (end > limit) badNode('RLP item runs past its list');
}

/** The stub's hash as bytes, for the walk's first lookup (every later one is in a parent's bytes). */
const first = Buffer.allocUnsafe(32);

/**
 * Walks `key`'s path from the node hash `ref` names, at nibble `depth` and proof level `level`.
 * With `w`: appends each hashed node at level ≥ `omitLevels` not in `seen` (then added to it, by
 * hash) to `w`, its end to `ends`. Leaves the value in valueIn/valueAt/valueEnd. Returns false
 * where the source lacks a node (its hash and depth in missRef/missDepth), true once the path ended.
 */
function walk(
  src: PackedSource,
  ref: Bin,
  key: Uint8Array,
  depth: number,
  level: number,
  w: ByteWriter | undefined,
  ends: number[] | undefined,
  seen: Set<unknown> | undefined,
  omitLevels: number,
): boolean {
  valueIn = undefined;
  const klen = key.length * 2;
  let d = depth;
  // The node's hash: 32 bytes at `hashAt` of `hashIn`.
  first.write(ref, 0, 32, 'latin1');
  let hashIn: Uint8Array = first;
  let hashAt = 0;
  for (;;) {
    // The hash as a string only for a proofs' dedup (before the source's call: the bytes it
    // handed out last may be reused by the next).
    const h =
      w !== undefined && seen !== undefined && level >= omitLevels
        ? byteKeyAt(hashIn, hashAt, hashAt + 32)
        : undefined;
    const b = src.readBin(hashIn, hashAt, key, d);
    if (b === undefined) {
      missRef = byteKeyAt(hashIn, hashAt, hashAt + 32);
      missDepth = d;
      return false;
    }
    const nodeAt = src.readAt ?? 0;
    rlpItem(b, nodeAt, b.length);
    if (!list) badNode('a trie node must be an RLP list');
    const nodeEnd = end;
    if (w !== undefined && level >= omitLevels) {
      if (h === undefined || !seen!.has(h)) {
        seen?.add(h);
        const len = nodeEnd - nodeAt;
        w.ensure(len);
        for (let i = 0; i < len; i++) w.buf[w.pos + i] = b[nodeAt + i]!;
        w.pos += len;
        ends!.push(w.pos);
      }
    }
    let from = pos;
    let to = nodeEnd;
    // This node and the nodes embedded in it, each a level: on to the next hash, or the end.
    for (;;) {
      level++;
      rlpItem(b, from, to);
      const firstAt = pos;
      const firstEnd = end;
      const firstList = list;
      rlpItem(b, firstEnd, to);
      if (end < to) {
        // A branch: its 17 items, the first two read.
        if (d === klen) {
          for (let i = 2; i <= 16; i++) rlpItem(b, end, to);
          if (end > pos) setValue(b);
          return true;
        }
        const n = keyNibble(key, d++);
        if (n === 0) rlpItem(b, from, to);
        for (let i = 2; i <= n; i++) rlpItem(b, end, to);
      } else {
        // A leaf or an extension: its hex-prefix path, then its value or child.
        if (firstList || firstEnd === firstAt) badNode('node path must be a non-empty byte string');
        const after = followPath(b, firstAt, firstEnd, key, d);
        if (leafPath) {
          if (after === klen) setValue(b);
          return true;
        }
        if (after < 0) return true;
        d = after;
      }
      // The child: embedded (read on in this node), empty, or a hash.
      if (list) {
        from = pos;
        to = end;
        continue;
      }
      if (end === pos) return true;
      if (end - pos !== 32) badNode(`a child reference of ${end - pos} bytes`);
      hashIn = b;
      hashAt = pos;
      break;
    }
  }
}

/** Whether the last path followPath read was a leaf's. */
let leafPath = false;

/**
 * The depth after the hex-prefix path at b[at, stop) (a leaf's or an extension's; leafPath says
 * which) when it is `key`'s nibbles from `d` on, else -1.
 */
function followPath(b: Uint8Array, at: number, stop: number, key: Uint8Array, d: number): number {
  const flag = b[at]! >> 4;
  leafPath = flag >= 2;
  if (d + (stop - at - 1) * 2 + (flag & 1) > key.length * 2) return -1;
  let n = d;
  if (flag & 1 && (b[at]! & 0x0f) !== keyNibble(key, n++)) return -1;
  for (let i = at + 1; i < stop; i++) {
    if (b[i]! >> 4 !== keyNibble(key, n) || (b[i]! & 0x0f) !== keyNibble(key, n + 1)) return -1;
    n += 2;
  }
  return n;
}

function setValue(b: Uint8Array): void {
  valueIn = b;
  valueAt = pos;
  valueEnd = end;
}

/** The MissingNode a tree throws for a stub its source lacks (see DsmTree.fault). */
function missing(): DsmError {
  const hash = binToHex(missRef);
  return withoutStack(
    () => new DsmError(DsmErrorCode.MissingNode, `node ${hash} is not in memory`, { hash, depth: missDepth }),
  );
}

/** DsmTree.get from the stub `ref` at nibble `depth`: the value (a copy), or undefined; MissingNode where the source lacks a node. */
export function getPacked(
  src: PackedSource,
  ref: Bin,
  key: Uint8Array,
  depth: number,
): Uint8Array | undefined {
  if (!walk(src, ref, key, depth, 0, undefined, undefined, undefined, 0)) throw missing();
  // A copy (a plain Uint8Array, as the tree's): the source's bytes may be a view of memory it reuses.
  return valueIn === undefined ? undefined : new Uint8Array(valueIn.subarray(valueAt, valueEnd));
}

/**
 * DsmTree.writeProof from the stub `ref` at nibble `depth` and level `level`: the proof's nodes
 * from there on appended to `w` (ends to `ends`), those in `seen` left out (hashes go in it);
 * MissingNode where the source lacks a node.
 */
export function provePacked(
  src: PackedSource,
  ref: Bin,
  key: Uint8Array,
  depth: number,
  level: number,
  omitLevels: number,
  w: ByteWriter,
  ends: number[],
  seen: Set<unknown> | undefined,
): void {
  if (!walk(src, ref, key, depth, level, w, ends, seen, omitLevels)) throw missing();
}

/** DsmTree.faultPath from the stub `ref` at nibble `depth`: asks the source for each node on the path, up to the first it lacks. */
export function reachPacked(src: PackedSource, ref: Bin, key: Uint8Array, depth: number): void {
  walk(src, ref, key, depth, 0, undefined, undefined, undefined, 0);
}
