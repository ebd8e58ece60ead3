// (client12) orderedRoot of a block's transactions (1,200 of 110 bytes) and receipts (1,200, 15% with a
// log), both roots, 2,000 blocks after 200 of warm-up; process CPU per block. Run from a worktree's root:
// node --trace-gc bench/results/issue17-client12/rootMicro.mjs (count Scavenge lines for the GC figure).
import { orderedRoot } from '@monsoon/dsm-tree';
const r = (n) => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = (Math.random() * 256) | 0; return b; };
const txs = Array.from({ length: 1200 }, () => r(110)); const rcs = Array.from({ length: 1200 }, () => r(Math.random() < 0.15 ? 370 : 270));
for (let i = 0; i < 200; i++) { orderedRoot(txs); orderedRoot(rcs); }
const t0 = process.cpuUsage(); const N = 2000;
for (let i = 0; i < N; i++) { orderedRoot(txs); orderedRoot(rcs); }
const c = process.cpuUsage(t0); console.log(`µs per block (both roots): ${((c.user + c.system) / N).toFixed(1)}`);
