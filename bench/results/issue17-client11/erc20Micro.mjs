// (client11) A client's pre-execution of the workload mix's contract calls (its transactions with
// data), CONC at once, over and over on one warm RemoteState (no fetches after the warm-up): what a
// contract call costs past its reads, without a cluster. The storage node is the in-process stand-in
// of issue17-pipe8. Run from the worktree's root:
//   node bench/results/issue17-client11/erc20Micro.mjs     (env ROUNDS: measured passes, default 6;
//   ALLOC=<file>: sample the measured passes' allocations, collected ones too, into <file>)
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as client from '@monsoon/client';
import * as ex from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import * as protocol from '@monsoon/protocol';
import * as workload from '@monsoon/workload';
import { storageStandIn } from '../issue17-pipe8/storageStandIn.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 6);
const CONC = 200;
const seed = new TextEncoder().encode('client5-micro');
const rules = { ...ex.defaultChainRules };
const common = ex.makeCommon(rules.chainId, ex.nativeCustomCrypto);
const accounts = await workload.AccountSet.create({ seed, count: 20_000, cacheDir: join(tmpdir(), 'client5-micro-accounts') });
const state = protocol.genesisState(protocol.parseGenesis(workload.buildGenesis(accounts, { chainId: rules.chainId })), { hash: keccak });
const at = { blockHash: new Uint8Array(32).fill(0xbb), stateRoot: state.root() };
const server = new Server();
server.addService(protocol.StorageServiceDefinition, storageStandIn(state, at.blockHash));
const port = await new Promise((ok, no) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? no(e) : ok(p))));
const mix = new workload.TrafficGenerator({ chainId: rules.chainId, seed }, { accounts }).take(10_000);
const txs = mix.map((t) => ex.decodeSignedTx(t.raw, common)).filter((t) => t.data.length > 0);
const senders = ex.recoverSenders(txs);
const storage = await client.ShardedStorage.connect([`127.0.0.1:${port}`]);
const remote = new client.RemoteState(storage, { compactLevels: 2, maxCachedNodes: 200_000 });
const evms = new ex.EvmPool(common, 8);
const slots = new client.SlotPredictor(client.defaultSlotPredictorOptions, keccak);
const env = { number: 2n, timestamp: 1_700_000_000n, coinbase: new Uint8Array(20).fill(0xcb), gasLimit: 30_000_000n };

/** Admission's read with the first keys, then the pre-execution on its tree (as a client does). */
async function preExecute(i) {
  const tx = txs[i];
  const from = senders[i];
  const first = [{ address: from, slots: [], code: false }, ...client.firstReads(tx, from, env.coinbase, slots.predict(tx, from))];
  const { read } = await remote.withState(at, first, (t) => t.getAccount(from));
  const s = await client.speculate(remote, at, env, rules, common, tx, from, evms, read, slots);
  if (s.outcome.status !== 'included') throw new Error(`call ${i}: ${s.outcome.status} ${s.outcome.error?.message}`);
}
async function pass() {
  for (let c = 0; c < txs.length; c += CONC) {
    const wave = [];
    for (let i = c; i < Math.min(txs.length, c + CONC); i++) wave.push(preExecute(i));
    await Promise.all(wave);
  }
}

await pass(); // warm-up: JIT, the predictor learns, the cache fills
await pass();
const session = process.env.ALLOC ? new Session() : undefined;
const post = (method, args) => new Promise((ok, no) => session.post(method, args, (e, r) => (e ? no(e) : ok(r))));
if (session) {
  session.connect();
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
}
const cpu0 = process.cpuUsage();
const wall0 = performance.now();
for (let r = 0; r < ROUNDS; r++) await pass();
const cpu = process.cpuUsage(cpu0);
const wall = performance.now() - wall0;
if (session) writeFileSync(process.env.ALLOC, JSON.stringify((await post('HeapProfiler.stopSampling')).profile));
const runs = txs.length * ROUNDS;
console.log(JSON.stringify({ calls: txs.length, runs, cpuUsPerCall: +((cpu.user + cpu.system) / runs).toFixed(1), wallUsPerCall: +((wall * 1000) / runs).toFixed(1), load1m: loadavg()[0] }));
storage.close();
server.forceShutdown();
process.exit(0);
