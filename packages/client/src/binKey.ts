/**
 * Map keys for byte strings (hashes, addresses): one char per byte, made by one native slice.
 * A hex key is twice as long, and util's byteKey builds a short key char by char or through a
 * Buffer view of the bytes: a client keys every transaction several times (pool, waiters,
 * chain index) and every account it reads.
 */
const latin1Slice = Buffer.prototype.latin1Slice as (this: Uint8Array, start: number, end: number) => string;

/** The binary string (latin1, one char per byte) of `b`: equal keys for equal bytes. */
export function binKey(b: Uint8Array): string {
  return latin1Slice.call(b, 0, b.length);
}
