// node --max-semi-space-size=32 bench/results/storage-s17/rootMicro.mjs <repo root>  (A/B: two built trees in turn)
// A state root's cost, build at <root>: 100K distinct accounts, 60 blocks of 2,000 updates (fresh
// values each) on snapshots; from block 10 on, CPU per update of applying, of root(), and of the
// keccak256Tree calls inside root(). (storage-s16's applyMicro drew its accounts from
// `seed * 1103515245` in doubles, which loses bits: it had ~1,200 distinct accounts, not 100K.)
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.argv[2];
const imp = (p) => import(pathToFileURL(join(root, p)).href);
const { StateTree, makeAccount } = await imp('packages/dsm-tree/dist/index.js');
const { applyAccountUpdate } = await imp('packages/protocol/dist/index.js');
const { keccak } = await imp('native/keccak/dist/index.js');
let seed = 1;
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
const bytes = (n) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = rnd() >>> 24;
  return b;
};
const B = 60, U = 2000, WARM = 10;
let calls = 0, inputs = 0, treeUs = 0;
const counted = {
  ...keccak,
  keccak256Tree: (d, o, p, n, out) => {
    calls++;
    inputs += n;
    const t0 = process.cpuUsage();
    const r = keccak.keccak256Tree(d, o, p, n, out);
    const t = process.cpuUsage(t0);
    if (calls > WARM + 1) treeUs += t.user + t.system;
    return r;
  },
};
const st = new StateTree({ hash: counted });
const addrs = [];
for (let i = 0; i < 100000; i++) {
  const a = bytes(20);
  addrs.push(a);
  st.putAccount(a, makeAccount({ nonce: 1n, balance: BigInt(rnd()) * 1000n }));
}
st.root();
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
let cur = st, tApply = 0, tRoot = 0, last = '';
for (let b = 0; b < B; b++) {
  const u = [];
  for (let i = 0; i < U; i++)
    u.push({ deleted: false, address: addrs[(rnd() >>> 8) % addrs.length], nonce: BigInt(b + 2), balance: BigInt(rnd()) + 1n, code: undefined, clearStorage: false, storage: [] });
  const c0 = cpu();
  const next = cur.snapshot();
  const keys = keccak.keccak256Batch(u.map((a) => a.address));
  u.forEach((a, i) => applyAccountUpdate(next, a, keys.subarray(32 * i, 32 * i + 32)));
  const c1 = cpu();
  last = Buffer.from(next.root()).toString('hex');
  const c2 = cpu();
  if (b >= WARM) {
    tApply += c1 - c0;
    tRoot += c2 - c1;
  }
  cur = next;
}
const per = (us) => +(us / ((B - WARM) * U)).toFixed(3);
console.log(JSON.stringify({ applyUsPerUpdate: per(tApply), rootUsPerUpdate: per(tRoot), treeUsPerUpdate: per(treeUs), nodesHashed: inputs, root: last.slice(0, 16) }));
