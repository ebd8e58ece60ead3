/**
 * Batch verification against per-signature recovery, CPU per signature (issue 17, verify14).
 * `node bench/results/issue17-verify14/batchMicro.mjs [rounds]`: for m = 50, 165, 400 signatures of
 * distinct keys over random hashes, alternates (same process, same window) the revm addon's
 * `recoverPacked` (what miners do today) with `batchVerifyPacked` (the check alone, default window
 * and a sweep) and `recoverPackedWithKeys` (check + fresh weights + copying the keys), and
 * prints µs of process CPU (user + system) per signature and the ratio to recovery.
 */
import { randomBytes } from 'node:crypto';
import { evmAddon } from '@monsoon/evm';

const addon = evmAddon();
if (addon === undefined) throw new Error('the revm addon is not built');
const rounds = Number(process.argv[2] ?? 20);

function makeBatch(m) {
  const hashes = new Uint8Array(32 * m);
  const sigs = new Uint8Array(64 * m);
  const recids = new Uint8Array(m);
  const out = new Uint8Array(65);
  for (let i = 0; i < m; i++) {
    const h = randomBytes(32);
    hashes.set(h, 32 * i);
    addon.signRecoverable(h, randomBytes(32), out);
    sigs.set(out.subarray(0, 64), 64 * i);
    recids[i] = out[64];
  }
  const req = new Uint8Array(97 * m);
  req.set(hashes, 0);
  req.set(sigs, 32 * m);
  req.set(recids, 96 * m);
  const rec = new Uint8Array(65 * m);
  addon.recoverPacked(req, m, rec);
  if (!rec.subarray(64 * m).every((s) => s === 1)) throw new Error('a fresh signature did not recover');
  const withKeys = new Uint8Array(161 * m);
  withKeys.set(req, 0);
  withKeys.set(rec.subarray(0, 64 * m), 97 * m);
  return { req, withKeys };
}

const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

function time(fn, reps) {
  const t0 = cpu();
  for (let k = 0; k < reps; k++) fn();
  return cpu() - t0;
}

for (const m of [50, 165, 400]) {
  const batches = Array.from({ length: 4 }, () => makeBatch(m));
  const weights = new Uint8Array(randomBytes(16 * m));
  const rec = new Uint8Array(65 * m);
  const reps = Math.max(2, Math.round(4000 / m));
  const kinds = {
    recover: (b) => addon.recoverPacked(b.req, m, rec),
    withKeys: (b) => addon.recoverPackedWithKeys(b.withKeys, m, rec),
  };
  for (const w of [0, 5, 6, 7, 8, 9]) {
    kinds[`batch w${w}`] = (b) => {
      if (!addon.batchVerifyPacked(b.withKeys, m, weights, w)) throw new Error(`m=${m} w=${w}: refused`);
    };
  }
  const totals = Object.fromEntries(Object.keys(kinds).map((k) => [k, 0]));
  for (let r = 0; r < rounds; r++) {
    for (const [k, fn] of Object.entries(kinds)) {
      let j = 0;
      totals[k] += time(() => fn(batches[j++ % batches.length]), reps);
    }
  }
  const per = (k) => totals[k] / (rounds * reps * m);
  const base = per('recover');
  const line = Object.keys(kinds)
    .map((k) => `${k} ${per(k).toFixed(2)} µs (${(per(k) / base).toFixed(3)}x)`)
    .join(', ');
  console.log(`m=${m}: ${line}`);
}
