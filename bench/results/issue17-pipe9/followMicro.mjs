// Chain following in one process, CPU per block transaction: BLOCKS blocks of TXS transactions of
// the workload's mix (15% ERC-20 with a Transfer log), each streamed block decoded from its
// protobuf message, checked (clientBlockOf: roots recomputed, receipts decoded) and added to a
// ChainView with its log index (ClientEvents), as a client follows a miner. REPS rounds, a fresh
// view each. Run in the tree to measure: node bench/results/issue17-pipe9/followMicro.mjs
import { join } from 'node:path';
import { tmpdir, loadavg } from 'node:os';
import { ChainView, ClientEvents, clientBlockOf, defaultClientEventsOptions } from '@monsoon/client';
import { defaultChainRules, encodeReceipt, orderedTrieRoot, transactionsRoot } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { blockWithReceiptsFromProto, blockWithReceiptsToProto, encodeHeader, headerHash } from '@monsoon/protocol';
import { AccountSet, TrafficGenerator } from '@monsoon/workload';
const BLOCKS = Number(process.env.BLOCKS ?? 20), TXS = Number(process.env.TXS ?? 2000), REPS = Number(process.env.REPS ?? 5);
const seed = new TextEncoder().encode('pipe9-follow');
const accounts = await AccountSet.create({ seed, count: 20000, cacheDir: join(tmpdir(), 'pipe9-follow-accounts') });
const gen = new TrafficGenerator({ chainId: defaultChainRules.chainId, seed }, { accounts });
const token = new Uint8Array(20).fill(0x70);
const topic = (b) => new Uint8Array(32).fill(b);
let parent = new Uint8Array(32);
const messages = [];
for (let b = 1; b <= BLOCKS; b++) {
  const txs = gen.take(TXS);
  let gas = 0n;
  const receipts = txs.map((t) => {
    const erc20 = t.kind !== 'transfer';
    gas += erc20 ? 51_000n : 21_000n;
    return encodeReceipt({ type: t.raw[0] < 0x7f ? t.raw[0] : 0, status: 1, cumulativeGasUsed: gas,
      logs: erc20 ? [{ address: token, topics: [topic(1), topic(2), topic(3)], data: topic(4) }] : [] });
  });
  const raws = txs.map((t) => t.raw);
  const header = { parentHash: parent, ommersHash: new Uint8Array(32), miner: new Uint8Array(20).fill(0xcb), stateRoot: new Uint8Array(32).fill(b),
    transactionsRoot: transactionsRoot(raws), receiptsRoot: orderedTrieRoot(receipts), logsBloom: new Uint8Array(256), difficulty: 0n,
    number: BigInt(b), gasLimit: 30_000_000n, gasUsed: gas, timestamp: BigInt(b), extraData: new Uint8Array(0), nonce: new Uint8Array(8) };
  parent = headerHash(header, keccak);
  const pb = blockWithReceiptsToProto({ headerRlp: encodeHeader(header), transactions: raws, receipts });
  messages.push(pb);
}
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
const rows = [];
for (let r = 0; r < REPS; r++) {
  const chain = new ChainView({ window: 1024, maxTransactions: 1_000_000 });
  const events = new ClientEvents({ ...defaultClientEventsOptions, baseFeePerGas: 7n }, { chain });
  const t0 = cpu();
  for (const m of messages) chain.add(clientBlockOf(blockWithReceiptsFromProto(m)));
  const us = (cpu() - t0) / (BLOCKS * TXS);
  rows.push(us);
  events.close();
}
console.log(`follow µs/tx per round: ${rows.map((x) => x.toFixed(2)).join(' ')} (median ${rows.sort((a, b) => a - b)[rows.length >> 1].toFixed(2)}), load ${loadavg()[0].toFixed(1)}`);
