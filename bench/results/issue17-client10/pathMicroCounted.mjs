// pathMicro.mjs of bench/results/issue17-pipe8 with counters (withState calls, readAccounts calls and undefined answers, BatchGet calls, queries fetched); copy it next to that file (it imports ./storageStandIn.mjs) and run it there.
// The client's whole submit path in one process, CPU per transaction: raw transactions decoded and
// their senders recovered in batches of 100 (as SendTransactions gets them), admitted into the pool
// (sender read with the first keys), pre-executed, batched into Submit calls to a miner stand-in
// that accepts everything. Storage and miner stand-ins are gRPC servers in the same process; their
// handlers' CPU is measured and subtracted. A fresh pipeline (cold caches) every BLOCK transactions.
// Run in the tree to measure: node bench/results/issue17-pipe8/pathMicro.mjs (TXS, REPS, ACCOUNTS from the environment)
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { RemoteState, ShardedStorage, SlotPredictor, defaultSlotPredictorOptions, SubmitQueue, defaultSubmitQueueOptions,
  PoolSubmitter, defaultPoolSubmitterOptions, TxPool, defaultTxPoolOptions, ReadBackend, defaultReadBackendOptions,
  MinerPool, decodeWithSenders } from '@monsoon/client';
import { EvmPool, defaultChainRules, makeCommon, nativeCustomCrypto } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { genesisState, parseGenesis, StorageServiceDefinition, MinerServiceDefinition, submitRequestFromProto,
  submitResponseToProto, TxStatus } from '@monsoon/protocol';
import { AccountSet, buildGenesis, TrafficGenerator } from '@monsoon/workload';
import { storageStandIn } from './storageStandIn.mjs';
const K = { withState: 0, readUndef: 0, readCalls: 0, batchGet: 0, fetchQ: 0 };
{ const ws = RemoteState.prototype.withState; RemoteState.prototype.withState = function (...a) { K.withState++; return ws.apply(this, a); };
  const ra = RemoteState.prototype.readAccounts; if (ra) RemoteState.prototype.readAccounts = async function (...a) { K.readCalls++; const r = await ra.apply(this, a); if (r === undefined) K.readUndef++; return r; };
  const f = RemoteState.prototype.fetch; RemoteState.prototype.fetch = function (at, qs) { K.fetchQ += qs.length; return f.call(this, at, qs); };
  const bg = ShardedStorage.prototype.batchGet; ShardedStorage.prototype.batchGet = function (...a) { K.batchGet++; return bg.apply(this, a); }; }
