/**
 * A small seeded PRNG (mulberry32) so benchmark data and access patterns are the same on every
 * run and every machine. Not for cryptography.
 */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A uniform 32-bit unsigned integer. */
  nextU32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** A uniform integer in [0, n), n ≤ 2^32. */
  below(n: number): number {
    return Math.floor((this.nextU32() / 0x1_0000_0000) * n);
  }

  /** `count` indices, each uniform in [0, n). */
  indices(count: number, n: number): Uint32Array {
    const out = new Uint32Array(count);
    for (let i = 0; i < count; i++) out[i] = this.below(n);
    return out;
  }

  /** `n` random bytes. */
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 4) {
      const x = this.nextU32();
      for (let j = 0; j < 4 && i + j < n; j++) out[i + j] = (x >>> (8 * j)) & 0xff;
    }
    return out;
  }
}
