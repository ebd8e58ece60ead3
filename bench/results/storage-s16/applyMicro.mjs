// node --max-semi-space-size=32 bench/results/storage-s16/applyMicro.mjs <repo root>  (A/B: two built trees in turn)
// Apply path alone, build at <root>: 100K accounts (balances < 2^53 as the storage bench's), 30 blocks of 2,000 updates on snapshots, root each.
import { join } from 'node:path'; import { pathToFileURL } from 'node:url';
const root = process.argv[2];
const { StateTree, makeAccount } = await import(pathToFileURL(join(root, 'packages/dsm-tree/dist/index.js')).href);
const { applyAccountUpdate } = await import(pathToFileURL(join(root, 'packages/protocol/dist/index.js')).href);
const { keccak } = await import(pathToFileURL(join(root, 'native/keccak/dist/index.js')).href);
let seed = 1; const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0);
const bytes = (n) => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = rnd() & 255; return b; };
const st = new StateTree({ hash: keccak }); const addrs = [];
for (let i = 0; i < 100000; i++) { const a = bytes(20); addrs.push(a); st.putAccount(a, makeAccount({ nonce: 1n, balance: BigInt(rnd()) * 1000n })); }
st.root();
const blocks = [];
for (let b = 0; b < 30; b++) { const u = []; for (let i = 0; i < 2000; i++) u.push({ deleted: false, address: addrs[rnd() % addrs.length], nonce: BigInt(b + 2), balance: BigInt(rnd()) + 1n, code: undefined, clearStorage: false, storage: [] }); blocks.push(u); }
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
let cur = st; const res = [];
for (let pass = 0; pass < 3; pass++) {
  const c = cpu();
  for (const u of blocks) { const next = cur.snapshot(); const keys = keccak.keccak256Batch(u.map((a) => a.address)); u.forEach((a, i) => applyAccountUpdate(next, a, keys.subarray(32 * i, 32 * i + 32))); next.root(); cur = next; }
  res.push(+((cpu() - c) / (blocks.length * 2000)).toFixed(2));
}
console.log(JSON.stringify({ usPerUpdate: res }));
