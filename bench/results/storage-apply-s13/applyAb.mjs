// A storage node's ApplyBlock step, one process, alternating: the old applyAccountUpdate (a key
// hashed for the shard check, then getAccount and putAccount: three keccaks and three walks per
// account) against the new one (the block's keys hashed in one batch, one read walk, one write
// walk), 20 blocks of 2,000 account updates over 100K accounts, the root after each block.
// CPU microseconds per account update, root included. Run from the repo root after npm run build:
//   node bench/results/storage-apply-s13/applyAb.mjs
import { StateTree, makeAccount, EMPTY_CODE_HASH } from '../../../packages/dsm-tree/dist/index.js';
import { applyAccountUpdate } from '../../../packages/protocol/dist/index.js';
import { keccak } from '../../../native/keccak/dist/index.js';
function oldApply(state, a) {
  if (a.deleted) { state.deleteAccount(a.address); return; }
  const kept = a.clearStorage ? undefined : state.getAccount(a.address)?.codeHash;
  const codeHash = a.code !== undefined ? state.putCode(a.code) : (kept ?? EMPTY_CODE_HASH);
  state.putAccount(a.address, makeAccount({ nonce: a.nonce, balance: a.balance, codeHash }));
  if (a.clearStorage) state.clearStorage(a.address);
  for (const w of a.storage) state.putStorage(a.address, w.slot, w.value);
}
let seed = 1; const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0);
const bytes = (n) => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = rnd() & 255; return b; };
const st = new StateTree(); const addrs = [];
for (let i = 0; i < 100000; i++) { const a = bytes(20); addrs.push(a); st.putAccount(a, makeAccount({ nonce: 1n, balance: 100n })); }
st.root();
const blocks = [];
for (let b = 0; b < 20; b++) { const u = []; for (let i = 0; i < 2000; i++) u.push({ deleted: false, address: addrs[rnd() % addrs.length], nonce: 2n, balance: BigInt(rnd()), code: undefined, clearStorage: false, storage: [] }); blocks.push(u); }
const run = (kind) => { const t0 = process.cpuUsage(); for (const u of blocks) { const next = st.snapshot(); if (kind === 'old') { for (const a of u) { next.hashKey(a.address); oldApply(next, a); } } else { const keys = keccak.keccak256Batch(u.map((a) => a.address)); u.forEach((a, i) => applyAccountUpdate(next, a, keys.subarray(32 * i, 32 * i + 32))); } next.root(); } const d = process.cpuUsage(t0); return (d.user + d.system) / (blocks.length * 2000); };
const res = { old: [], new: [] };
for (let r = 0; r < 6; r++) for (const k of ['old', 'new']) res[k].push(run(k).toFixed(2));
console.log('us per account update incl. root:', JSON.stringify(res));
