/** Key and value generators shared by the randomized tests. */
import type { Prng } from '@monsoon/test-utils';

/** Bytes of the short-key alphabet: keys over it are often prefixes of each other. */
const ALPHABET = [0x00, 0x01, 0x10, 0x11];

/** 1–`maxLen` bytes over a 4-byte alphabet (340 keys in all for maxLen 4). */
export function shortKey(r: Prng, maxLen = 4): Uint8Array {
  const k = new Uint8Array(r.range(1, maxLen));
  for (let i = 0; i < k.length; i++) k[i] = r.pick(ALPHABET);
  return k;
}

/** Every short key of 1–`maxLen` bytes. */
export function allShortKeys(maxLen = 4): Uint8Array[] {
  let level: number[][] = [[]];
  const out: Uint8Array[] = [];
  for (let len = 1; len <= maxLen; len++) {
    level = level.flatMap((p) => ALPHABET.map((b) => [...p, b]));
    for (const k of level) out.push(Uint8Array.from(k));
  }
  return out;
}

/**
 * A 32-byte key: mostly uniform, sometimes a neighbour of `near` (same bytes but for the last
 * 1–3 nibbles), which puts small leaves deep in the tree where they are embedded in their parent.
 */
export function key32(r: Prng, near?: Uint8Array): Uint8Array {
  if (near === undefined || r.chance(0.7)) return r.bytes(32);
  const k = near.slice();
  const n = r.range(1, 3);
  for (let i = 64 - n; i < 64; i++) {
    const nib = r.int(16);
    const b = i >> 1;
    k[b] = i & 1 ? (k[b]! & 0xf0) | nib : (k[b]! & 0x0f) | (nib << 4);
  }
  return k;
}

/** A non-empty value of lo–hi bytes (empty would mean delete). */
export function value(r: Prng, lo: number, hi: number): Uint8Array {
  return r.bytes(r.range(lo, hi));
}
