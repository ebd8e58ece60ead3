/**
 * How steady a run's committed rate was: the per-second committed counts after warm-up, against
 * their mean (issue 17's goal: every second within ±25% of the mean). Seconds of the drain are
 * left out: the load stops there, so the rate falls by design.
 */
import type { LoadResult, SecondSample } from './loadResult.js';

export interface SteadinessOptions {
  /** Seconds at the start left out (the pipeline filling). Default 5. */
  readonly warmupSeconds: number;
  /** Seconds counted end before this one (the run phase's length, whole seconds). */
  readonly untilSecond: number;
  /** The band around the mean a steady second stays in, as a fraction. Default 0.25. */
  readonly tolerance: number;
}

export interface Steadiness {
  /** First and one-past-last second counted. */
  readonly fromSecond: number;
  readonly untilSecond: number;
  readonly meanPerSecond: number;
  readonly minPerSecond: number;
  readonly maxPerSecond: number;
  /** Coefficient of variation: standard deviation / mean. */
  readonly cv: number;
  /** Largest |second − mean| / mean. */
  readonly worstDeviation: number;
  readonly tolerance: number;
  /** Share of the counted seconds within ±tolerance of the mean (1: all of them). */
  readonly withinTolerance: number;
}

/**
 * The steadiness of `series` (one sample per second, as a LoadResult holds them; a second with
 * no sample counts as 0 committed). Null when no second is left to count or nothing was committed.
 */
export function steadiness(
  series: readonly SecondSample[],
  opts: Partial<SteadinessOptions> & Pick<SteadinessOptions, 'untilSecond'>,
): Steadiness | null {
  const warmup = opts.warmupSeconds ?? 5;
  const tolerance = opts.tolerance ?? 0.25;
  if (!(warmup >= 0) || !(tolerance > 0) || !Number.isInteger(opts.untilSecond)) {
    throw new RangeError(
      `steadiness: expected warmupSeconds ≥ 0, tolerance > 0 and a whole untilSecond, found ${warmup}, ${tolerance}, ${opts.untilSecond}`,
    );
  }
  const from = Math.ceil(warmup);
  const until = opts.untilSecond;
  if (until <= from) return null;
  const counts = new Array<number>(until - from).fill(0);
  for (const s of series) if (s.t >= from && s.t < until) counts[s.t - from] = s.committed;
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
  if (mean === 0) return null;
  const variance = counts.reduce((a, c) => a + (c - mean) ** 2, 0) / counts.length;
  const deviations = counts.map((c) => Math.abs(c - mean) / mean);
  return {
    fromSecond: from,
    untilSecond: until,
    meanPerSecond: mean,
    minPerSecond: Math.min(...counts),
    maxPerSecond: Math.max(...counts),
    cv: Math.sqrt(variance) / mean,
    worstDeviation: Math.max(...deviations),
    tolerance,
    withinTolerance: deviations.filter((d) => d <= tolerance).length / counts.length,
  };
}

/** {@link steadiness} of a run's series over its run phase (the drain left out), 5 s of warm-up. */
export function runSteadiness(r: LoadResult, opts: Partial<SteadinessOptions> = {}): Steadiness | null {
  return steadiness(r.series, { untilSecond: Math.floor(r.timing.runMs / 1000), ...opts });
}

/** One line: "mean 1,752 tx/s, 1,204–2,310, 86% of seconds 5–30 within ±25% (worst 34%)". */
export function describeSteadiness(s: Steadiness | null): string {
  if (s === null) return 'n/a (nothing committed after warm-up)';
  const int = (n: number) => Math.round(n).toLocaleString('en-US');
  const pct = (f: number) => `${Math.round(f * 100)}%`;
  return (
    `mean ${int(s.meanPerSecond)} tx/s, ${int(s.minPerSecond)}–${int(s.maxPerSecond)}, ` +
    `${pct(s.withinTolerance)} of seconds ${s.fromSecond}–${s.untilSecond} within ±${pct(s.tolerance)} ` +
    `(worst ${pct(s.worstDeviation)}, cv ${s.cv.toFixed(2)})`
  );
}