const N = Number(process.env.ACCOUNTS ?? 20000), TXS = Number(process.env.TXS ?? 10000), WARM = 2000, BLOCK = 1000, REQ = 100;
const rules = { ...defaultChainRules };
const common = makeCommon(rules, nativeCustomCrypto);
const accounts = await AccountSet.create({ seed: new TextEncoder().encode('client5-micro'), count: N, cacheDir: join(tmpdir(), 'client5-micro-accounts') });
const genesis = parseGenesis(buildGenesis(accounts, { chainId: rules.chainId }));
const state = genesisState(genesis, { hash: keccak });
const root = state.root();
const blockHash = new Uint8Array(32).fill(0xbb);
let serverUs = 0;
const timed = (f) => (call, cb) => { const t0 = process.cpuUsage(); try { f(call, cb); } finally { const d = process.cpuUsage(t0); serverUs += d.user + d.system; } };
const server = new Server();
const storageHandlers = storageStandIn(state, blockHash);
server.addService(StorageServiceDefinition, {
  getShardRoots: timed(storageHandlers.getShardRoots),
  batchGet: timed(storageHandlers.batchGet),
});
let submitted = 0, bagNodes = 0;
server.addService(MinerServiceDefinition, {
  submit: timed((call, cb) => {
    const req = submitRequestFromProto(call.request);
    submitted += req.transactions.length; bagNodes += req.bag.length;
    cb(null, submitResponseToProto({ results: req.transactions.map(() => ({ txHash: new Uint8Array(32), status: TxStatus.Accepted, reason: '', staleKeys: [] })) }));
  }),
});
const port = await new Promise((res, rej) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))));
const addr = `127.0.0.1:${port}`;
// One transaction per sender, each its sender's first (the state's nonce): none waits behind a gap.
const gen = new TrafficGenerator({ chainId: rules.chainId, seed: new TextEncoder().encode('client5-micro') }, { accounts });
const all = decodeWithSenders(gen.take(TXS * 3).map((t) => t.raw), common);
const seen = new Set(); const rawsOk = [];
for (const d of all) { if (d instanceof Error) throw d; const k = Buffer.from(d.from).toString('hex'); if (d.tx.nonce === 0n && !seen.has(k)) { seen.add(k); rawsOk.push(d.tx); } if (rawsOk.length >= TXS) break; }
const head = { hash: blockHash, txHashes: [], header: { number: 1n, stateRoot: root, timestamp: 1n, miner: new Uint8Array(20).fill(0xcb), gasLimit: 30_000_000n } };
const storage = await ShardedStorage.connect([addr]);
const evms = new EvmPool(common, 256);
const slots = new SlotPredictor(defaultSlotPredictorOptions, keccak);
const encoded = rawsOk.map((t) => t.raw);
function pipeline() {
  const remote = new RemoteState(storage, { compactLevels: 2, maxCachedNodes: 200_000 });
  const counters = { submitted: 0, accepted: 0, rejectedEarly: 0, rejectedByMiner: 0, staleReplies: 0, abandoned: 0, submissions: 0, resubmissions: 0, bagBytes: 0, unbaggedWitnessBytes: 0, rawWitnessBytes: 0 };
  const chain = { requireHead: () => head, onHead: () => () => {} };
  const follower = { stateHead: () => head, onStateMoved: () => () => {}, stateChange: async () => {} };
  const q = new SubmitQueue({ ...defaultSubmitQueueOptions, rules }, { remote, chain, follower, miners: new MinerPool([addr]), common, evms, counters, slots });
  const reads = new ReadBackend({ ...defaultReadBackendOptions, rules }, { chain, remote, common });
  const pool = new TxPool(defaultTxPoolOptions);
  const ps = new PoolSubmitter({ ...defaultPoolSubmitterOptions }, { pool, submitter: q, follower, chain, reads, slots, counters });
  return { ps, counters, close: () => { ps.close(); q.close(); } };
}
async function pass(from, to) {
  for (let b = from; b < to; b += BLOCK) {
    const p = pipeline();
    const waits = [];
    for (let c = b; c < Math.min(to, b + BLOCK); c += REQ) {
      const batch = encoded.slice(c, Math.min(to, b + BLOCK, c + REQ));
      for (const d of decodeWithSenders(batch, common)) {
        if (d instanceof Error) throw d;
        waits.push(p.ps.send(d.tx, d.from, d.tx.raw, 'accepted'));
      }
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(waits);
    p.close();
  }
}
await pass(0, WARM);
serverUs = 0; submitted = 0; bagNodes = 0;
const c0 = process.cpuUsage(); const w0 = performance.now();
const REPS = Number(process.env.REPS ?? 4);
for (let r = 0; r < REPS; r++) await pass(WARM, encoded.length);
const cpu = process.cpuUsage(c0); const wall = performance.now() - w0;
const n = (encoded.length - WARM) * REPS;
const cpuUs = (cpu.user + cpu.system) / n, srvUs = serverUs / n;
console.log(JSON.stringify({ K, tree: new URL('../../..', import.meta.url).pathname, txs: n, submitted, cpuUsPerTx: +cpuUs.toFixed(1), standInUsPerTx: +srvUs.toFixed(1), clientUsPerTx: +(cpuUs - srvUs).toFixed(1), wallUsPerTx: +((wall * 1000) / n).toFixed(1), bagNodesPerTx: +(bagNodes / n).toFixed(2), load1m: loadavg()[0] }));
storage.close(); server.forceShutdown(); process.exit(0);
