/**
 * The root of an "ordered trie" (key rlp(i), value `values[i]`: a block's transactions or
 * receipts) computed straight from the sorted keys, as a stack trie does: every node encoded
 * once, children before parents, and all of them hashed in one native call (keccak256Tree fills
 * each parent's hole for a child's hash as it goes). No tree objects, no inserts, no hex keys:
 * a client checks both roots of every block it follows, and building them in a DsmTree was half
 * of that work.
 *
 * The same root as a DsmTree holding the same pairs (the tests hold it to one, for every count
 * up to past 256 and values short enough to be embedded in their parent).
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { listHeaderLength, stringHeaderLength, writeHeader } from '@monsoon/util';

/** The nibbles of rlp(i), made once for each i and kept (every block names the same keys). */
const keyNibbles: Uint8Array[] = [];

function keyOf(i: number): Uint8Array {
  let k = keyNibbles[i];
  if (k !== undefined) return k;
  if (i === 0) k = Uint8Array.of(8, 0);
  else if (i < 0x80) k = Uint8Array.of(i >> 4, i & 15);
  else {
    let len = 0;
    for (let m = i; m > 0; m = Math.floor(m / 256)) len++;
    k = new Uint8Array(2 + 2 * len);
    k[0] = 8;
    k[1] = len;
    for (let j = 2 * len + 1, m = i; j >= 2; j -= 2, m = Math.floor(m / 256)) {
      k[j] = m & 15;
      k[j - 1] = (m >> 4) & 15;
    }
  }
  keyNibbles[i] = k;
  return k;
}

/**
 * The nibbles of rlp(i) for i in key order: 1–127 (one byte each, below 0x80), then 0 (0x80),
 * then 128 on (0x80+len ‖ big-endian i: a longer form sorts after a shorter one, and within one
 * form numeric order is byte order).
 */
function sortedKeys(n: number): { keys: Uint8Array[]; index: number[] } {
  const index: number[] = [];
  for (let i = 1; i < Math.min(n, 0x80); i++) index.push(i);
  index.push(0);
  for (let i = 0x80; i < n; i++) index.push(i);
  return { keys: index.map(keyOf), index };
}

