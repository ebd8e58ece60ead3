/**
 * RLP encoding and decoding of trie nodes, exactly as Ethereum lays them out:
 * branch = [c0 … c15, value], extension = [hp(path, 0), child], leaf = [hp(path, 2), value],
 * where a child is embedded when its encoding is shorter than 32 bytes and referenced by
 * keccak256 otherwise.
 */

import { listItems, type RlpSpan, readWhole, stringHeaderLength, writeHeader } from '@monsoon/util';
import { BranchNode } from './branchNode.js';
import type { Bin } from './bytes.js';
import { asTreeError, DsmError, DsmErrorCode } from './dsmError.js';
import { ExtensionNode } from './extensionNode.js';
import { HashNode } from './hashNode.js';
import { LeafNode } from './leafNode.js';
import { binNibble, keyNibble, nibblesToBin } from './nibbles.js';
import { EXTENSION, FROZEN_GEN, type InnerNode, LEAF, type TrieNode } from './trieNode.js';

/** A growable scratch buffer the encoders write into. */
export class ByteWriter {
  buf: Buffer;
  pos = 0;
  constructor(initial = 1 << 16) {
    this.buf = Buffer.allocUnsafe(initial);
  }
  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  /** Writes a binary string. */
  bin(s: Bin): void {
    this.ensure(s.length);
    this.pos += this.buf.write(s, this.pos, 'latin1');
  }
}

/** Bytes a child reference takes in its parent: a hash (0xa0 + 32) or an embedded encoding. */
export function refSize(ref: Bin): number {
  return ref.length === 32 ? 33 : ref.length;
}

/** Writes a child reference (see refSize). */
export function writeRef(w: ByteWriter, ref: Bin): void {
  w.ensure(33);
  if (ref.length === 32) w.buf[w.pos++] = 0xa0;
  w.pos += w.buf.write(ref, w.pos, 'latin1');
}

/** Writes 0xa0 and leaves 32 bytes for a hash not known yet; returns where they go. */
export function writeHole(w: ByteWriter): number {
  w.ensure(33);
  w.buf[w.pos++] = 0xa0;
  const hole = w.pos;
  w.pos += 32;
  return hole;
}

/** Encoded size of a byte string held as a binary string. */
export function binStringSize(s: Bin): number {
  return stringHeaderLength(s.length, s.charCodeAt(0)) + s.length;
}

function writeBinString(w: ByteWriter, s: Bin): void {
  if (!(s.length === 1 && s.charCodeAt(0) < 0x80)) w.pos = writeHeader(w.buf, w.pos, s.length, 0x80);
  w.pos += w.buf.write(s, w.pos, 'latin1');
}

/** Encodes a leaf at nibble `depth` (its path is key[depth..]); returns the length. */
export function writeLeaf(w: ByteWriter, leaf: LeafNode, depth: number): number {
  const key = leaf.key;
  // hp(path, leaf): a flag byte (with the first nibble when the path is odd), then whole key
  // bytes: a key has an even number of nibbles, so what follows the flag is byte-aligned.
  const from = (depth + 1) >> 1;
  const hpLen = 1 + key.length - from;
  const payload = stringHeaderLength(hpLen, 0x20) + hpLen + binStringSize(leaf.value);
  w.ensure(payload + 9);
  const start = w.pos;
  w.pos = writeHeader(w.buf, w.pos, payload, 0xc0);
  if (hpLen > 1) w.pos = writeHeader(w.buf, w.pos, hpLen, 0x80);
  const buf = w.buf;
  let pos = w.pos;
  buf[pos++] = depth & 1 ? 0x30 | binNibble(key, depth) : 0x20;
  for (let i = from; i < key.length; i++) buf[pos++] = key.charCodeAt(i);
  w.pos = pos;
  writeBinString(w, leaf.value);
  return w.pos - start;
}

/**
 * Encodes an extension whose child reference is `ref`, or a hole when `ref` is undefined
 * (returned as `hole`). Returns the length.
 */
export function writeExtension(
  w: ByteWriter,
  path: string,
  ref: Bin | undefined,
): { len: number; hole: number } {
  const hpLen = (path.length >> 1) + 1;
  const payload = stringHeaderLength(hpLen, 0) + hpLen + (ref === undefined ? 33 : refSize(ref));
  w.ensure(payload + 9);
  const start = w.pos;
  w.pos = writeHeader(w.buf, w.pos, payload, 0xc0);
  if (hpLen > 1) w.pos = writeHeader(w.buf, w.pos, hpLen, 0x80); // a lone 0x1n byte needs none
  const buf = w.buf;
  let i = 0;
  if (path.length & 1) {
    buf[w.pos++] = 0x10 | path.charCodeAt(0);
    i = 1;
  } else {
    buf[w.pos++] = 0;
  }
  for (; i < path.length; i += 2) buf[w.pos++] = (path.charCodeAt(i) << 4) | path.charCodeAt(i + 1);
  let hole = -1;
  if (ref === undefined) hole = writeHole(w);
  else writeRef(w, ref);
  return { len: w.pos - start, hole };
}

