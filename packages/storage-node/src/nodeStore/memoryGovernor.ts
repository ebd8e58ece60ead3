/**
 * Holds a tiered node's whole process to its memory budget, not only the nodes it accounts.
 * The store counts the bytes of its resident nodes and cache, but the process grows by more:
 * V8's committed heap (garbage between collections, free pages it keeps), LevelDB's memtables
 * and block cache, malloc arenas. At 10M accounts and a 331 MiB budget that was 2x the budget.
 * So the governor samples the process' anonymous RSS (file pages LevelDB maps are the OS page
 * cache, not ours: see rssAnonBytes) against the RSS the process had before its state, and
 * sets the share of the budget the nodes may take: down, in proportion, when the process stayed
 * past budget × (1 + overhead) + fixedBytes for `window` samples; back up, a step a sample, once
 * it is comfortably below. Why a window: the RSS between two collections holds the garbage of
 * every request since the last (at 1M accounts the anonymous RSS swung 50-250 MiB at one share),
 * and cutting the nodes for garbage V8 is about to collect costs hits and frees nothing. Why a
 * fixed part: a node process grows by ~90 MiB whatever its budget (V8's young generation and
 * code, LevelDB's memtables and table indexes; measured at a 3.4 MiB budget), which no share of
 * the nodes can give back. The decisions are a function of the samples (`decide`), so they are
 * tested without a clock.
 */
import { readFileSync } from 'node:fs';

export interface MemoryGovernorOptions {
  /** The budget: bytes the process may grow by over its RSS before the state was loaded. */
  budget: number;
  /** The growth allowed beyond the budget, as a fraction of it (the "+20%"), and in bytes. */
  overhead: number;
  fixedBytes: number;
  /** Samples the growth must stay over the limit (their least) before the share is cut. */
  window: number;
  /** The nodes' share of the budget never goes below this (the top levels must stay). */
  minShare: number;
  /** How much of the budget the share regains a sample, once growth is below `calm` of the limit. */
  step: number;
  calm: number;
  /** The share falls by at most this factor a sample (RSS lags the heap by a collection). */
  maxCut: number;
}

export const defaultMemoryGovernorOptions: Omit<MemoryGovernorOptions, 'budget'> = {
  overhead: 0.2,
  fixedBytes: 96 * 1024 * 1024,
  window: 3,
  minShare: 0.1,
  step: 0.05,
  calm: 0.85,
  maxCut: 0.7,
};

/** One sample of the process: its RSS now and before its state (anonymous, see above). */
export interface MemorySample {
  rssBytes: number;
  baseRssBytes: number;
}

/** What the governor decided on a sample, for metrics and the benchmark. */
export interface GovernorState {
  /** The nodes' share of their budget, (minShare..1]. */
  share: number;
  /** Samples that cut the share, and the process' growth over its base at the last sample. */
  cuts: number;
  growthBytes: number;
  limitBytes: number;
}

export class MemoryGovernor {
  readonly opts: MemoryGovernorOptions;
  private share = 1;
  private cuts = 0;
  private growth = 0;
  private readonly recent: number[] = [];

  constructor(opts: Partial<MemoryGovernorOptions> & { budget: number }) {
    this.opts = { ...defaultMemoryGovernorOptions, ...opts };
  }

  /** The growth the process may reach: budget × (1 + overhead) + fixedBytes. */
  get limitBytes(): number {
    return this.opts.budget * (1 + this.opts.overhead) + this.opts.fixedBytes;
  }

  state(): GovernorState {
    return { share: this.share, cuts: this.cuts, growthBytes: this.growth, limitBytes: this.limitBytes };
  }

  /**
   * The nodes' new share of the budget given a sample. The growth is the least of the last
   * `window` samples'. Over the limit: cut in proportion (aiming 5% under it), by at most
   * `maxCut` a sample; below `calm` of it: regain `step`; between: hold (hysteresis).
   */
  decide(s: MemorySample): number {
    const o = this.opts;
    this.recent.push(Math.max(0, s.rssBytes - s.baseRssBytes));
    if (this.recent.length > o.window) this.recent.shift();
    const growth = Math.min(...this.recent);
    this.growth = growth;
    const limit = this.limitBytes;
    if (growth > limit && this.recent.length >= o.window) {
      const cut = Math.max(o.maxCut, (limit * 0.95) / growth);
      const next = Math.max(o.minShare, this.share * cut);
      if (next < this.share) this.cuts++;
      this.share = next;
    } else if (growth < limit * o.calm) {
      this.share = Math.min(1, this.share + o.step);
    }
    return this.share;
  }
}

/**
 * The process' anonymous resident memory (heap, buffers, LevelDB's caches and memtables; not
 * the table files LevelDB maps, which are the OS page cache), from /proc where there is one;
 * elsewhere the whole RSS.
 */
export function rssAnonBytes(): number {
  try {
    const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m !== null) return Number(m[1]) * 1024;
  } catch {
    // no /proc: the whole RSS below
  }
  return process.memoryUsage().rss;
}
