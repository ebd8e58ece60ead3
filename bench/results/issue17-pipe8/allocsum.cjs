// Self bytes allocated per function and per file, and inclusive, from a sampling heap profile.
const fs = require('fs');
const p = JSON.parse(fs.readFileSync(process.argv[2]));
const top = +(process.argv[3] || 40);
const self = new Map(), file = new Map(), incl = new Map();
let total = 0;
function walk(n, stack) {
  const cf = n.callFrame;
  const name = `${cf.functionName || '(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`;
  const size = n.selfSize;
  total += size;
  self.set(name, (self.get(name) || 0) + size);
  const f = cf.url.split('/').slice(-3).join('/') || cf.functionName;
  file.set(f, (file.get(f) || 0) + size);
  const st = new Set(stack); st.add(name);
  n._sum = size;
  for (const c of n.children) { walk(c, st); n._sum += c._sum; }
  if (!stack.has(name)) incl.set(name, (incl.get(name) || 0) + n._sum);
}
walk(p.head, new Set());
const pr = (m, k) => { console.log(`--- ${k}`); for (const [a, v] of [...m].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log((100 * v / total).toFixed(1).padStart(6), a); };
console.log(`total sampled ${(total / 1e6).toFixed(1)} MB`);
pr(self, 'self by function'); pr(file, 'self by file'); pr(incl, 'inclusive');
