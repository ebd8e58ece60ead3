import type { ProgressCallback } from './accounts.js';

/**
 * A {@link ProgressCallback} that redraws one status line (`label: done/total (pct%)`) on a
 * terminal, at most every 200 ms plus once at the end, or `undefined` when `stream` is not a
 * TTY, so long jobs show progress interactively and stay quiet in CI and in logs.
 */
export function ttyProgress(
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
): ProgressCallback | undefined {
  if (!stream.isTTY) return undefined;
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (done < total && now - last < 200) return;
    last = now;
    const pct = total === 0 ? 100 : Math.floor((100 * done) / total);
    stream.write(`\r${label}: ${done}/${total} (${pct}%)${done >= total ? '\n' : ''}`);
  };
}