/** Size of a branch's list header for a payload of `len` bytes. */
export function listHeaderSize(len: number): number {
  return len < 56 ? 1 : len < 256 ? 2 : 3;
}

/**
 * Where the 17 items of a branch encoding start (offsets[0..16]) and where the last ends
 * (offsets[17]), relative to the start of the encoding. The encoding is one we made or
 * checked, so this trusts its shape.
 */
export function branchSpans(enc: Bin, offsets: Int32Array): void {
  const p = enc.charCodeAt(0);
  let pos = p < 0xf8 ? 1 : 1 + (p - 0xf7);
  for (let i = 0; i < 17; i++) {
    offsets[i] = pos;
    const b = enc.charCodeAt(pos);
    if (b < 0x80) pos += 1;
    else if (b <= 0xb7) pos += 1 + b - 0x80;
    else if (b < 0xc0) {
      const n = b - 0xb7;
      let len = 0;
      for (let k = 1; k <= n; k++) len = len * 256 + enc.charCodeAt(pos + k);
      pos += 1 + n + len;
    } else if (b <= 0xf7) pos += 1 + b - 0xc0;
    else {
      const n = b - 0xf7;
      let len = 0;
      for (let k = 1; k <= n; k++) len = len * 256 + enc.charCodeAt(pos + k);
      pos += 1 + n + len;
    }
  }
  offsets[17] = pos;
}

/**
 * The 32-byte hash by which slot i of a branch encoding refers to its child, given the
 * encoding's `spans` (from branchSpans); undefined for an empty or embedded child.
 */
export function slotHash(enc: Bin, spans: Int32Array, i: number): Bin | undefined {
  const a = spans[i]!;
  const b = spans[i + 1]!;
  return b - a === 33 && enc.charCodeAt(a) === 0xa0 ? enc.slice(a + 1, b) : undefined;
}

/**
 * The reference a branch's encoding holds for child i: its 32-byte hash or its embedded
 * encoding; undefined for an empty slot.
 */
export function branchChildRef(enc: Bin, i: number, scratch: Int32Array): Bin | undefined {
  branchSpans(enc, scratch);
  const a = scratch[i]!;
  const b = scratch[i + 1]!;
  if (b - a === 1 && enc.charCodeAt(a) === 0x80) return undefined;
  return slotHash(enc, scratch, i) ?? enc.slice(a, b);
}

/** The reference an extension's encoding holds for its child. */
export function extensionChildRef(enc: Bin): Bin {
  const p = enc.charCodeAt(0);
  let pos = p < 0xf8 ? 1 : 1 + (p - 0xf7);
  const h = enc.charCodeAt(pos);
  pos += h < 0x80 ? 1 : 1 + h - 0x80; // hp is a short string
  return enc.charCodeAt(pos) === 0xa0 && enc.length - pos === 33 ? enc.slice(pos + 1) : enc.slice(pos);
}

/**
 * The hashes a trie node's encoding names its children by: a branch's hashed slots, an
 * extension's child when hashed; none for a leaf (an embedded child is shorter than a hash and
 * names none). Throws BAD_NODE on an encoding that is not a trie node.
 */
export function hashedChildren(enc: Uint8Array): Uint8Array[] {
  try {
    const items = listItems(enc, readWhole(enc));
    const hashed = (s: RlpSpan) => !s.list && s.end - s.dataStart === 32;
    if (items.length === 17)
      return items
        .slice(0, 16)
        .filter(hashed)
        .map((s) => enc.subarray(s.dataStart, s.end));
    if (items.length !== 2 || items[0]!.list || items[0]!.end === items[0]!.dataStart)
      return badNode(`a trie node of ${items.length} items`);
    const isExtension = enc[items[0]!.dataStart]! >> 4 < 2;
    return isExtension && hashed(items[1]!) ? [enc.subarray(items[1]!.dataStart, items[1]!.end)] : [];
  } catch (e) {
    throw asTreeError(e);
  }
}

function badNode(message: string): never {
  throw new DsmError(DsmErrorCode.BadNode, message);
}

/**
 * Decodes a node's RLP. `prefix` holds the nibbles of the path from the root to this node
 * (`prefixLen` of them); leaves need it to rebuild their full keys. Hashed children become
 * stubs; embedded children are decoded in place. The result is frozen, clean, and keeps its
 * encoding.
 */
