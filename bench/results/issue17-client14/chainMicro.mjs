// (client14) What following the chain keeps: 120 streamed blocks of 2,000 transactions (15% with an
// ERC-20 Transfer log), each checked and added to a ChainView with the client's default window, as
// the chain follower does. Prints CPU per block, scavenges / mark-compacts over the run, and the
// heap the view holds at the end (after a full collection) per transaction held.
// Run from a worktree's root: node --expose-gc --max-semi-space-size=64 bench/results/issue17-client14/chainMicro.mjs
import * as client from '@monsoon/client';
import { encodeReceipt, receiptsRoot, transactionsRoot } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { encodeHeader } from '@monsoon/protocol';
import { countGc } from './gcCounter.mjs';

const TXS = 2_000;
const BLOCKS = 120;
let seed = 1;
const rnd = (n) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    b[i] = seed >>> 24;
  }
  return b;
};
const token = rnd(20);
const blocks = [];
let parent = new Uint8Array(32);
for (let k = 0; k < BLOCKS; k++) {
  const txs = [];
  const receipts = [];
  let gas = 0n;
  for (let i = 0; i < TXS; i++) {
    const erc20 = i % 7 === 0;
    txs.push(Uint8Array.of(0x02, ...rnd(erc20 ? 180 : 112)));
    gas += erc20 ? 51_000n : 21_000n;
    receipts.push({
      type: 2,
      status: 1,
      cumulativeGasUsed: gas,
      logs: erc20 ? [{ address: token, topics: [rnd(32), rnd(32), rnd(32)], data: rnd(32) }] : [],
    });
  }
  const header = {
    parentHash: parent,
    miner: new Uint8Array(20),
    stateRoot: rnd(32),
    transactionsRoot: transactionsRoot(txs),
    receiptsRoot: receiptsRoot(receipts),
    difficulty: 0n,
    number: BigInt(k + 1),
    gasLimit: 30_000_000n,
    gasUsed: gas,
    timestamp: BigInt(k + 1),
    extraData: new Uint8Array(0),
    nonce: new Uint8Array(8),
  };
  const headerRlp = encodeHeader(header);
  parent = keccak.keccak256(headerRlp);
  // As a stream delivers it: one message's bytes, its fields views into it.
  const parts = [headerRlp, ...txs, ...receipts.map((r) => encodeReceipt(r))];
  const msg = new Uint8Array(parts.reduce((t, p) => t + p.length, 0));
  const views = [];
  let at = 0;
  for (const p of parts) {
    msg.set(p, at);
    views.push(msg.subarray(at, at + p.length));
    at += p.length;
  }
  blocks.push({ msg, views });
}
globalThis.gc();
const heap0 = process.memoryUsage().heapUsed;
const gc = countGc();
const chain = new client.ChainView();
const t0 = process.cpuUsage();
for (const { views } of blocks) {
  const b = { headerRlp: views[0], transactions: views.slice(1, 1 + TXS), receipts: views.slice(1 + TXS) };
  chain.add(client.clientBlockOf(b));
}
const c = process.cpuUsage(t0);
const gcs = await gc.done();
blocks.length = 0;
globalThis.gc();
const held = process.memoryUsage().heapUsed - heap0;
console.log(
  `CPU per block ${((c.user + c.system) / 1000 / BLOCKS).toFixed(2)} ms; ${gcs}; heap held per transaction ${(held / chain.transactionCount).toFixed(0)} B (${chain.transactionCount} held)`,
);
