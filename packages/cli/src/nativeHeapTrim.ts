/**
 * A role's malloc heap trimmed on a timer. Under the main job's load a third of the clients' and
 * the miner's glibc main arena was freed memory kept resident (malloc_stats, miner: 205 MB
 * system, 127 MB in use; one malloc_trim(0) from gdb dropped its RSS 518 → 464 MiB, a client's
 * 700 → 637), and that high water rose with each burst of frees. A trim every 30 s hands the holes
 * back, off the JS thread (releasing 100+ MiB takes ~100 ms of madvise calls): 24-45 MiB less
 * native memory per role (bench/results/soak-malloc-trim).
 */
import { trimNativeHeap } from '@monsoon/rdma';
import { ClusterError, ClusterErrorCode } from './clusterError.js';

/** Seconds between trims of a role's malloc heap; `0` never trims. */
export const MALLOC_TRIM_ENV = 'MONSOON_MALLOC_TRIM_SECONDS';

/** How often a role trims its malloc heap unless {@link MALLOC_TRIM_ENV} says otherwise. */
export const DEFAULT_MALLOC_TRIM_SECONDS = 30;

/** The trim interval `env` asks for, in ms (0: off); throws on a value that is not a number ≥ 0. */
export function mallocTrimIntervalMs(env: NodeJS.ProcessEnv): number {
  const raw = env[MALLOC_TRIM_ENV];
  const seconds = raw === undefined || raw === '' ? DEFAULT_MALLOC_TRIM_SECONDS : Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new ClusterError(
      ClusterErrorCode.BadOptions,
      `${MALLOC_TRIM_ENV}: expected seconds ≥ 0 (0: never), found "${raw}"`,
      { name: MALLOC_TRIM_ENV, value: raw },
    );
  return seconds * 1000;
}

/**
 * Trims this process's malloc heap every {@link mallocTrimIntervalMs} (in the addon's worker
 * thread; one trim at a time; a timer that does not keep the process alive); nothing when it is 0
 * or the addon is not built. Returns the timer.
 */
export function startNativeHeapTrim(
  env: NodeJS.ProcessEnv = process.env,
  trim: () => Promise<boolean> | undefined = trimNativeHeap,
): NodeJS.Timeout | undefined {
  const ms = mallocTrimIntervalMs(env);
  if (ms === 0) return undefined;
  let running = trim();
  if (running === undefined) return undefined;
  const settle = (): void => {
    running = undefined;
  };
  running.then(settle, settle);
  return setInterval(() => {
    if (running !== undefined) return;
    running = trim();
    running?.then(settle, settle);
  }, ms).unref();
}
