/**
 * Prints the e2e pairs of this directory: `node summarize.mjs <dir> <tag>` reads
 * <tag>-{main,branch}-<i>.json (bench/e2e.ts output) and prints, per run, committed tx/s and
 * CPU ms per committed tx of each role, then the medians per side and branch/main ratios.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, tag] = process.argv.slice(2);
const rows = { main: [], branch: [] };
for (let i = 1; ; i++) {
  const files = ['main', 'branch'].map((s) => join(dir, `${tag}-${s}-${i}.json`));
  if (!files.every((f) => existsSync(f))) break;
  for (const [k, side] of ['main', 'branch'].entries()) {
    const m = JSON.parse(readFileSync(files[k], 'utf8')).monsoon;
    const cpu = m.cpuMsPerTx;
    const total = Object.values(cpu).reduce((a, b) => a + b, 0);
    const subs = m.counters['client/monsoon_client_submissions_total'];
    const txs = m.counters['client/monsoon_client_transactions_submitted_total'];
    rows[side].push({ i, tps: m.committedPerSec, ...cpu, total, perSubmit: txs / subs });
  }
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const keys = ['tps', 'miner', 'client', 'storage', 'driver', 'total', 'perSubmit'];
for (const side of ['main', 'branch'])
  for (const r of rows[side])
    console.log(`${side} ${r.i}: ${keys.map((k) => `${k} ${r[k]?.toFixed(3)}`).join(', ')}`);
for (const k of keys) {
  const a = median(rows.main.map((r) => r[k]));
  const b = median(rows.branch.map((r) => r[k]));
  const pairs = rows.main.map((r, j) => (rows.branch[j][k] / r[k]).toFixed(3)).join(' ');
  console.log(`median ${k}: main ${a.toFixed(3)}, branch ${b.toFixed(3)}, branch/main ${(b / a).toFixed(3)} (pairs ${pairs})`);
}
