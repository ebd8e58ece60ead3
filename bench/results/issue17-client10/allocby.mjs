// node allocby.mjs file.heapprofile  -> for each self site among the top, the (parent > self) pairs (2 levels)
import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const key = (f) => `${f.functionName || '(anon)'} ${f.url.split('/').slice(-1).join('/')}:${f.lineNumber}`;
const pairs = new Map(); let total = 0;
(function walk(n, stack) {
  const k = key(n.callFrame); const sz = n.selfSize ?? 0; total += sz;
  const st = [...stack, k];
  if (sz > 0) { const kk = st.slice(-3).join(' < ').split(' < ').reverse().join(' < '); pairs.set(kk, (pairs.get(kk) ?? 0) + sz); }
  for (const c of n.children ?? []) walk(c, st);
})(p.head, []);
[...pairs].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 40)).forEach(([k, v]) => console.log(`${(100 * v / total).toFixed(1).padStart(5)}% ${k}`));
