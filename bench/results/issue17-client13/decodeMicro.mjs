// (client13) The client's bulk decode: decodeWithSenders over batches of 256 signed transactions
// (2/3 ERC-20-shaped EIP-1559 calls, 1/3 legacy transfers), as SendTransactions hands them over.
// Prints per transaction: bytes allocated (heapUsed delta over a run with no GC: big fixed semi-space)
// in the decode alone and in decode+recovery, and CPU µs of decode+recovery and of the decode alone.
// Run from a worktree's root: node --expose-gc --max-semi-space-size=256 --min-semi-space-size=256 \
//   bench/results/issue17-client13/decodeMicro.mjs  (env R: rounds, default 20)
import * as client from '@monsoon/client';
import * as ex from '@monsoon/execution';
import * as workload from '@monsoon/workload';
const common = ex.makeCommon(ex.defaultChainRules);
const chainId = ex.defaultChainRules.chainId;
const N = 256;
const txs = [];
for (let i = 0; i < N; i++) {
  const key = new Uint8Array(32).fill(0); key[31] = 1 + (i % 200); key[0] = 7;
  const to = new Uint8Array(20).fill(i & 0xff);
  const fields = i % 3 === 2
    ? { type: 'legacy', chainId, nonce: BigInt(i * 7), gasPrice: 2_000_000_000n, gasLimit: 21000n, to, value: 12345n, data: new Uint8Array(0) }
    : { type: 'eip1559', chainId, nonce: BigInt(i), maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, gasLimit: 60000n, to, value: 0n, data: workload.encodeTokenTransfer(to, 1000n + BigInt(i)) };
  txs.push(workload.signTransaction(fields, key).raw);
}
const R = Number(process.env.R ?? 20);
const decodeOnly = () => { let k = 0; for (const raw of txs) { const t = ex.decodeSignedTx(raw, common); k += t.type; } return k; };
const both = () => client.decodeWithSenders(txs, common).length;
for (let i = 0; i < 50; i++) { decodeOnly(); both(); }
function allocPer(fn, reps) {
  globalThis.gc(); globalThis.gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < reps; i++) fn();
  const after = process.memoryUsage().heapUsed;
  return (after - before) / (reps * N);
}
const a1 = []; const a2 = []; const cpu = []; const dcpu = [];
for (let r = 0; r < R; r++) {
  a1.push(allocPer(decodeOnly, 20));
  a2.push(allocPer(both, 20));
  const c0 = process.cpuUsage();
  for (let i = 0; i < 40; i++) both();
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / (40 * N));
  const d0 = process.cpuUsage();
  for (let i = 0; i < 200; i++) decodeOnly();
  const d = process.cpuUsage(d0);
  dcpu.push((d.user + d.system) / (200 * N));
}
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
console.log(JSON.stringify({ decodeBytesPerTx: Math.round(med(a1)), decodeAndRecoverBytesPerTx: Math.round(med(a2)), cpuUsPerTx: +med(cpu).toFixed(2), decodeCpuUsPerTx: +med(dcpu).toFixed(2), min: { d: Math.round(Math.min(...a1)), b: Math.round(Math.min(...a2)) } }));
