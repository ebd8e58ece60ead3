/**
 * Timed rounds: a round is a fixed amount of work that returns how many operations it did;
 * rounds repeat (after untimed warm-up rounds) until both a minimum time and a minimum count
 * are reached. The reported rate is the median round's: each round is long enough to include
 * the garbage collection its work causes, and the median keeps one round slowed by a noisy
 * neighbour (or one lucky round) from moving the result.
 */
export interface Rate {
  /** Operations per second of the median round. */
  perSec: number;
  /** Operations per second over all timed rounds together. */
  meanPerSec: number;
  /** The fastest single round, in operations per second. */
  bestPerSec: number;
  ops: number;
  seconds: number;
  rounds: number;
}

export interface RoundOptions {
  /** Keep timing rounds until this much time has been measured. */
  minSeconds: number;
  /** …and at least this many rounds (default 1). */
  minRounds?: number;
  /** Stop after this many rounds even when minSeconds is not reached (default unlimited). */
  maxRounds?: number;
  /** Untimed rounds first, for the JIT and caches (default 1). */
  warmupRounds?: number;
}

/** Seconds since `start` (a process.hrtime.bigint() value). */
export function secondsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function summarize(perRound: { ops: number; seconds: number }[]): Rate {
  let ops = 0;
  let seconds = 0;
  for (const r of perRound) {
    ops += r.ops;
    seconds += r.seconds;
  }
  const rates = perRound.map((r) => r.ops / r.seconds);
  return {
    perSec: median(rates),
    meanPerSec: ops / seconds,
    bestPerSec: Math.max(...rates),
    ops,
    seconds,
    rounds: perRound.length,
  };
}

function done(o: RoundOptions, rounds: number, seconds: number): boolean {
  if (o.maxRounds !== undefined && rounds >= o.maxRounds) return true;
  return seconds >= o.minSeconds && rounds >= (o.minRounds ?? 1);
}

/** Times a synchronous round repeatedly; see the module comment. */
export function measureSync(round: () => number, o: RoundOptions): Rate {
  for (let i = 0; i < (o.warmupRounds ?? 1); i++) round();
  const perRound: { ops: number; seconds: number }[] = [];
  let total = 0;
  while (!done(o, perRound.length, total)) {
    const start = process.hrtime.bigint();
    const ops = round();
    const seconds = secondsSince(start);
    perRound.push({ ops, seconds });
    total += seconds;
  }
  return summarize(perRound);
}

/** Times an asynchronous round repeatedly; see the module comment. */
export async function measureAsync(round: () => Promise<number>, o: RoundOptions): Promise<Rate> {
  for (let i = 0; i < (o.warmupRounds ?? 1); i++) await round();
  const perRound: { ops: number; seconds: number }[] = [];
  let total = 0;
  while (!done(o, perRound.length, total)) {
    const start = process.hrtime.bigint();
    const ops = await round();
    const seconds = secondsSince(start);
    perRound.push({ ops, seconds });
    total += seconds;
  }
  return summarize(perRound);
}

/** Median of a non-empty list. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
