/** `n` bytes, deterministic in `seed` (byte i = seed + i, mod 256). */
export function filled(n: number, seed = 1): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (seed + i) & 0xff;
  return b;
}

export const address = (seed = 1): Uint8Array => filled(20, seed);
export const hash = (seed = 1): Uint8Array => filled(32, seed);

/** Through the wire as grpc-js does it: encoded, then decoded from a Node Buffer. */
export function wire<T>(
  fns: { encode(m: T): { finish(): Uint8Array }; decode(b: Uint8Array): T },
  message: T,
): T {
  return fns.decode(Buffer.from(fns.encode(message).finish()));
}
