/**
 * The payload every test (and the crash fixture, which repeats this function in plain JS)
 * writes for record `seq`: 1 to 300 bytes, contents a function of seq, so a replayed record
 * can be checked without remembering what was written.
 */
export function payloadFor(seq: bigint): Uint8Array {
  const n = Number(seq % 1_000_003n);
  const p = new Uint8Array(((n * 37) % 300) + 1);
  for (let i = 0; i < p.length; i++) p[i] = (n * 31 + i * 7) & 0xff;
  return p;
}

/** A payload of exactly `length` bytes for `seq`. */
export function fixedPayload(seq: bigint, length: number): Uint8Array {
  const p = new Uint8Array(length);
  const n = Number(seq % 1_000_003n);
  for (let i = 0; i < length; i++) p[i] = (n * 13 + i) & 0xff;
  return p;
}
