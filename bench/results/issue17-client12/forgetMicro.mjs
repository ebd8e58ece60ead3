// (client12) TxPool.forgetMined with 20,000 senders held (each with a 'sent' transaction, none forgotten) and 2,000 that
// go each round, 500 rounds; CPU per call. Run from a worktree's root:
// node bench/results/issue17-client12/forgetMicro.mjs
import { TxPool, defaultTxPoolOptions } from '@monsoon/client';
// Distinct bytes for each seed: the seed big-endian, then a fill.
const rnd = (n, seed) => { const b = new Uint8Array(n).fill(0x5a); new DataView(b.buffer).setUint32(0, seed); return b; };
const pool = new TxPool({ ...defaultTxPoolOptions, globalSlots: 1e6, globalQueue: 1e6 });
const held = Array.from({ length: 20000 }, (_, i) => ({ hash: rnd(32, 7e5 + i), sender: rnd(20, i + 1), nonce: 0n, maxFeePerGas: 10n, maxPriorityFeePerGas: 1n, cost: 1n }));
for (const tx of held) { pool.add(tx, { nonce: 0n, balance: 10n }); const e = pool.promote(tx.sender); pool.accepted(e.tx.hash); }
let seq = 0; const N = 500; let us = 0;
for (let r = 0; r < N + 50; r++) {
  for (let i = 0; i < 2000; i++) { const tx = { hash: rnd(32, 1e7 + seq), sender: rnd(20, 1e6 + seq), nonce: 0n, maxFeePerGas: 10n, maxPriorityFeePerGas: 1n, cost: 1n }; seq++; pool.add(tx, { nonce: 0n, balance: 10n }); pool.promote(tx.sender); pool.included(tx.hash, BigInt(r)); }
  const t0 = process.cpuUsage(); pool.forgetMined(BigInt(r)); const c = process.cpuUsage(t0); if (r >= 50) us += c.user + c.system;
}
console.log(`forgetMined µs per call (22,000 senders held): ${(us / N).toFixed(1)}`);
