/**
 * Binary strings (the general byte helpers are @monsoon/util's). Inside the tree, byte strings are
 * kept as latin1 "binary strings" (one char per byte): V8 stores a 32-byte string in 48 bytes
 * where a 32-byte Uint8Array costs ~240, and a million-account trie is mostly such small byte
 * strings. APIs take and return Uint8Array.
 */

/** Internal byte string: each char code is one byte (0–255). */
export type Bin = string;

/** Uint8Array → binary string (@monsoon/util's byte key). */
export { byteKey as toBin } from '@monsoon/util';

/**
 * Binary string → Uint8Array (a fresh copy). A plain Uint8Array view, not the Buffer itself, so
 * callers get Uint8Array semantics (`slice()` copies).
 */
export function fromBin(s: Bin): Uint8Array {
  const b = Buffer.from(s, 'latin1');
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/** Binary string → lower-case hex without prefix. */
export function binToHex(s: Bin): string {
  return Buffer.from(s, 'latin1').toString('hex');
}
