/** A seeded xorshift32 generator: deterministic test data. */
export class Prng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }

  u32(): number {
    let x = this.s;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    return this.s;
  }

  int(n: number): number {
    return this.u32() % n;
  }

  bytes(n: number): Uint8Array {
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = this.u32() & 0xff;
    return b;
  }
}
