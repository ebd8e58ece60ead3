/**
 * The run's inclusions: when each was seen and its submit→inclusion latency, appended as they
 * come, in growable typed arrays (a run may commit millions). An inclusion undone by a reorg is
 * struck out, not removed, so indices stay valid.
 */

import type { SecondSample } from './loadResult.js';
import { percentile } from './percentiles.js';

export class LatencyLog {
  private at = new Float64Array(1024);
  private latency = new Float64Array(1024);
  private n = 0;

  /** Entries appended so far (struck-out ones included). */
  get length(): number {
    return this.n;
  }

  /** Records an inclusion `atMs` after the start with `latencyMs`; returns its index. */
  add(atMs: number, latencyMs: number): number {
    if (this.n === this.at.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.at = grow(this.at);
      this.latency = grow(this.latency);
    }
    this.at[this.n] = atMs;
    this.latency[this.n] = latencyMs;
    return this.n++;
  }

  /** Strikes out entry `index` (its inclusion was reorged away). */
  strike(index: number): void {
    this.latency[index] = Number.NaN;
  }

  /** Latencies of the live entries from `index` on. */
  latenciesFrom(index = 0): Float64Array {
    return this.latency.subarray(index, this.n).filter((v) => !Number.isNaN(v));
  }

  /** Time of the last live inclusion, ms after the start (0 when none). */
  lastAt(): number {
    let last = 0;
    for (let i = 0; i < this.n; i++)
      if (!Number.isNaN(this.latency[i]!) && this.at[i]! > last) last = this.at[i]!;
    return last;
  }

  /**
   * One {@link SecondSample} per second of `seconds`: inclusions and their p50/p99 by the second
   * they were seen in, with `submitted[s]` sends.
   */
  series(seconds: number, submitted: readonly number[]): SecondSample[] {
    const buckets: number[][] = Array.from({ length: seconds }, () => []);
    for (let i = 0; i < this.n; i++) {
      const v = this.latency[i]!;
      if (Number.isNaN(v)) continue;
      const s = Math.min(seconds - 1, Math.floor(this.at[i]! / 1000));
      buckets[s]!.push(v);
    }
    return buckets.map((b, t) => {
      const sorted = Float64Array.from(b).sort();
      return {
        t,
        submitted: submitted[t] ?? 0,
        committed: b.length,
        p50Ms: b.length === 0 ? null : percentile(sorted, 50),
        p99Ms: b.length === 0 ? null : percentile(sorted, 99),
      };
    });
  }
}
