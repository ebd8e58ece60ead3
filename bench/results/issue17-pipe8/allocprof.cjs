// Preloaded (--require): sampling allocation profile including collected objects, written on exit.
const inspector = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');
const dir = process.env.ALLOC_DIR || '/tmp/pipe8-alloc';
const s = new inspector.Session();
s.connect();
s.post('HeapProfiler.enable');
s.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
let done = false;
function write() {
  if (done) return; done = true;
  s.post('HeapProfiler.stopSampling', (err, r) => {
    if (err) return;
    fs.writeFileSync(path.join(dir, `alloc-${process.pid}.heapprofile`), JSON.stringify(r.profile));
  });
}
process.on('exit', write);
process.on('SIGTERM', () => { write(); process.exit(0); });
