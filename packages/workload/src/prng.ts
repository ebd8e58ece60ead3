import { keccak } from '@monsoon/keccak';
import { WorkloadError, WorkloadErrorCode } from './workloadError.js';

const TWO_POW_32 = 4294967296;
const TWO_POW_53 = 9007199254740992;

/**
 * A seeded xoshiro128** generator: the same seed gives the same sequence on every platform and
 * Node version (only 32-bit integer arithmetic), which is what makes generated traffic
 * reproducible. Not cryptographic. The 128-bit state is the first 16 bytes of
 * keccak256(seed), so similar seeds give unrelated sequences.
 */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: Uint8Array) {
    const h = keccak.keccak256(seed);
    const v = new DataView(h.buffer, h.byteOffset, 16);
    this.a = v.getUint32(0);
    this.b = v.getUint32(4);
    this.c = v.getUint32(8);
    this.d = v.getUint32(12);
    // The all-zero state is xoshiro's one fixed point; keccak will not give it, but be sure.
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  /** A uniform integer in [0, 2^32). */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** A uniform float in [0, 1) with 53 random bits. */
  nextFloat(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** A uniform integer in [0, n), for 1 <= n <= 2^32, without modulo bias. */
  nextInt(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > TWO_POW_32) {
      throw new WorkloadError(
        WorkloadErrorCode.BadOptions,
        `nextInt: expected an integer in [1, 2^32], found ${n}`,
        { n },
      );
    }
    // Reject the top partial block of 2^32 so every residue is equally likely.
    const limit = TWO_POW_32 - (TWO_POW_32 % n);
    for (;;) {
      const x = this.nextUint32();
      if (x < limit) return x % n;
    }
  }

  /** A uniform bigint in [min, max] (inclusive), by rejection over whole 32-bit words. */
  nextBigInt(min: bigint, max: bigint): bigint {
    if (max < min) {
      throw new WorkloadError(
        WorkloadErrorCode.BadOptions,
        `nextBigInt: expected min <= max, found ${min} > ${max}`,
        { min, max },
      );
    }
    const range = max - min + 1n;
    if (range <= BigInt(TWO_POW_32)) return min + BigInt(this.nextInt(Number(range)));
    if (range <= BigInt(TWO_POW_53)) {
      // 53-bit draws in float arithmetic, exact below 2^53: the common case (wei amounts) stays off bigint loops.
      const r = Number(range);
      const limit = TWO_POW_53 - (TWO_POW_53 % r);
      for (;;) {
        const x = (this.nextUint32() >>> 11) * TWO_POW_32 + this.nextUint32();
        if (x < limit) return min + BigInt(x % r);
      }
    }
    const words = Math.ceil(range.toString(16).length / 8);
    const span = 1n << BigInt(32 * words);
    const limit = span - (span % range);
    for (;;) {
      let x = 0n;
      for (let i = 0; i < words; i++) x = (x << 32n) | BigInt(this.nextUint32());
      if (x < limit) return min + (x % range);
    }
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
