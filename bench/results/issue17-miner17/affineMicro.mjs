/**
 * Batch verification with affine buckets (native/evm src/batch_verify.c pippenger_affine, what
 * nodes use) against libsecp256k1's own Pippenger (Jacobian buckets), same addon, same process,
 * alternating: `node bench/results/issue17-miner17/affineMicro.mjs [rounds]`. First checks that
 * the two agree on good batches and on batches with one corrupted key (m = 1 … 300, windows 0 …
 * 8), then prints process CPU (user + system) per signature for m = 50, 134 (a Submit in the
 * e2e), 165 and 400 signatures and the ratio affine / Jacobian.
 */
import { randomBytes } from 'node:crypto';
import { evmAddon } from '@monsoon/evm';
const addon = evmAddon();
const rounds = Number(process.argv[2] ?? 10);
function makeBatch(m) {
  const hashes = new Uint8Array(32 * m), sigs = new Uint8Array(64 * m), recids = new Uint8Array(m), out = new Uint8Array(65);
  for (let i = 0; i < m; i++) {
    const h = randomBytes(32); hashes.set(h, 32 * i);
    addon.signRecoverable(h, randomBytes(32), out); sigs.set(out.subarray(0, 64), 64 * i); recids[i] = out[64];
  }
  const req = new Uint8Array(97 * m); req.set(hashes, 0); req.set(sigs, 32 * m); req.set(recids, 96 * m);
  const rec = new Uint8Array(65 * m); addon.recoverPacked(req, m, rec);
  const withKeys = new Uint8Array(161 * m); withKeys.set(req, 0); withKeys.set(rec.subarray(0, 64 * m), 97 * m);
  return withKeys;
}
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
// correctness: agree on good and corrupted batches
for (const m of [1, 2, 3, 7, 50, 134, 300]) {
  const b = makeBatch(m); const w = new Uint8Array(randomBytes(16 * m));
  for (const win of [0, 1, 2, 4, 6, 8]) {
    const a = addon.batchVerifyPacked(b, m, w, win, false), j = addon.batchVerifyPacked(b, m, w, win, true);
    if (!a || !j) throw new Error(`good batch m=${m} w=${win}: affine ${a} jacobian ${j}`);
    const bad = b.slice(); bad[97 * m + 64 * (m >> 1) + 5] ^= 1; // corrupt a key
    const a2 = addon.batchVerifyPacked(bad, m, w, win, false), j2 = addon.batchVerifyPacked(bad, m, w, win, true);
    if (a2 || j2) throw new Error(`bad batch passed m=${m} w=${win}: ${a2} ${j2}`);
  }
}
console.log('agree');
for (const m of [50, 134, 165, 400]) {
  const bs = Array.from({ length: 4 }, () => makeBatch(m)); const w = new Uint8Array(randomBytes(16 * m));
  const reps = Math.max(2, Math.round(3000 / m)); const tot = { affine: 0, jacobian: 0 };
  for (let r = 0; r < rounds; r++) for (const [k, jac] of [['jacobian', true], ['affine', false]]) {
    const t0 = cpu(); for (let i = 0; i < reps; i++) if (!addon.batchVerifyPacked(bs[i % 4], m, w, 0, jac)) throw new Error('refused');
    tot[k] += cpu() - t0;
  }
  const per = (k) => tot[k] / (rounds * reps * m);
  console.log(`m=${m}: jacobian ${per('jacobian').toFixed(2)} µs, affine ${per('affine').toFixed(2)} µs (${(per('affine') / per('jacobian')).toFixed(3)}x)`);
}
