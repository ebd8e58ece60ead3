/** Waiting for a condition in tests: poll it until it holds, or fail saying what never happened. */
import { setTimeout as sleep } from 'node:timers/promises';

/** How long {@link until} waits, how often it looks, and what it waits for (for the error). */
export interface UntilOptions {
  /** What is awaited, for the timeout's message: `the transfer in storage`. */
  what: string;
  /** Give up after this long. */
  timeoutMs: number;
  /** Look again after this long. */
  intervalMs?: number;
}

/** Polling interval when none is given. */
export const DEFAULT_UNTIL_INTERVAL_MS = 50;

/**
 * Resolves with the first value of `condition` that is neither `undefined` nor `false` (it may be
 * async); rejects with `timed out after <timeoutMs> ms waiting for <what>` (carrying the last
 * error `condition` threw, if any) once `timeoutMs` has passed.
 */
export async function until<T>(
  condition: () => T | undefined | false | Promise<T | undefined | false>,
  opts: UntilOptions,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await condition();
      if (v !== undefined && v !== false) return v;
      lastError = undefined;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `timed out after ${opts.timeoutMs} ms waiting for ${opts.what}`,
        lastError === undefined ? undefined : { cause: lastError },
      );
    }
    await sleep(opts.intervalMs ?? DEFAULT_UNTIL_INTERVAL_MS);
  }
}
