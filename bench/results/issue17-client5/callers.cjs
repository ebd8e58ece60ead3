// Callers (2 levels) of functions whose name matches, within a window. node callers.cjs file from to regex
const fs = require('fs');
const p = JSON.parse(fs.readFileSync(process.argv[2]));
const from = +process.argv[3], to = +process.argv[4], re = new RegExp(process.argv[5]);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children || []) parent.set(c, n.id);
let t = p.startTime; const ts = p.timeDeltas.map((d) => (t += d));
const name = (id) => { const c = byId.get(id).callFrame; return `${c.functionName || '(anon)'} ${c.url.split('/').pop()}:${c.lineNumber+1}`; };
const agg = new Map(); let busy = 0;
for (let i = 0; i < p.samples.length; i++) {
  const age = (p.endTime - ts[i]) / 1e6; if (age > from || age < to) continue;
  const d = p.timeDeltas[i + 1] ?? 1000; const id = p.samples[i];
  if (byId.get(id).callFrame.functionName !== '(idle)') busy += d;
  // find the deepest frame on the stack matching
  let x = id; const chain = [];
  while (x !== undefined) { chain.push(x); x = parent.get(x); }
  const k = chain.findIndex((c) => re.test(name(c)));
  if (k < 0) continue;
  const key = chain.slice(k, k + 5).map(name).join(' < ');
  agg.set(key, (agg.get(key) || 0) + d);
}
for (const [k, v] of [...agg].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((100*v/busy).toFixed(2).padStart(6), k);
