/**
 * Strict RLP: a span reader that never copies (the trie decodes nodes in place), header helpers
 * the trie's node encoder uses, and a plain encode/decode. The reader rejects everything Ethereum
 * calls non-canonical: over-long length prefixes, single bytes below 0x80 wrapped in a prefix,
 * and trailing bytes. The encoder sizes first, then fills one buffer (it sits on the signing and
 * block-building hot paths).
 */
import { BytesError, BytesErrorCode, type BytesErrorMeta } from './bytesError.js';

/** A decoded RLP value: a byte string or a list. */
export type RlpValue = Uint8Array | RlpValue[];

/** What the encoder takes: a byte string or a (read-only) list of them. */
export type RlpInput = Uint8Array | readonly RlpInput[];

/** Where one RLP item lies in a byte array. */
export interface RlpSpan {
  list: boolean;
  /** First byte of the item (its prefix). */
  start: number;
  /** First byte of its payload. */
  dataStart: number;
  /** One past its last byte. */
  end: number;
}

function bad(message: string, meta: BytesErrorMeta[BytesErrorCode.BadRlp] = {}): never {
  throw new BytesError(BytesErrorCode.BadRlp, message, meta);
}

/** Reads the item that starts at `pos`; it must end at or before `limit`. */
export function readSpan(b: Uint8Array, pos: number, limit: number): RlpSpan {
  if (pos >= limit) bad(`expected an item at byte ${pos}, found the end of input`, { pos });
  const p = b[pos]!;
  if (p < 0x80) return { list: false, start: pos, dataStart: pos, end: pos + 1 };
  let list = false;
  let dataStart: number;
  let len: number;
  if (p <= 0xb7) {
    len = p - 0x80;
    dataStart = pos + 1;
    if (len === 1 && dataStart < limit && b[dataStart]! < 0x80) {
      bad(`single byte 0x${b[dataStart]!.toString(16)} must not carry a length prefix`, { pos });
    }
  } else if (p <= 0xbf || (p >= 0xf8 && p <= 0xff)) {
    list = p >= 0xf8;
    const lenOfLen = p - (list ? 0xf7 : 0xb7);
    if (pos + 1 + lenOfLen > limit) bad(`truncated length at byte ${pos}`, { pos });
    if (b[pos + 1] === 0) bad(`length with a leading zero at byte ${pos}`, { pos });
    len = 0;
    for (let i = 0; i < lenOfLen; i++) len = len * 256 + b[pos + 1 + i]!;
    if (len < 56) bad(`long-form length ${len} should use the short form, at byte ${pos}`, { pos });
    dataStart = pos + 1 + lenOfLen;
  } else {
    list = true;
    len = p - 0xc0;
    dataStart = pos + 1;
  }
  const end = dataStart + len;
  if (end > limit)
    bad(`item at byte ${pos} claims ${len} bytes, only ${limit - dataStart} remain`, { pos, len });
  return { list, start: pos, dataStart, end };
}

/** Reads exactly one item spanning all of `b[start, end)`. */
export function readWhole(b: Uint8Array, start = 0, end = b.length): RlpSpan {
  const s = readSpan(b, start, end);
  if (s.end !== end) bad(`${end - s.end} trailing bytes after the item`, { trailing: end - s.end });
  return s;
}

/** The items of a list span. */
export function listItems(b: Uint8Array, list: RlpSpan): RlpSpan[] {
  if (!list.list) bad('expected a list, found a byte string', { pos: list.start });
  const items: RlpSpan[] = [];
  let pos = list.dataStart;
  while (pos < list.end) {
    const s = readSpan(b, pos, list.end);
    items.push(s);
    pos = s.end;
  }
  return items;
}

/** Decodes a whole RLP value (copies byte strings). */
export function rlpDecode(b: Uint8Array): RlpValue {
  const toValue = (s: RlpSpan): RlpValue =>
    s.list ? listItems(b, s).map(toValue) : b.slice(s.dataStart, s.end);
  return toValue(readWhole(b));
}

/** Length of the header for a byte string of `len` bytes whose first byte is `first`. */
export function stringHeaderLength(len: number, first: number): number {
  if (len === 1 && first < 0x80) return 0;
  return len < 56 ? 1 : 1 + byteLength(len);
}

/** Length of a list header for a payload of `len` bytes. */
export function listHeaderLength(len: number): number {
  return len < 56 ? 1 : 1 + byteLength(len);
}

function byteLength(n: number): number {
  let k = 0;
  while (n > 0) {
    k++;
    n = Math.floor(n / 256);
  }
  return k;
}

/** Writes a header (0x80 string or 0xc0 list base) for a payload of `len` bytes; returns the new position. */
export function writeHeader(buf: Uint8Array, pos: number, len: number, base: 0x80 | 0xc0): number {
  if (len < 56) {
    buf[pos] = base + len;
    return pos + 1;
  }
  const k = byteLength(len);
  buf[pos] = base + 55 + k;
  for (let i = k; i > 0; i--) {
    buf[pos + i] = len & 0xff;
    len = Math.floor(len / 256);
  }
  return pos + 1 + k;
}

/**
 * The RLP encoding of `v`, after `prefix` bytes left zero for the caller (a typed transaction's
 * type byte goes there).
 */
export function rlpEncode(v: RlpInput, prefix = 0): Uint8Array {
  const out = new Uint8Array(prefix + encodedLength(v));
  encodeInto(v, out, prefix);
  return out;
}

function payloadLength(list: readonly RlpInput[]): number {
  let payload = 0;
  for (const x of list) payload += encodedLength(x);
  return payload;
}

function encodedLength(v: RlpInput): number {
  if (v instanceof Uint8Array) return stringHeaderLength(v.length, v[0] ?? 0) + v.length;
  const payload = payloadLength(v);
  return listHeaderLength(payload) + payload;
}

function encodeInto(v: RlpInput, out: Uint8Array, pos: number): number {
  if (v instanceof Uint8Array) {
    if (!(v.length === 1 && v[0]! < 0x80)) pos = writeHeader(out, pos, v.length, 0x80);
    out.set(v, pos);
    return pos + v.length;
  }
  pos = writeHeader(out, pos, payloadLength(v), 0xc0);
  for (const x of v) pos = encodeInto(x, out, pos);
  return pos;
}
