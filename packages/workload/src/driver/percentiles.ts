/** Latency percentiles, by the nearest-rank method (a percentile is always a measured value). */

/** p50/p95/p99, mean and max of a set of latencies, in ms. */
export interface LatencySummary {
  readonly samples: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly mean: number;
  readonly max: number;
}

/**
 * The nearest-rank `p`-th percentile (0 < p ≤ 100) of ascending `sorted`: the smallest value
 * with at least p% of the values at or below it. NaN for no values.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** The summary of `values` (any order; not modified), or undefined when there are none. */
export function summarizeLatency(values: ArrayLike<number>): LatencySummary | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    samples: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    mean: sum / sorted.length,
    max: sorted[sorted.length - 1]!,
  };
}
