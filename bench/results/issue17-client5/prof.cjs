// Preloaded through NODE_OPTIONS=--require: --cpu-prof is refused there. Profiles this process, written on exit.
const inspector = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');
const dir = process.env.PROF_DIR || '/tmp/client5-prof';
const s = new inspector.Session();
s.connect();
s.post('Profiler.enable');
s.post('Profiler.setSamplingInterval', { interval: 1000 });
s.post('Profiler.start');
let done = false;
function write() {
  if (done) return; done = true;
  s.post('Profiler.stop', (err, r) => {
    if (err) return;
    const name = `${path.basename(process.argv[1] || 'node')}-${process.argv.slice(2).join(' ').replace(/[^a-z0-9-]+/gi, '_').slice(0, 80)}-${process.pid}.cpuprofile`;
    fs.writeFileSync(path.join(dir, name), JSON.stringify(r.profile));
  });
}
process.on('exit', write);
