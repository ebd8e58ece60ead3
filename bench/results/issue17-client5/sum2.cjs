// Window-limited self time per function/package, plus inclusive time of named functions.
// Usage: node sum2.cjs file fromSecBeforeEnd toSecBeforeEnd [top]
const fs = require('fs');
const p = JSON.parse(fs.readFileSync(process.argv[2]));
const from = +process.argv[3], to = +process.argv[4], top = +(process.argv[5] || 50);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children || []) parent.set(c, n.id);
let t = p.startTime; const ts = p.timeDeltas.map((d) => (t += d));
const end = p.endTime;
const per = new Map();
for (let i = 0; i < p.samples.length; i++) {
  const age = (end - ts[i]) / 1e6; if (age > from || age < to) continue;
  const d = p.timeDeltas[i + 1] ?? 1000; per.set(p.samples[i], (per.get(p.samples[i]) || 0) + d);
}
function pkgOf(cf) {
  const url = cf.url;
  if (!url) return cf.functionName.startsWith('(') ? cf.functionName : '(native)';
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  let m = url.match(/node_modules\/((@[^/]+\/)?[^/]+)/g); if (m) return m[m.length-1].replace('node_modules/','');
  m = url.match(/\/(packages|native)\/([^/]+)\//); if (m) return '@monsoon/' + m[2];
  if (/\/bench\//.test(url)) return 'bench';
  return url;
}
let total = 0, idle = 0; const fn = new Map(), pkg = new Map(), incl = new Map();
for (const [id, d] of per) {
  const n = byId.get(id); const cf = n.callFrame; total += d;
  if (cf.functionName === '(idle)') { idle += d; continue; }
  const f = `${cf.functionName || '(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber+1}`;
  fn.set(f, (fn.get(f) || 0) + d); const k = pkgOf(cf); pkg.set(k, (pkg.get(k) || 0) + d);
  const seen = new Set(); let x = id;
  while (x !== undefined) { const c = byId.get(x).callFrame; const name = `${c.functionName || '(anon)'} ${c.url.split('/').pop()}`; if (!seen.has(name)) { seen.add(name); incl.set(name, (incl.get(name) || 0) + d); } x = parent.get(x); }
}
const busy = total - idle;
console.log(`window ${from}-${to}s before end: total ${(total/1e6).toFixed(2)} s, busy ${(busy/1e6).toFixed(2)} s`);
console.log('--- self by package (% of busy)');
for (const [k, v] of [...pkg].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log((100*v/busy).toFixed(1).padStart(6), k);
console.log('--- self by function');
for (const [k, v] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log((100*v/busy).toFixed(1).padStart(6), k);
console.log('--- inclusive');
for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top*2)) console.log((100*v/busy).toFixed(1).padStart(6), k);
