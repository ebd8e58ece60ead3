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
 * proveMany must tell nodes apart, or the node is missing). The walk through each encoding is
 * walkPath.ts' `descend` (the one a client's per-root reads use); this one starts at any stub,
 * finds each next node by its hash's place in its parent and writes proofs.
 */

import { byteKeyAt } from '@monsoon/util';
import { type Bin, binToHex } from './bytes.js';
import { DsmError, DsmErrorCode } from './dsmError.js';
import { type VerifiedNodeSource, withoutStack } from './dsmTree.js';
import type { ByteWriter } from './nodeCodec.js';
import { descend, step } from './walkPath.js';

/** A source that serves reads in place (see VerifiedNodeSource.readBin). */
export type PackedSource = VerifiedNodeSource & Required<Pick<VerifiedNodeSource, 'readBin'>>;

/** Where walk found the key's value: bytes [valueAt, valueEnd) of valueIn (undefined: none). */
let valueIn: Uint8Array | undefined;
let valueAt = 0;
let valueEnd = 0;
/** The node walk last found lacking, and its depth. */
let missRef: Bin = '';
let missDepth = 0;

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
    // As a small integer: a source's offset computed through floats (a NodeCache's) would make
    // descend, which walkPath shares, handle positions as doubles for every caller.
    const nodeAt = (src.readAt ?? 0) | 0;
    // This node and the nodes embedded in it, each a level: on to the next hash, or the end.
    d = descend(b, nodeAt, key, d);
    if (w !== undefined && level >= omitLevels) {
      if (h === undefined || !seen!.has(h)) {
        seen?.add(h);
        const len = step.nodeEnd - nodeAt;
        w.ensure(len);
        for (let i = 0; i < len; i++) w.buf[w.pos + i] = b[nodeAt + i]!;
        w.pos += len;
        ends!.push(w.pos);
      }
    }
    if (d < 0) {
      if (step.valueEnd >= 0) {
        valueIn = b;
        valueAt = step.valueAt;
        valueEnd = step.valueEnd;
      }
      return true;
    }
    level += step.levels;
    hashIn = b;
    hashAt = step.childAt;
  }
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
