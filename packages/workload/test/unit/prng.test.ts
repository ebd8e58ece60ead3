/** Prng: reproducible, uniform enough, and in range. */

import { describe, expect, it } from '@jest/globals';
import { Prng } from '@monsoon/workload';

const seed = (s: string) => new TextEncoder().encode(s);

describe('Prng', () => {
  it('repeats its sequence for a seed and differs across seeds', () => {
    const a = new Prng(seed('x'));
    const b = new Prng(seed('x'));
    const c = new Prng(seed('y'));
    const sa = Array.from({ length: 100 }, () => a.nextUint32());
    expect(Array.from({ length: 100 }, () => b.nextUint32())).toEqual(sa);
    expect(Array.from({ length: 100 }, () => c.nextUint32())).not.toEqual(sa);
    expect(sa.every((x) => Number.isInteger(x) && x >= 0 && x < 2 ** 32)).toBe(true);
  });

  it('nextInt covers [0, n) evenly and nextFloat stays in [0, 1)', () => {
    const r = new Prng(seed('ints'));
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < 100_000; i++) counts[r.nextInt(10)]!++;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500); // ~5 standard deviations
    let sum = 0;
    let min = 1;
    let max = 0;
    for (let i = 0; i < 100_000; i++) {
      const f = r.nextFloat();
      sum += f;
      min = Math.min(min, f);
      max = Math.max(max, f);
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(min).toBeLessThan(0.001);
    expect(max).toBeLessThan(1);
    expect(max).toBeGreaterThan(0.999);
    expect(Math.abs(sum / 100_000 - 0.5)).toBeLessThan(0.005);
  });

  it('nextBigInt stays in [min, max], including ranges wider than 2^32 and single values', () => {
    const r = new Prng(seed('bigints'));
    const lo = 10n ** 20n;
    const hi = 10n ** 20n + 2n ** 70n;
    let high = 0;
    let outside = 0;
    for (let i = 0; i < 2000; i++) {
      const v = r.nextBigInt(lo, hi);
      if (v < lo || v > hi) outside++;
      if (v > lo + 2n ** 69n) high++;
    }
    expect(outside).toBe(0);
    expect(high).toBeGreaterThan(850); // about half land in the upper half
    expect(r.nextBigInt(5n, 5n)).toBe(5n);
    expect(() => r.nextBigInt(2n, 1n)).toThrow();
    expect(() => r.nextInt(0)).toThrow();
  });
});
