/**
 * Byte helpers. Inside the tree, byte strings are kept as latin1 "binary strings" (one char per
 * byte): V8 stores a 32-byte string in 48 bytes where a 32-byte Uint8Array costs ~240, and a
 * million-account trie is mostly such small byte strings. APIs take and return Uint8Array.
 */

/** Internal byte string: each char code is one byte (0–255). */
export type Bin = string;

/** Uint8Array → binary string. */
export function toBin(bytes: Uint8Array): Bin {
  const n = bytes.length;
  if (n < 24) {
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(bytes[i]!);
    return s;
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, n).toString('latin1', 0, n);
}

/**
 * Binary string → Uint8Array (a fresh copy). A plain Uint8Array view, not the Buffer itself, so
 * callers get Uint8Array semantics (`slice()` copies).
 */
export function fromBin(s: Bin): Uint8Array {
  const b = Buffer.from(s, 'latin1');
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/** Lower-case hex without prefix. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex');
}

/** Binary string → lower-case hex without prefix. */
export function binToHex(s: Bin): string {
  return Buffer.from(s, 'latin1').toString('hex');
}

/** Hex (with or without 0x) → bytes. Throws on odd length or non-hex characters. */
export function fromHex(hex: string): Uint8Array {
  const h = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (h.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(h)) throw new TypeError(`not a hex string: "${hex}"`);
  return new Uint8Array(Buffer.from(h, 'hex'));
}

/** Byte-wise equality. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A Node Buffer view of the same memory (no copy), for I/O-style helpers. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}
