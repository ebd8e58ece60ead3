/**
 * Nibble access. Keys come in as Uint8Array, leaf keys are binary strings, extension paths are
 * strings of nibbles (one char per nibble, code 0–15).
 */
import type { Bin } from './bytes.js';

/** Nibble i of a byte key. */
export function keyNibble(key: Uint8Array, i: number): number {
  const b = key[i >> 1]!;
  return i & 1 ? b & 0x0f : b >> 4;
}

/** Nibble i of a binary-string key. */
export function binNibble(key: Bin, i: number): number {
  const b = key.charCodeAt(i >> 1);
  return i & 1 ? b & 0x0f : b >> 4;
}

/** Nibbles [from, to) of a binary-string key, as a nibble string. */
export function binNibbles(key: Bin, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += String.fromCharCode(binNibble(key, i));
  return s;
}

/** Nibbles [from, to) of a byte key, as a nibble string. */
export function keyNibbles(key: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += String.fromCharCode(keyNibble(key, i));
  return s;
}

/** Scratch for nibblesToBin (a trie key is at most a few dozen bytes). */
const packed = Buffer.allocUnsafe(64);

/**
 * Packs an even number of nibbles into a binary string of bytes: one flat string (a leaf's key,
 * for every leaf decoded), not one concatenation per byte.
 */
export function nibblesToBin(nibbles: ArrayLike<number>, count: number): Bin {
  const n = count >> 1;
  const buf = n <= packed.length ? packed : Buffer.allocUnsafe(n);
  for (let i = 0, j = 0; j < n; i += 2, j++) buf[j] = (nibbles[i]! << 4) | nibbles[i + 1]!;
  return buf.toString('latin1', 0, n);
}

/** Does the byte key, from nibble `at`, begin with the nibble string `path`? */
export function keyHasPath(key: Uint8Array, at: number, path: string): boolean {
  if (key.length * 2 - at < path.length) return false;
  for (let i = 0; i < path.length; i++) if (keyNibble(key, at + i) !== path.charCodeAt(i)) return false;
  return true;
}

/** Length of the common run of `path` and the key's nibbles from `at`. */
export function commonWithPath(key: Uint8Array, at: number, path: string): number {
  const n = Math.min(path.length, key.length * 2 - at);
  let i = 0;
  while (i < n && keyNibble(key, at + i) === path.charCodeAt(i)) i++;
  return i;
}

/** Byte key equals binary-string key. */
export function keyEqualsBin(key: Uint8Array, bin: Bin): boolean {
  const n = key.length;
  if (bin.length !== n) return false;
  for (let i = 0; i < n; i++) if (key[i] !== bin.charCodeAt(i)) return false;
  return true;
}