export function decodeNode(
  bytes: Uint8Array,
  prefix: number[],
  prefixLen: number,
  /**
   * The generation the nodes are made in: frozen (the default), or the one tree's that alone
   * will hold them (a node faulted into it), which may then change them without a copy.
   */
  gen: number = FROZEN_GEN,
): InnerNode {
  try {
    const span = readWhole(bytes);
    if (!span.list) badNode('a trie node must be an RLP list, found a byte string');
    return (
      decodeHashBranch(bytes, span.start, span.dataStart, span.end, gen) ??
      decodeSpan(bytes, span, prefix, prefixLen, gen)
    );
  } catch (e) {
    throw asTreeError(e);
  }
}

/**
 * The usual node below the top of a big trie, decoded in one pass: a branch whose 16 slots are
 * each empty or a 32-byte hash and whose value is empty, with at least two children: a lazy
 * branch, its children's stubs made only when a walk reaches them. Anything else (undefined)
 * goes through the general decoder, which also says what is wrong with it.
 */
/**
 * decodeNode for a branch of 16 hashes or empty slots (the usual node, see below), which needs
 * no path prefix: undefined for any other node (decodeNode then).
 */
export function decodeHashBranchNode(bytes: Uint8Array, gen: number = FROZEN_GEN): BranchNode | undefined {
  // Its payload (two hashes at least) is 56–528 bytes: a list header of two or three bytes.
  const n = bytes.length;
  const h = bytes[0];
  if (h === 0xf8 && n > 2 && bytes[1]! === n - 2) return decodeHashBranch(bytes, 0, 2, n, gen);
  if (h === 0xf9 && n > 3 && ((bytes[1]! << 8) | bytes[2]!) === n - 3)
    return decodeHashBranch(bytes, 0, 3, n, gen);
  return undefined;
}

/** Set by readShortString: where the byte string's data starts and ends. */
let strFrom = 0;
let strTo = 0;

/**
 * Reads the RLP byte string at `pos` of bytes[..end) in the forms a leaf's items take (canonical,
 * under 256 bytes), setting strFrom/strTo; false for anything else.
 */
function readShortString(bytes: Uint8Array, pos: number, end: number): boolean {
  if (pos >= end) return false;
  const h = bytes[pos]!;
  if (h < 0x80) {
    strFrom = pos;
    strTo = pos + 1;
    return true;
  }
  let from: number;
  let len: number;
  if (h <= 0xb7) {
    from = pos + 1;
    len = h - 0x80;
    if (len === 1 && from < end && bytes[from]! < 0x80) return false;
  } else if (h === 0xb8 && pos + 1 < end) {
    from = pos + 2;
    len = bytes[pos + 1]!;
    if (len < 56) return false;
  } else return false;
  if (from + len > end) return false;
  strFrom = from;
  strTo = from + len;
  return true;
}

/** Scratch for a leaf's key (decodeLeafOnPath). */
const leafKey = Buffer.allocUnsafe(64);

/**
 * decodeNode for a leaf at nibble depth d on `key`'s path (plus nibble `extra` when ≥ 0) — the
 * usual node at the bottom of a path — straight from its bytes: no RLP item objects, no
 * prefix array, its key packed once. Undefined for any other node, or anything unusual (the
 * general decoder then decodes it, or says what is wrong with it).
 */
export function decodeLeafOnPath(
  bytes: Uint8Array,
  key: Uint8Array,
  d: number,
  extra: number,
  gen: number = FROZEN_GEN,
): LeafNode | undefined {
  const n = bytes.length;
  const h = bytes[0]!;
  let pos: number;
  if (h >= 0xc0 && h <= 0xf7 && h - 0xc0 === n - 1) pos = 1;
  else if (h === 0xf8 && n > 2 && bytes[1]! === n - 2 && n - 2 >= 56) pos = 2;
  else return undefined;
  if (!readShortString(bytes, pos, n) || strTo === strFrom) return undefined;
  const hpFrom = strFrom;
  const hpTo = strTo;
  const first = bytes[hpFrom]!;
  const flag = first >> 4;
  if ((flag !== 2 && flag !== 3) || (flag === 2 && (first & 0x0f) !== 0)) return undefined;
  if (!readShortString(bytes, hpTo, n) || strTo !== n || strTo === strFrom) return undefined;
  const prefixLen = extra >= 0 ? d + 1 : d;
  // The path's nibbles before its whole bytes: the prefix's, then the odd one in the flag byte.
  const lead = prefixLen + (flag & 1);
  if (lead & 1 || (lead >> 1) + hpTo - hpFrom - 1 > leafKey.length) return undefined;
  let j = 0;
  for (let i = 0; i < lead; i += 2) {
    const hi = i < d ? keyNibble(key, i) : i === d && extra >= 0 ? extra : first & 0x0f;
    const k = i + 1;
    const lo = k < d ? keyNibble(key, k) : k === d && extra >= 0 ? extra : first & 0x0f;
    leafKey[j++] = (hi << 4) | lo;
  }
  for (let i = hpFrom + 1; i < hpTo; i++) leafKey[j++] = bytes[i]!;
  const value = Buffer.from(bytes.buffer, bytes.byteOffset + strFrom, strTo - strFrom).toString('latin1');
  return new LeafNode(leafKey.toString('latin1', 0, j), value, gen);
}

