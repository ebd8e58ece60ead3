/**
 * Byte-string helpers every package needs: equality, concatenation, a Buffer view for I/O, and a
 * string key for byte strings in Maps and Sets.
 */

/** Byte-wise equality. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The parts back to back, in one fresh array. */
export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Copies of `parts` in one fresh buffer of their own, as views into it, in order. What a
 * long-lived structure keeps of bytes decoded from a message: a decoded field is a view into
 * the whole message (a gRPC request, bag and all), so keeping one such view keeps the message.
 */
export function detachAll(parts: readonly Uint8Array[]): Uint8Array[] {
  let n = 0;
  for (const p of parts) n += p.length;
  const buf = new Uint8Array(n);
  const out: Uint8Array[] = new Array(parts.length);
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    buf.set(p, at);
    out[i] = buf.subarray(at, at + p.length);
    at += p.length;
  }
  return out;
}

/** Node's native latin1 decoder, which takes any Uint8Array (no Buffer view of it needed). */
const latin1Slice = Buffer.prototype.latin1Slice as (this: Uint8Array, start: number, end: number) => string;

/**
 * A Map/Set key for a byte string: a latin1 "binary string", one char per byte (no hashing, and
 * V8 keeps a 32-byte one in 48 bytes where a 32-byte Uint8Array costs ~240). Made by one native
 * call at any length: a 20-byte key built char by char cost ~2.6x as much, flattened later too.
 */
export function byteKey(bytes: Uint8Array): string {
  return latin1Slice.call(bytes, 0, bytes.length);
}

/** The binary string (as byteKey makes) of bytes [start, end) of `bytes`, with no view of them made. */
export function byteKeyAt(bytes: Uint8Array, start: number, end: number): string {
  return latin1Slice.call(bytes, start, end);
}

/** A Node Buffer view of the same memory (no copy), for I/O-style helpers. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** `bytes` without its leading zero bytes (a view, not a copy). */
export function stripLeadingZeros(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return bytes.subarray(i);
}
