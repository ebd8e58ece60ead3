// Allocation sampling (objects collected by GC included) for a role under load.
// node --require=/work/wt/tools/allocprof.cjs ...   env: ALLOC_DIR (default /tmp/alloc), ALLOC_START_S (8), ALLOC_STOP_S (25)
// Writes <dir>/alloc.<pid>.heapprofile at ALLOC_STOP_S: open with /work/wt/tools/allocsum.mjs.
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
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: false,
    }),
  );
}, start).unref();
setTimeout(() => {
  s.post('HeapProfiler.stopSampling', (err, r) => {
    if (err) { console.error('allocprof', err); return; }
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(`${dir}/alloc.${process.pid}.heapprofile`, JSON.stringify(r.profile));
  });
}, stop).unref();
