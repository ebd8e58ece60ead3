// node --max-semi-space-size=32 bench/results/storage-s16/mapMicro.mjs <repo root>  (A/B: two built trees in turn; whole-process CPU with /usr/bin/time)
// Apply blocks, then proof batches over the same tree, then apply again: does apply slow after proofs?
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
const keys = addrs.map((a) => keccak.keccak256(a));
const mkBlocks = (n) => Array.from({ length: n }, (_, b) => Array.from({ length: 2000 }, () => ({ deleted: false, address: addrs[rnd() % addrs.length], nonce: BigInt(b + 2), balance: BigInt(rnd()) + 1n, code: undefined, clearStorage: false, storage: [] })));
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
let cur = st;
const apply = (blocks) => { const c = cpu(); for (const u of blocks) { const next = cur.snapshot(); const ks = keccak.keccak256Batch(u.map((a) => a.address)); u.forEach((a, i) => applyAccountUpdate(next, a, ks.subarray(32 * i, 32 * i + 32))); next.root(); cur = next; } return +((cpu() - c) / (blocks.length * 2000)).toFixed(2); };
const before = [apply(mkBlocks(10)), apply(mkBlocks(10)), apply(mkBlocks(10))];
const c = cpu();
for (let b = 0; b < 300; b++) { const ks = Array.from({ length: 300 }, () => keys[rnd() % keys.length]); cur.accounts.proveMany(ks, 0); }
const proveUs = +((cpu() - c) / (300 * 300)).toFixed(2);
const after = [apply(mkBlocks(10)), apply(mkBlocks(10)), apply(mkBlocks(10))];
console.log(JSON.stringify({ applyBefore: before, proveUsPerKey: proveUs, applyAfter: after }));
