// (client14) Scavenges and mark-compacts (count, ms) from now on, for the micros here.
import { PerformanceObserver } from 'node:perf_hooks';

/** Starts counting; `done()` stops and says what was counted. */
export function countGc() {
  const gc = { minor: [0, 0], major: [0, 0] };
  const obs = new PerformanceObserver((l) => {
    for (const e of l.getEntries()) {
      const k = (e.detail?.kind ?? e.kind) === 1 ? 'minor' : 'major';
      gc[k][0]++;
      gc[k][1] += e.duration;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    async done() {
      await new Promise((r) => setTimeout(r, 50));
      obs.disconnect();
      return `scavenges ${gc.minor[0]} (${gc.minor[1].toFixed(0)} ms), mark-compacts ${gc.major[0]} (${gc.major[1].toFixed(0)} ms)`;
    },
  };
}
