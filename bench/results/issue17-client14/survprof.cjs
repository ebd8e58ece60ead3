// Sampling heap profile of objects that outlive the young generation (objects a scavenge collects are
// left out; those a mark-compact collects are kept): what a process promotes, by allocation site.
// env: ALLOC_DIR, ALLOC_START_S, ALLOC_STOP_S, SURV_ALL=1 (include minor-collected too)
const inspector = require('node:inspector');
const fs = require('node:fs');
const dir = process.env.ALLOC_DIR ?? '/tmp/alloc';
const start = Number(process.env.ALLOC_START_S ?? 8) * 1000;
const stop = Number(process.env.ALLOC_STOP_S ?? 25) * 1000;
const s = new inspector.Session();
s.connect();
setTimeout(() => {
  s.post('HeapProfiler.enable', () =>
    s.post('HeapProfiler.startSampling', {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: process.env.SURV_MODE !== 'live',
      includeObjectsCollectedByMinorGC: process.env.SURV_MODE === 'all',
    }),
  );
}, start).unref();
setTimeout(() => {
  s.post('HeapProfiler.stopSampling', (err, r) => {
    if (err) { console.error('survprof', err); return; }
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(`${dir}/${process.env.SURV_MODE ?? 'surv'}.${process.pid}.heapprofile`, JSON.stringify(r.profile));
  });
}, stop).unref();
