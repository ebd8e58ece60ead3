/**
 * Just enough RLP to serialize transactions: byte strings and lists, encoding only, into one
 * buffer per call (sizes first, then a single fill), since it sits on the signing hot path.
 * The tests check it against @ethereumjs/rlp, and every transaction against @ethereumjs/tx.
 */

/** A byte string or a list of RLP items. */
export type RlpItem = Uint8Array | readonly RlpItem[];

const EMPTY = new Uint8Array(0);

/** The shortest big-endian bytes of `n` (empty for zero), as RLP wants integers; `n` must be >= 0. */
export function bigintToRlpBytes(n: bigint): Uint8Array {
  if (n === 0n) return EMPTY;
  if (n <= 0x1fffffffffffffn) {
    let v = Number(n);
    let len = 0;
    for (let x = v; x > 0; x = Math.floor(x / 256)) len++;
    const out = new Uint8Array(len);
    for (let i = len - 1; i >= 0; i--) {
      out[i] = v % 256;
      v = Math.floor(v / 256);
    }
    return out;
  }
  let hex = n.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** `bytes` without leading zero bytes (a view, not a copy). */
export function stripLeadingZeros(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return bytes.subarray(i);
}

/** Bytes of the big-endian length in a long-form prefix. */
function lengthOfLength(length: number): number {
  let n = 0;
  for (let x = length; x > 0; x = Math.floor(x / 256)) n++;
  return n;
}

/** Bytes of the prefix for a payload of `length` bytes. */
function prefixLength(length: number): number {
  return length <= 55 ? 1 : 1 + lengthOfLength(length);
}

function payloadLength(item: RlpItem): number {
  if (item instanceof Uint8Array) return item.length;
  let n = 0;
  for (const child of item) n += encodedLength(child);
  return n;
}

function encodedLength(item: RlpItem): number {
  if (item instanceof Uint8Array && item.length === 1 && item[0]! < 0x80) return 1;
  const payload = payloadLength(item);
  return prefixLength(payload) + payload;
}

function writePrefix(out: Uint8Array, at: number, length: number, shortBase: number): number {
  if (length <= 55) {
    out[at] = shortBase + length;
    return at + 1;
  }
  const n = lengthOfLength(length);
  out[at] = shortBase + 55 + n;
  for (let i = n, x = length; i >= 1; i--, x = Math.floor(x / 256)) out[at + i] = x % 256;
  return at + 1 + n;
}

function write(item: RlpItem, out: Uint8Array, at: number): number {
  if (item instanceof Uint8Array) {
    if (item.length === 1 && item[0]! < 0x80) {
      out[at] = item[0]!;
      return at + 1;
    }
    const next = writePrefix(out, at, item.length, 0x80);
    out.set(item, next);
    return next + item.length;
  }
  let next = writePrefix(out, at, payloadLength(item), 0xc0);
  for (const child of item) next = write(child, out, next);
  return next;
}

/** The RLP encoding of `item`, after `prefix` bytes left zero for the caller (a typed transaction's type byte). */
export function encodeRlp(item: RlpItem, prefix = 0): Uint8Array {
  const out = new Uint8Array(prefix + encodedLength(item));
  write(item, out, prefix);
  return out;
}
