/** The live status line of a load run on a terminal. */
import type { LoadProgress } from './loadDriver.js';

/** `12.3 s run · sent 61,200 · committed 60,950 (4,980/s) · p50 81 ms p99 190 ms · outstanding 250 · rejected 0`. */
export function formatLoadProgress(p: LoadProgress): string {
  const int = (n: number) => Math.round(n).toLocaleString('en-US');
  const latency =
    p.recentP50Ms === null ? 'p50 – p99 –' : `p50 ${int(p.recentP50Ms)} ms p99 ${int(p.recentP99Ms ?? 0)} ms`;
  return (
    `${(p.elapsedMs / 1000).toFixed(1)} s ${p.phase} · sent ${int(p.submitted)} · committed ${int(p.committed)} ` +
    `(${int(p.recentCommittedPerSecond)}/s) · ${latency} · outstanding ${int(p.outstanding)} · ` +
    `rejected ${int(p.rejected)}${p.failed > 0 ? ` · failed ${int(p.failed)}` : ''}`
  );
}

/** Redraws the line on `stream`; `end()` finishes it. */
export interface LoadProgressLine {
  update(p: LoadProgress): void;
  end(): void;
}

/**
 * A status line redrawn on each progress snapshot, or undefined when `stream` is not a TTY (as
 * {@link ttyProgress}: interactive runs show progress, CI and logs stay quiet).
 */
export function ttyLoadProgress(stream: NodeJS.WriteStream = process.stderr): LoadProgressLine | undefined {
  if (!stream.isTTY) return undefined;
  let drawn = false;
  return {
    update(p) {
      const line = formatLoadProgress(p);
      const width = stream.columns ?? 0;
      stream.write(`\r${width > 1 ? line.slice(0, width - 1) : line}\x1b[K`);
      drawn = true;
    },
    end() {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}
