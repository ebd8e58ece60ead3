/**
 * The committed rate's steadiness (issue 17: every second after warm-up within ±25% of the
 * mean): warm-up and drain left out, missing seconds counted as zero, the band's edges.
 */
import { describe, expect, it } from '@jest/globals';
import { describeSteadiness, type SecondSample, steadiness } from '@monsoon/workload';

const sample = (t: number, committed: number): SecondSample => ({
  t,
  submitted: committed,
  committed,
  p50Ms: null,
  p99Ms: null,
});

describe('steadiness', () => {
  it('a flat rate after warm-up is steady; the warm-up and the drain do not count', () => {
    const series = [sample(0, 0), sample(1, 10), ...[2, 3, 4, 5].map((t) => sample(t, 1000)), sample(6, 3)];
    const s = steadiness(series, { warmupSeconds: 2, untilSecond: 6 })!;
    expect(s).toMatchObject({ fromSecond: 2, untilSecond: 6, meanPerSecond: 1000, minPerSecond: 1000 });
    expect(s.withinTolerance).toBe(1);
    expect(s.worstDeviation).toBe(0);
    expect(s.cv).toBe(0);
  });

  it('blocks landing two in one second and none in the next swing ±100%', () => {
    const series = [2, 3, 4, 5].map((t) => sample(t, t % 2 === 0 ? 2000 : 0));
    const s = steadiness(series, { warmupSeconds: 2, untilSecond: 6 })!;
    expect(s.meanPerSecond).toBe(1000);
    expect(s.worstDeviation).toBe(1);
    expect(s.withinTolerance).toBe(0);
    expect(s.cv).toBe(1);
  });

  it('a second without a sample counts as zero committed', () => {
    const s = steadiness([sample(2, 900), sample(4, 900)], { warmupSeconds: 2, untilSecond: 5 })!;
    expect(s.meanPerSecond).toBe(600);
    expect(s.minPerSecond).toBe(0);
    expect(s.withinTolerance).toBeCloseTo(0, 10);
  });

  it('the band is inclusive: exactly ±25% is within, beyond it is not', () => {
    // mean 1000: 750 and 1250 on the edge, 700 and 1300 outside.
    const on = steadiness([sample(0, 750), sample(1, 1250)], { warmupSeconds: 0, untilSecond: 2 })!;
    expect(on.withinTolerance).toBe(1);
    const off = steadiness([sample(0, 700), sample(1, 1300)], { warmupSeconds: 0, untilSecond: 2 })!;
    expect(off.withinTolerance).toBe(0);
    expect(off.worstDeviation).toBeCloseTo(0.3, 10);
  });

  it('nothing to count: null; bad options: RangeError', () => {
    expect(steadiness([sample(0, 5)], { warmupSeconds: 5, untilSecond: 5 })).toBeNull();
    expect(steadiness([sample(9, 0)], { warmupSeconds: 0, untilSecond: 10 })).toBeNull();
    expect(describeSteadiness(null)).toMatch(/n\/a/);
    expect(() => steadiness([], { untilSecond: 1.5 })).toThrow(RangeError);
    expect(() => steadiness([], { untilSecond: 3, tolerance: 0 })).toThrow(RangeError);
  });

  it('describes itself in one line', () => {
    const s = steadiness([sample(0, 700), sample(1, 1300)], { warmupSeconds: 0, untilSecond: 2 });
    expect(describeSteadiness(s)).toBe(
      'mean 1,000 tx/s, 700–1,300, 0% of seconds 0–2 within ±25% (worst 30%, cv 0.30)',
    );
  });
});
