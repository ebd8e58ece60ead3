/** Unsigned integers as big-endian bytes: minimal, as RLP stores scalars, or fixed-width words. */
import { BytesError, BytesErrorCode } from './bytesError.js';

const EMPTY = new Uint8Array(0);

/**
 * `n` (≥ 0) as big-endian bytes: the shortest form (empty for zero, as RLP stores scalars), or
 * left-padded to exactly `length` bytes (a 32-byte EVM word). Throws a BadInteger BytesError for
 * a negative `n` or one that does not fit `length` bytes.
 */
export function bigintToBytes(n: bigint, length?: number): Uint8Array {
  if (n < 0n) badInteger(n, 'a non-negative integer');
  const minimal = minimalBytes(n);
  if (length === undefined) return minimal;
  if (minimal.length > length) badInteger(n, `an integer that fits ${length} bytes`);
  const out = new Uint8Array(length);
  out.set(minimal, length - minimal.length);
  return out;
}

function minimalBytes(n: bigint): Uint8Array {
  if (n === 0n) return EMPTY;
  // Below 2^53 (nonces, gas, most values) plain number arithmetic is several times faster.
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

/**
 * Big-endian bytes `b[from, to)` (any length, leading zeros allowed; empty is zero) → bigint.
 * Read in 48-bit chunks of plain number arithmetic, no hex string: a balance (9 bytes or more)
 * is decoded for every account a block reads.
 */
export function bytesToBigint(b: Uint8Array, from = 0, to = b.length): bigint {
  const n = to - from;
  if (n <= 0) return 0n;
  let at = from + (n % 6 || 6);
  let head = 0;
  for (let i = from; i < at; i++) head = head * 256 + b[i]!;
  let v = BigInt(head);
  while (at < to) {
    let c = 0;
    for (const end = at + 6; at < end; at++) c = c * 256 + b[at]!;
    v = (v << 48n) | BigInt(c);
  }
  return v;
}

function badInteger(n: bigint, expected: string): never {
  throw new BytesError(BytesErrorCode.BadInteger, `expected ${expected}, found ${n}`, {
    found: n.toString(),
  });
}