/** Nibbles two keys share from the start. */
function common(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** An RLP byte string's encoded length. */
const stringLength = (len: number, first: number): number => stringHeaderLength(len, first) + len;

/** No child in a branch's slot (0x80). */
const NONE = -1;

/**
 * Writes every node into one buffer, children before parents. A reference is a number: NONE, a
 * hashed node's index (>= 0), or -2 - k for the k-th embedded node (under 32 bytes: copied into
 * its parent in place of a hash).
 */
/**
 * The buffer the last root was built in, taken by the next (a block's transactions, then its
 * receipts: a fresh one grown by doubling each time was most of what checking a block allocated).
 * Safe to share: a root is built and hashed in one synchronous call, and what outlives it (the
 * embedded nodes, the root) is copied out.
 */
let spare = new Uint8Array(1 << 16);
/** The largest buffer kept as the spare (an outsized block's is let go). */
const MAX_SPARE = 1 << 22;

class Builder {
  buf = spare;
  pos = 0;
  /** Where each hashed node starts in `buf`. */
  readonly starts: number[] = [];
  /** For each hashed node, the byte of its parent where its hash goes (-1: the root). */
  readonly holes: number[] = [];
  private readonly embeds: Uint8Array[] = [];

  constructor(
    private readonly keys: readonly Uint8Array[],
    private readonly values: readonly Uint8Array[],
  ) {}

  private refLength(r: number): number {
    return r === NONE ? 1 : r >= 0 ? 33 : this.embeds[-2 - r]!.length;
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    b.set(this.buf.subarray(0, this.pos));
    this.buf = b;
    if (b.length <= MAX_SPARE) spare = b;
  }

  private writeRef(r: number): void {
    if (r === NONE) this.buf[this.pos++] = 0x80;
    else if (r >= 0) {
      this.buf[this.pos] = 0xa0;
      this.holes[r] = this.pos + 1;
      this.pos += 33;
    } else {
      const e = this.embeds[-2 - r]!;
      this.buf.set(e, this.pos);
      this.pos += e.length;
    }
  }

  /** Writes a hex-prefixed path: nibbles `[from, to)` of `k`, as an RLP byte string. */
  private writePath(k: Uint8Array, from: number, to: number, leaf: boolean): void {
    const len = to - from;
    const bytes = 1 + (len >> 1);
    if (bytes > 1) this.pos = writeHeader(this.buf, this.pos, bytes, 0x80);
    let at = from;
    let first = ((leaf ? 2 : 0) + (len & 1)) << 4;
    if (len & 1) first |= k[at++]!;
    this.buf[this.pos++] = first;
    for (; at < to; at += 2) this.buf[this.pos++] = (k[at]! << 4) | k[at + 1]!;
  }

  private static pathLength(len: number): number {
    const bytes = 1 + (len >> 1);
    return bytes > 1 ? 1 + bytes : 1;
  }

  /** The node written from `start` on, as its parent refers to it (the root is always hashed). */
  private finish(start: number, root: boolean): number {
    if (this.pos - start < 32 && !root) {
      // Under 32 bytes a node holds no hash (a hash alone is 33), so it has no holes to move.
      this.embeds.push(this.buf.slice(start, this.pos));
      this.pos = start;
      return -1 - this.embeds.length;
    }
    this.starts.push(start);
    this.holes.push(-1);
    return this.starts.length - 1;
  }

  /** The node for sorted keys `[lo, hi)`, which share their first `depth` nibbles. */
  build(lo: number, hi: number, depth: number, root: boolean): number {
    const k = this.keys[lo]!;
    if (hi - lo === 1) {
      const v = this.values[lo]!;
      const payload = Builder.pathLength(k.length - depth) + stringLength(v.length, v[0]!);
      this.reserve(listHeaderLength(payload) + payload);
      const start = this.pos;
      this.pos = writeHeader(this.buf, this.pos, payload, 0xc0);
      this.writePath(k, depth, k.length, true);
      if (!(v.length === 1 && v[0]! < 0x80)) this.pos = writeHeader(this.buf, this.pos, v.length, 0x80);
      this.buf.set(v, this.pos);
      this.pos += v.length;
      return this.finish(start, root);
    }
    const shared = common(k, this.keys[hi - 1]!);
    if (shared === depth) return this.branch(lo, hi, depth, root);
    const child = this.branch(lo, hi, shared, false);
    const payload = Builder.pathLength(shared - depth) + this.refLength(child);
    this.reserve(listHeaderLength(payload) + payload);
    const start = this.pos;
    this.pos = writeHeader(this.buf, this.pos, payload, 0xc0);
    this.writePath(k, depth, shared, false);
    this.writeRef(child);
    return this.finish(start, root);
  }

  private branch(lo: number, hi: number, depth: number, root: boolean): number {
    const refs = new Array<number>(16).fill(NONE);
    let at = lo;
    while (at < hi) {
      const nibble = this.keys[at]![depth]!;
      let end = at + 1;
      while (end < hi && this.keys[end]![depth] === nibble) end++;
      refs[nibble] = this.build(at, end, depth + 1, false);
      at = end;
    }
    let payload = 1; // the empty value
    for (const r of refs) payload += this.refLength(r);
    this.reserve(listHeaderLength(payload) + payload);
    const start = this.pos;
    this.pos = writeHeader(this.buf, this.pos, payload, 0xc0);
    for (const r of refs) this.writeRef(r);
    this.buf[this.pos++] = 0x80;
    return this.finish(start, root);
  }
}

/**
 * Root of the trie mapping rlp(i) to `values[i]`; the empty list gives the empty trie root
 * (56e81f…b421). Values must be non-empty: an empty value would be a deletion in a trie.
 */
export function orderedRoot(values: readonly Uint8Array[], keccak: Keccak = defaultKeccak): Uint8Array {
  for (let i = 0; i < values.length; i++) {
    if (values[i]!.length === 0) {
      throw new RangeError(`ordered trie value ${i} is empty: expected a non-empty encoding`);
    }
  }
  if (values.length === 0) return keccak.keccak256(Uint8Array.of(0x80));
  const { keys, index } = sortedKeys(values.length);
  const b = new Builder(
    keys,
    index.map((i) => values[i]!),
  );
  b.build(0, keys.length, 0, true);
  const count = b.starts.length;
  const offsets = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) offsets[i] = b.starts[i]!;
  offsets[count] = b.pos;
  const out = keccak.keccak256Tree(b.buf.subarray(0, b.pos), offsets, Int32Array.from(b.holes), count);
  return out.slice(32 * (count - 1), 32 * count);
}
