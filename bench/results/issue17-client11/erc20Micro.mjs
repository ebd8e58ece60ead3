// (client11) issue17-client5's micro, contract calls only (the mix's transactions with data), on one
// warm RemoteState: what a client's pre-execution of an ERC-20 call costs past its reads. Run from
// the worktree's root: node bench/results/issue17-client11/erc20Micro.mjs (ROUNDS passes over the calls).
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RemoteState, ShardedStorage, SlotPredictor, defaultSlotPredictorOptions, speculate, firstReads } from '@monsoon/client';
import { EvmPool, defaultChainRules, makeCommon, nativeCustomCrypto, decodeSignedTx, recoverSenders } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { genesisState, parseGenesis, StorageServiceDefinition } from '@monsoon/protocol';
import { AccountSet, buildGenesis, TrafficGenerator } from '@monsoon/workload';
// (pipe8) The stand-in shared with bench/results/issue17-pipe8/pathMicro.mjs; the path is from a tree's root.
import { storageStandIn } from '../issue17-pipe8/storageStandIn.mjs';
const N = Number(process.env.ACCOUNTS ?? 20000), TXS = Number(process.env.TXS ?? 10000), BLOCK = 1000, CONC = 200;
const rules = { ...defaultChainRules };
const common = makeCommon(rules.chainId, nativeCustomCrypto);
const accounts = await AccountSet.create({ seed: new TextEncoder().encode('client5-micro'), count: N, cacheDir: join(tmpdir(), 'client5-micro-accounts') });
const genesis = parseGenesis(buildGenesis(accounts, { chainId: rules.chainId }));
const state = genesisState(genesis, { hash: keccak });
const root = state.root();
const blockHash = new Uint8Array(32).fill(0xbb);
let serverMs = 0;
const server = new Server();
const standIn = storageStandIn(state, blockHash);
server.addService(StorageServiceDefinition, {
  getShardRoots: standIn.getShardRoots,
  batchGet(call, cb) {
    const t0 = process.cpuUsage();
    try { standIn.batchGet(call, cb); } catch (e) { console.error('stand-in', e); cb(e); }
    const d = process.cpuUsage(t0); serverMs += (d.user + d.system) / 1000;
  },
});
const port = await new Promise((res, rej) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))));
const gen = new TrafficGenerator({ chainId: rules.chainId, seed: new TextEncoder().encode('client5-micro') }, { accounts });
const all = gen.take(TXS).map((t) => decodeSignedTx(t.raw, common));
const txs = all.filter((t) => t.data.length > 0);
const senders = recoverSenders(txs);
const storage = await ShardedStorage.connect([`127.0.0.1:${port}`]);
const evms = new EvmPool(common, 8);
const slots = new SlotPredictor(defaultSlotPredictorOptions, keccak);
const env = { number: 2n, timestamp: 1_700_000_000n, coinbase: new Uint8Array(20).fill(0xcb), gasLimit: 30_000_000n };
const at = { blockHash, stateRoot: root };
async function one(remote, i) {
  const tx = txs[i], from = senders[i];
  const { read } = await remote.withState(at, [{ address: from, slots: [], code: false }, ...firstReads(tx, from, env.coinbase, slots.predict(tx, from))], (t) => t.getAccount(from));
  const s = await speculate(remote, at, env, rules, common, tx, from, evms, read, slots);
  if (s.outcome.status !== 'included') throw new Error(`tx ${i}: ${s.outcome.status} ${s.outcome.error?.message}`);
  return s.served.byteSize;
}
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const remote = new RemoteState(storage, { compactLevels: 2, maxCachedNodes: 200_000 });
async function pass() {
  for (let c = 0; c < txs.length; c += CONC) {
    const idx = []; for (let i = c; i < Math.min(txs.length, c + CONC); i++) idx.push(i);
    await Promise.all(idx.map((i) => one(remote, i)));
  }
}
await pass(); await pass(); // warm-up: JIT, the predictor learns, the cache fills
serverMs = 0;
const calls0 = remote.counters?.calls;
const c0 = process.cpuUsage(); const w0 = performance.now();
for (let r = 0; r < ROUNDS; r++) await pass();
const cpu = process.cpuUsage(c0); const wall = performance.now() - w0;
const n = txs.length * ROUNDS;
const cpuUs = (cpu.user + cpu.system) / n, srvUs = (serverMs * 1000) / n;
console.log(JSON.stringify({ calls: txs.length, runs: n, cpuUsPerCall: +cpuUs.toFixed(1), standInUsPerCall: +srvUs.toFixed(1), wallUsPerCall: +((wall * 1000) / n).toFixed(1), load1m: (await import('node:os')).loadavg()[0] }));
storage.close(); server.forceShutdown(); process.exit(0);
