// A BatchGet's account part as a storage node reads it, in the tree of the build at <repo root>:
// getProveMany (one walk per key) where the build has it, else get() of each key then proveMany
// (main). 100K accounts in one tree whose nodes were rewritten over 60 snapshots (spread over the
// heap, as a storage node's are after blocks); 400 batches of 200 random keys, 8 passes. Prints CPU
// µs per key (median of the passes), bytes allocated per key (V8's sampling heap profiler, objects
// collected included) and a digest of every answer (the same in both builds).
//   node --expose-gc bench/results/storage-s16/walkMicro.mjs <repo root>
import { createHash } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
const root = process.argv[2];
const dsm = await import(pathToFileURL(join(root, 'packages/dsm-tree/dist/index.js')).href);
const { keccak } = await import(pathToFileURL(join(root, 'native/keccak/dist/index.js')).href);
let seed = 7;
const rnd = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return seed >>> 0; };
const bytes = (n) => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = rnd() & 255; return b; };
const st = new dsm.StateTree({ hash: keccak });
const keys = [];
for (let i = 0; i < 100_000; i++) {
  const a = bytes(20);
  keys.push(keccak.keccak256(a));
  st.putAccount(a, dsm.makeAccount({ nonce: 1n, balance: BigInt(rnd()) }));
}
st.rootBin();
let cur = st;
for (let b = 0; b < 60; b++) {
  cur = cur.snapshot();
  for (let i = 0; i < 3000; i++) cur.accounts.put(keys[rnd() % keys.length], bytes(70));
  cur.rootBin();
}
const t = cur.accounts;
const batches = [];
for (let i = 0; i < 400; i++) {
  const ks = Array.from({ length: 200 }, () => keys[rnd() % keys.length]);
  ks.push(bytes(32)); // an absent key
  batches.push(ks);
}
const one = typeof t.getProveMany === 'function';
const read = one
  ? (ks) => { const v = []; const bag = t.getProveMany(ks, 0, v); return [v, bag]; }
  : (ks) => { const v = ks.map((k) => t.get(k)); return [v, t.proveMany(ks, 0)]; };
const h = createHash('sha256');
for (const ks of batches) for (const part of read(ks)) for (const x of part) h.update(x === undefined ? 'none' : Buffer.from(x));
const digest = h.digest('hex').slice(0, 16);
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
const perKey = [];
for (let r = 0; r < 8; r++) {
  globalThis.gc?.();
  const c = cpu();
  for (const ks of batches) read(ks);
  perKey.push(+((cpu() - c) / (batches.length * ks0())).toFixed(3));
}
function ks0() { return batches[0].length; }
const s = new Session();
s.connect();
await s.post('HeapProfiler.enable');
await s.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
for (let r = 0; r < 2; r++) for (const ks of batches) read(ks);
const { profile } = await s.post('HeapProfiler.stopSampling');
let total = 0;
(function walk(n) { total += n.selfSize ?? 0; for (const c of n.children ?? []) walk(c); })(profile.head);
const med = [...perKey].sort((a, b) => a - b)[perKey.length >> 1];
console.log(JSON.stringify({ build: one ? 'getProveMany' : 'get+proveMany', usPerKey: med, passes: perKey, allocBytesPerKey: Math.round(total / (2 * batches.length * ks0())), digest }));
