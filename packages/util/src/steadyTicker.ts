/**
 * A repeating timer on a fixed grid: tick k is due at `origin + k·interval`, whenever the one
 * before it ran. `setInterval` schedules each tick an interval after the previous one actually
 * ran, so on a busy event loop every late tick pushes all later ones back: a miner sealing a block
 * a second drifted ~10–50 ms a block, and a block stream read in one-second buckets then saw a
 * second with no block next to one with two. A tick missed entirely (the loop blocked past a whole
 * interval) is skipped, not run twice.
 */
export interface SteadyTicker {
  stop(): void;
}

/** The clock and timer it runs on (the real ones by default; tests pass fakes). */
export interface TickerClock {
  now(): number;
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: TickerClock = {
  now: () => performance.now(),
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Calls `tick` every `intervalMs` on a grid from now (the first an interval from now) until stopped. */
export function steadyTicker(
  intervalMs: number,
  tick: () => void,
  clock: TickerClock = realClock,
): SteadyTicker {
  if (!(intervalMs > 0)) throw new RangeError(`steadyTicker: interval must be > 0 ms, found ${intervalMs}`);
  const origin = clock.now();
  let k = 0;
  let stopped = false;
  let handle: unknown;
  const arm = () => {
    // The next grid point still ahead (a late tick does not move the grid; a missed one is skipped).
    k = Math.max(k + 1, Math.floor((clock.now() - origin) / intervalMs) + 1);
    handle = clock.setTimeout(run, Math.max(0, origin + k * intervalMs - clock.now()));
  };
  const run = () => {
    if (stopped) return;
    arm();
    tick();
  };
  arm();
  return {
    stop: () => {
      stopped = true;
      clock.clearTimeout(handle);
    },
  };
}
