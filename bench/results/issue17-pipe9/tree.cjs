// Top-down tree under functions matching regex: node tree.cjs file from to regex depth minPct
const fs = require('fs');
const p = JSON.parse(fs.readFileSync(process.argv[2]));
const from = +process.argv[3], to = +process.argv[4], re = new RegExp(process.argv[5]);
const depth = +(process.argv[6] || 4), minPct = +(process.argv[7] || 0.5);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
let t = p.startTime; const ts = p.timeDeltas.map((d) => (t += d));
const self = new Map();
let busy = 0;
for (let i = 0; i < p.samples.length; i++) {
  const age = (p.endTime - ts[i]) / 1e6; if (age > from || age < to) continue;
  const d = p.timeDeltas[i + 1] ?? 1000; self.set(p.samples[i], (self.get(p.samples[i]) || 0) + d);
  if (byId.get(p.samples[i]).callFrame.functionName !== '(idle)') busy += d;
}
const tot = new Map();
function total(id) { if (tot.has(id)) return tot.get(id); const n = byId.get(id); let s = self.get(id) || 0; for (const c of n.children || []) s += total(c); tot.set(id, s); return s; }
const name = (n) => { const c = n.callFrame; return `${c.functionName || '(anon)'} ${c.url.split('/').slice(-1)[0]}:${c.lineNumber + 1}`; };
// merge matching roots by name: aggregate subtrees by name path
function agg(ids, d, prefix) {
  const groups = new Map();
  for (const id of ids) { const n = byId.get(id); const k = name(n); if (!groups.has(k)) groups.set(k, []); groups.get(k).push(id); }
  const rows = [...groups].map(([k, g]) => [k, g, g.reduce((s, id) => s + total(id), 0)]).sort((a, b) => b[2] - a[2]);
  for (const [k, g, s] of rows) {
    if (100 * s / busy < minPct) continue;
    console.log(`${prefix}${(100 * s / busy).toFixed(1)} ${k}`);
    if (d < depth) agg(g.flatMap((id) => byId.get(id).children || []), d + 1, prefix + '  ');
  }
}
// find outermost matching nodes
const parent = new Map(); for (const n of p.nodes) for (const c of n.children || []) parent.set(c, n.id);
const roots = [];
for (const n of p.nodes) { if (!re.test(name(n))) continue; let x = parent.get(n.id), inner = false; while (x !== undefined) { if (re.test(name(byId.get(x)))) { inner = true; break; } x = parent.get(x); } if (!inner) roots.push(n.id); }
console.log(`busy ${(busy/1e6).toFixed(2)} s`);
agg(roots, 1, '');
