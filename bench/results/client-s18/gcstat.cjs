// For a client role under the e2e bench: between GC_START_S and GC_STOP_S of its life, GC by kind,
// the process's CPU, bytes allocated (sampling heap profiler, collected objects included) and the
// client's accepted transactions (its own /metrics). Writes <GC_DIR>/gc.<pid>.json.
const { PerformanceObserver, constants } = require('node:perf_hooks');
const fs = require('node:fs');
const http = require('node:http');
const inspector = require('node:inspector');
const dir = process.env.GC_DIR ?? '/tmp/gcstat';
const start = Number(process.env.GC_START_S ?? 10) * 1000, stop = Number(process.env.GC_STOP_S ?? 30) * 1000;
const kinds = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };
let on = false; const sum = {}; let cpu0; let acc0;
const obs = new PerformanceObserver((l) => { if (!on) return; for (const e of l.getEntries()) { const k = kinds[e.detail?.kind ?? e.kind] ?? String(e.detail?.kind); const s = (sum[k] ??= { n: 0, ms: 0 }); s.n++; s.ms += e.duration; } });
obs.observe({ entryTypes: ['gc'] });
const servers = [];
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...a) { servers.push(this); return listen.apply(this, a); };
function accepted() {
  return Promise.all(servers.filter((s) => s.address()).map((s) => new Promise((res) => {
    http.get({ host: '127.0.0.1', port: s.address().port, path: '/metrics' }, (r) => { let b = ''; r.on('data', (c) => (b += c)); r.on('end', () => res(b)); }).on('error', () => res(''));
  }))).then((bodies) => { for (const b of bodies) { const m = /^monsoon_client_transactions_accepted_total(?:\{[^}]*\})? (\d+)/m.exec(b); if (m) return Number(m[1]); } return NaN; });
}
const s = new inspector.Session(); s.connect();
// The window opens once the client has accepted GC_FROM_TXS transactions (the driver's load is on), for GC_WINDOW_S seconds.
const fromTxs = Number(process.env.GC_FROM_TXS ?? 4000), windowS = Number(process.env.GC_WINDOW_S ?? 15);
const poll = setInterval(async () => { const a = await accepted(); if (!(a >= fromTxs) || on || acc0 !== undefined) return; clearInterval(poll);
  acc0 = a; on = true; cpu0 = process.cpuUsage();
  s.post('HeapProfiler.enable', () => s.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }));
  setTimeout(stopWindow, windowS * 1000).unref(); }, 250); poll.unref();
const stopWindow = async () => { on = false; const c = process.cpuUsage(cpu0); const acc = (await accepted()) - acc0;
  s.post('HeapProfiler.stopSampling', (err, r) => {
    let bytes = 0; (function w(n) { bytes += n.selfSize ?? 0; for (const k of n.children ?? []) w(k); })(r.profile.head);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(`${dir}/alloc.${process.pid}.heapprofile`, JSON.stringify(r.profile));
    fs.writeFileSync(`${dir}/gc.${process.pid}.json`, JSON.stringify({ accepted: acc, cpuMs: (c.user + c.system) / 1000, allocMiB: bytes / 2 ** 20, gc: sum }));
  }); };
