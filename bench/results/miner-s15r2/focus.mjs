import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const focus = process.argv[3]; const top = Number(process.argv[4] ?? 40);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const key = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`;
const self = new Map(), incl = new Map(); let total = 0;
for (let i = 0; i < p.samples.length; i++) {
  const dt = p.timeDeltas[i + 1] ?? p.timeDeltas[i];
  const id = p.samples[i];
  let inF = false; for (let x = id; x !== undefined; x = parent.get(x)) if (byId.get(x).callFrame.functionName === focus) { inF = true; break; }
  if (!inF) continue;
  total += dt; const k = key(byId.get(id)); self.set(k, (self.get(k) ?? 0) + dt);
  const seen = new Set();
  for (let x = id; x !== undefined; x = parent.get(x)) { const kk = key(byId.get(x)); if (seen.has(kk)) continue; seen.add(kk); incl.set(kk, (incl.get(kk) ?? 0) + dt); }
}
const pr = (m, t) => { console.log(`== ${t} (${(total/1e6).toFixed(2)} s)`); [...m].sort((a,b)=>b[1]-a[1]).slice(0, top).forEach(([k,v])=>console.log(`${(100*v/total).toFixed(1).padStart(5)}% ${k}`)); };
pr(self, 'self'); pr(incl, 'incl');