function decodeHashBranch(
  bytes: Uint8Array,
  start: number,
  dataStart: number,
  end: number,
  gen: number,
): BranchNode | undefined {
  let pos = dataStart;
  let count = 0;
  for (let i = 0; i < 16; i++) {
    const p = bytes[pos];
    if (p === 0x80) pos += 1;
    else if (p === 0xa0 && pos + 33 <= end) {
      pos += 33;
      count++;
    } else return undefined;
  }
  if (pos + 1 !== end || bytes[pos] !== 0x80 || count < 2) return undefined;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const b = new BranchNode(undefined, gen, 0);
  // Every child is a stub its encoding names: none is made until asked for (see BranchNode).
  b.lazy = true;
  b.enc = buf.toString('latin1', start, end);
  return b;
}

function spanBin(bytes: Uint8Array, from: number, to: number): Bin {
  return Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('latin1', 0, to - from);
}

function childFrom(
  bytes: Uint8Array,
  item: RlpSpan,
  prefix: number[],
  prefixLen: number,
  gen: number,
): TrieNode | undefined {
  if (item.list) {
    const size = item.end - item.start;
    if (size >= 32) badNode(`embedded child of ${size} bytes; only nodes under 32 bytes are embedded`);
    return decodeSpan(bytes, item, prefix, prefixLen, gen);
  }
  const len = item.end - item.dataStart;
  if (len === 0) return undefined;
  if (len !== 32) badNode(`child reference of ${len} bytes; expected a 32-byte hash or an embedded node`);
  return new HashNode(spanBin(bytes, item.dataStart, item.end));
}

function decodeSpan(
  bytes: Uint8Array,
  span: RlpSpan,
  prefix: number[],
  prefixLen: number,
  gen: number,
): InnerNode {
  const items = listItems(bytes, span);
  if (items.length === 17) {
    const b = new BranchNode(undefined, gen, 0);
    let count = 0;
    for (let i = 0; i < 16; i++) {
      prefix[prefixLen] = i;
      const c = childFrom(bytes, items[i]!, prefix, prefixLen + 1, gen);
      b.setChild(i, c);
      if (c !== undefined) count++;
    }
    const v = items[16]!;
    if (v.list) badNode('branch value must be a byte string');
    const value = v.end > v.dataStart ? spanBin(bytes, v.dataStart, v.end) : undefined;
    if (value !== undefined && prefixLen & 1)
      badNode('branch value at an odd nibble depth (no byte key ends there)');
    if (count + (value === undefined ? 0 : 1) < 2)
      badNode('branch with fewer than two entries is not canonical');
    b.value = value;
    b.enc = spanBin(bytes, span.start, span.end);
    return b;
  }
  if (items.length !== 2) badNode(`a node has 2 or 17 items, found ${items.length}`);
  const hpItem = items[0]!;
  if (hpItem.list || hpItem.end === hpItem.dataStart) badNode('node path must be a non-empty byte string');
  const hp = bytes.subarray(hpItem.dataStart, hpItem.end);
  const flag = hp[0]! >> 4;
  if (flag > 3) badNode(`hex-prefix flag ${flag} is not 0–3`);
  const odd = flag & 1;
  if (!odd && (hp[0]! & 0x0f) !== 0) badNode('even hex-prefix with a non-zero pad nibble');
  let n = prefixLen;
  if (odd) prefix[n++] = hp[0]! & 0x0f;
  for (let i = 1; i < hp.length; i++) {
    prefix[n++] = hp[i]! >> 4;
    prefix[n++] = hp[i]! & 0x0f;
  }
  const body = items[1]!;
  if (flag >= 2) {
    if (body.list || body.end === body.dataStart) badNode('leaf value must be a non-empty byte string');
    if (n & 1) badNode('leaf key has an odd number of nibbles');
    return new LeafNode(nibblesToBin(prefix, n), spanBin(bytes, body.dataStart, body.end), gen);
  }
  if (n === prefixLen) badNode('extension with an empty path');
  let path = '';
  for (let i = prefixLen; i < n; i++) path += String.fromCharCode(prefix[i]!);
  const child = childFrom(bytes, body, prefix, n, gen);
  if (child === undefined) badNode('extension without a child');
  if (child.kind === LEAF || child.kind === EXTENSION)
    badNode('extension to a leaf or extension is not canonical');
  const e = new ExtensionNode(path, child, gen);
  e.enc = spanBin(bytes, span.start, span.end);
  return e;
}
