// Per-second series of cumulative GC counts/ms by kind, CPU ms and heap spaces, appended to
// GC_DIR/gc.<pid>.jsonl (one JSON line a second), for picking a steady window afterwards.
const { PerformanceObserver, performance } = require('node:perf_hooks');
const fs = require('node:fs');
const v8 = require('node:v8');
const dir = process.env.GC_DIR ?? '/tmp/gc';
const names = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };
const acc = {};
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const k = names[e.detail?.kind ?? e.kind] ?? String(e.detail?.kind);
    const a = (acc[k] ??= { n: 0, ms: 0 });
    a.n++;
    a.ms += e.duration;
  }
});
obs.observe({ entryTypes: ['gc'] });
fs.mkdirSync(dir, { recursive: true });
const file = `${dir}/gc.${process.pid}.jsonl`;
fs.writeFileSync(file, JSON.stringify({ argv: process.argv.slice(1) }) + '\n');
const t = setInterval(() => {
  const c = process.cpuUsage();
  const sp = {};
  for (const s of v8.getHeapSpaceStatistics()) sp[s.space_name] = Math.round(s.space_used_size / 1e5) / 10;
  fs.appendFileSync(file, JSON.stringify({ t: Math.round(performance.now()), cpuMs: (c.user + c.system) / 1000, gc: structuredClone(acc), mb: sp, ext: Math.round(process.memoryUsage().external / 1e6) }) + '\n');
}, 1000);
t.unref();
