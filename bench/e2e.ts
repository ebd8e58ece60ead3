/**
 * The whole system on this machine against the conventional way, same transactions:
 *
 *   npm run build && npm run bench -- e2e [--accounts 1000000] [--duration 60] [--concurrency 2000 | --rate N]
 *                                          [--topology deploy/topologies/default.json] [--block-gas-limit N]
 *                                          [--max-waiting N]
 *                                          [--baseline-txs 20000]
 *                                          [--disk-txs 20000] [--disk-cache-nodes 10000] [--sign-ahead N]
 *                                          [--storage-transport grpc|shm] [--role-flag <role>:<node flag>]...
 *                                          [--role-env <role>[-<i>]:<NAME>=<value>]... [--out bench/results/e2e.json]
 *                                          [--keep-logs DIR] (the roles' logs copied there)
 *
 * 1. Monsoon: the topology's cluster (storage processes, miner, clients as separate processes)
 *    at `--accounts`, the workload's mix (10% of accounts send and receive 90%, 15% ERC-20)
 *    driven closed-loop through the clients' gRPC bulk path, signed by the driver before its
 *    clock starts (`--sign-ahead`, default 6,000 a second of the run: users sign on their own
 *    machines; `--sign-ahead 0` signs in the loop, on this box's CPU, as runs before session 14
 *    did). Committed tx/s and latency come from the driver (inclusion seen in the miner's block
 *    stream, on the driver's clock); CPU per role from /proc (user + system time of each process
 *    over the run).
 * 2. Baseline: the committed blocks, in order, replayed by one process with @ethereumjs/vm over
 *    @ethereumjs/mpt (`ReferenceChain`: native keccak and secp256k1 through customCrypto, the
 *    state manager's caches on — its best configuration), from the same genesis; then, on the
 *    first blocks only, with ethereumjs' defaults. Every replayed block must give the block's
 *    state root (the run is refused otherwise). Transfers and ERC-20 calls are timed apart.
 * 3. Disk baseline: the same replay with the trie's nodes in classic-level (LevelDB) behind a
 *    cache of `--disk-cache-nodes` decoded nodes (LevelDB's 8 MiB block cache and the OS page cache
 *    besides), the state several times bigger than that cache — the conventional node as operators
 *    run it (RainBlock Fig. 6). `--disk-txs 0` skips it, `--baseline-txs 0` the in-memory one
 *    (with both 0, Monsoon alone: A/B runs of one role's CPU per transaction; `--role-flag
 *    storage:--compact-on-every-full-gc` starts a role's processes with a V8 flag, `--role-env`
 *    adds to their environment, as soak's do: bench/lib/roleOptions.ts).
 *
 * Results: bench/results/e2e.json (with the run's per-second series, how steady it was: every
 * second after 5 s of warm-up against the mean, issue 17's ±25%, and `stageMeans`: each role's
 * histograms over the run, e.g. pre-execution, accepted-to-inclusion, a Submit or BatchGet call
 * as the server saw it), its chart beside it (e2e.svg),
 * and a table on stdout. The pipeline's latency goal (p50 ≤ 1.5 block intervals at half the
 * saturation rate) is read from a run with `--rate` at half a closed-loop run's committed tx/s.
 *
 * Measured 2026-11-24 16:35–17:23 UTC (session 10, a box loaded by other jobs, load 12–21, so only
 * back-to-back pairs compare): 5,000 in flight with `--block-gas-limit 150000000` collapsed every
 * time without the clients' bound on pre-executed transactions (42–56 tx/s, 1,163–2,448 stale
 * replies in 20 s). With it (`--max-waiting 512`; the default is 1,024) the same runs gave 217–447 tx/s
 * (bench/results/e2e-s10-waiting/). `monsoon.counters` holds every role's counters over the run.
 * Measured 2026-11-24 11:34 UTC (quiet, session 8's merged tree): 1,774 committed tx/s (p50 1.01 s,
 * p99 2.17 s), in-memory baseline 494 tx/s (3.59×), disk baseline 233 tx/s (7.61×); both transports
 * alternating (`--duration 30 --baseline-txs 0 --disk-txs 0`): gRPC 1,629 / 1,655 / 1,861, shm
 * 1,774 / 1,863 / 1,844 tx/s.
 * Measured 2026-11-24 05:19–05:29 UTC (`--accounts 100000 --defaults-txs 0`, quiet 2-core VM, revm
 * the default engine): Monsoon 1,020 committed tx/s (p50 1.9 s, p99 3.4 s); the in-memory baseline
 * 537 tx/s (1.90×), the disk baseline 245 tx/s (4.16×). Earlier:
 * Measured 2026-11-22 (`--accounts 100000 --duration 60 --defaults-txs 0`, 2-core VM, nothing else
 * running): Monsoon 599 committed tx/s (36,987 txs, latency p50 2.9 s / p99 8.7 s, bag 2,204 B/tx),
 * cores used: clients 0.60 + 0.61, miner 0.33, storage 0.10 + 0.08 (the driver in this process
 * besides); the baseline replaying the same blocks 360 tx/s (transfers 483/s, ERC-20 150/s):
 * 1.66×. At 1M accounts the baseline's genesis load into @ethereumjs/mpt (1M accounts and 1M token
 * slots) had not finished after 25 minutes and ~13 GB; that run was stopped.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { credentials } from '@grpc/grpc-js';
import { Cluster, type ClusterProcess, readTopology, withStorageTransport } from '@monsoon/cli';
import { toHex } from '@monsoon/dsm-tree';
import { channelOptions } from '@monsoon/edge';
import {
  type BlockHeader,
  blockWithReceiptsFromProto,
  decodeHeader,
  headFromProto,
  MinerServiceClient,
  parseGenesis,
} from '@monsoon/protocol';
import {
  chartSvg,
  DEFAULT_TOKEN_ADDRESS,
  describeSteadiness,
  LevelTrieDb,
  ReferenceChain,
  type ReferenceChainOptions,
  runSteadiness,
  type SecondSample,
} from '@monsoon/workload';
import { clusterLoad } from './lib/clusterLoad.js';
import { cpuSeconds } from './lib/processCpu.js';
import { Progress } from './lib/progress.js';
import { roleOptions } from './lib/roleOptions.js';

const { values: args } = parseArgs({
  options: {
    accounts: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '60' },
    concurrency: { type: 'string', default: '2000' },
    rate: { type: 'string' },
    topology: { type: 'string', default: 'deploy/topologies/default.json' },
    'block-gas-limit': { type: 'string' },
    'max-waiting': { type: 'string' },
    'storage-transport': { type: 'string', default: 'grpc' },
    'baseline-txs': { type: 'string', default: '20000' },
    'defaults-txs': { type: 'string', default: '2000' },
    'disk-txs': { type: 'string', default: '20000' },
    'disk-cache-nodes': { type: 'string', default: '10000' },
    'sign-ahead': { type: 'string' },
    'role-flag': { type: 'string', multiple: true, default: [] },
    'role-env': { type: 'string', multiple: true, default: [] },
    out: { type: 'string', default: 'bench/results/e2e.json' },
    'keep-logs': { type: 'string' },
  },
});
const ACCOUNTS = Number(args.accounts);
const SECONDS = Number.parseFloat(args.duration);
const CONCURRENCY = Number(args.concurrency);
const RATE = args.rate === undefined ? undefined : Number(args.rate);
const BASELINE_TXS = Number(args['baseline-txs']);
const DEFAULTS_TXS = Number(args['defaults-txs']);
const DISK_TXS = Number(args['disk-txs']);
const DISK_CACHE_NODES = Number(args['disk-cache-nodes']);
/**
 * Transactions the driver signs before its clock starts (users sign on their own machines, not on
 * the box under test): enough for 6,000 tx/s (or --rate) over the run; more are signed as they
 * are needed. `--sign-ahead 0` signs every transaction in the loop, as before session 14.
 */
const SIGN_AHEAD =
  args['sign-ahead'] !== undefined
    ? Number(args['sign-ahead'])
    : Math.ceil(SECONDS * (RATE === undefined ? 6000 : RATE * 1.1));
if (!Number.isSafeInteger(SIGN_AHEAD) || SIGN_AHEAD < 0)
  throw new Error(`--sign-ahead: expected a whole number ≥ 0, found ${args['sign-ahead']}`);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const status = new Progress();
const say = (m: string) => status.update(m);

interface ChainBlock {
  readonly header: BlockHeader;
  readonly transactions: Uint8Array[];
}

/** The miner's head number now: the first message of its SubscribeHeads stream. */
function headNumber(client: MinerServiceClient): Promise<bigint> {
  return new Promise((resolve, reject) => {
    const call = client.subscribeHeads({});
    call.once('data', (h) => {
      resolve(headFromProto(h).number);
      call.cancel();
    });
    call.on('error', (e) => (String(e).includes('CANCELLED') ? undefined : reject(e)));
  });
}

/**
 * The canonical blocks 1 … the miner's head at the time of the call. The stream goes on with
 * live blocks after them (empty ones every block interval), so it ends at that head's number,
 * not at a pause: blocks sealed every 250 ms left no pause and the collection never ended.
 */
async function canonicalBlocks(miner: string): Promise<ChainBlock[]> {
  const client = new MinerServiceClient(miner, credentials.createInsecure(), channelOptions());
  const head = await headNumber(client).catch((e: unknown) => {
    client.close();
    throw e;
  });
  const blocks: ChainBlock[] = [];
  return new Promise((resolve, reject) => {
    const call = client.subscribeBlocks({ fromNumber: 1n });
    let done = false;
    const finish = () => {
      done = true;
      call.cancel();
      client.close();
      resolve(blocks);
    };
    if (head < 1n) {
      finish();
      return;
    }
    call.on('data', (m) => {
      if (done) return;
      const b = blockWithReceiptsFromProto(m);
      const header = decodeHeader(b.headerRlp);
      if (Number(header.number) > blocks.length + 1) {
        // A replay that starts above block 1 (the miner forgot the blocks below its window)
        // cannot be checked from genesis: say so, not a root mismatch further on.
        call.cancel();
        client.close();
        reject(
          new Error(
            `the miner streamed block #${header.number} after #${blocks.length}: it no longer holds the blocks between (its --keep-blocks / --keep-bytes window)`,
          ),
        );
        return;
      }
      blocks.splice(Number(header.number) - 1);
      blocks.push({ header, transactions: [...b.transactions] });
      if (header.number >= head) finish();
    });
    call.on('error', (e) => (String(e).includes('CANCELLED') ? undefined : reject(e)));
  });
}

/**
 * Every `*_total` counter of the cluster's processes (with its labels), and every histogram's
 * `_sum` and `_count`, summed per role: read before and after the run, the difference says what each role did for the run's transactions
 * (the miner's stale and invalid answers, the clients' stale replies and resubmissions, BatchGet
 * and Submit calls), where throughput or steadiness alone cannot say why.
 */
async function roleCounters(procs: readonly ClusterProcess[]): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  await Promise.all(
    procs.map(async (p) => {
      if (p.metrics === undefined) return;
      const text = await (await fetch(p.metrics, { signal: AbortSignal.timeout(5_000) })).text();
      for (const line of text.split('\n')) {
        const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*_(?:total|sum|count)(?:\{[^}]*\})?)\s+(\S+)/.exec(line);
        if (m === null || !Number.isFinite(Number(m[2]))) continue;
        const k = `${p.role}/${m[1]}`;
        sums.set(k, (sums.get(k) ?? 0) + Number(m[2]));
      }
    }),
  );
  return sums;
}

/** The mean of every histogram in `counters` over the run: `x_sum{l}` / `x_count{l}`, by `x{l}`. */
function meansOf(counters: Record<string, number>): Record<string, number> {
  const means: Record<string, number> = {};
  for (const [k, sum] of Object.entries(counters)) {
    const m = /^(.*)_sum(\{.*\})?$/.exec(k);
    if (m === null) continue;
    const count = counters[`${m[1]}_count${m[2] ?? ''}`];
    if (count !== undefined && count > 0) means[`${m[1]}${m[2] ?? ''}`] = Number((sum / count).toFixed(4));
  }
  return means;
}

/** Replays blocks on a fresh ReferenceChain, checking each root; per-kind time from per-tx runs. */
async function baseline(
  genesisFile: string,
  blocks: readonly ChainBlock[],
  maxTxs: number,
  opts: Partial<ReferenceChainOptions>,
) {
  const genesis = parseGenesis(JSON.parse(await readFile(genesisFile, 'utf8')));
  say(`baseline: loading ${genesis.alloc.length.toLocaleString('en-US')} accounts into @ethereumjs/mpt`);
  const t0 = performance.now();
  const chain = await ReferenceChain.create(genesis, opts);
  const loadMs = performance.now() - t0;
  const token = toHex(DEFAULT_TOKEN_ADDRESS);
  const time = { transfer: { n: 0, ms: 0 }, erc20: { n: 0, ms: 0 } };
  let txs = 0;
  for (const { header, transactions } of blocks) {
    if (txs >= maxTxs) break;
    say(`baseline: block #${header.number}, ${txs.toLocaleString('en-US')} txs replayed`);
    const env = {
      number: header.number,
      timestamp: header.timestamp,
      coinbase: header.miner,
      gasLimit: header.gasLimit,
    };
    const r = await chain.runBlock(env, transactions, (raw, ms) => {
      const kind = toHex(raw).includes(token) ? 'erc20' : 'transfer';
      time[kind].n++;
      time[kind].ms += ms;
    });
    if (toHex(r.stateRoot) !== toHex(header.stateRoot)) {
      throw new Error(
        `baseline: block #${header.number} replays to ${toHex(r.stateRoot)}, the chain says ${toHex(header.stateRoot)}`,
      );
    }
    txs += transactions.length;
  }
  const perSec = (k: { n: number; ms: number }) => (k.ms === 0 ? 0 : Math.round((k.n / k.ms) * 1000));
  const allMs = time.transfer.ms + time.erc20.ms;
  return {
    genesisLoadSeconds: Number((loadMs / 1000).toFixed(1)),
    txs,
    txPerSec: allMs === 0 ? 0 : Math.round((txs / allMs) * 1000),
    transfersPerSec: perSec(time.transfer),
    erc20PerSec: perSec(time.erc20),
  };
}

const transport = args['storage-transport'];
if (transport !== 'grpc' && transport !== 'shm')
  throw new Error(`--storage-transport: expected grpc | shm, found ${transport}`);
const read = withStorageTransport(await readTopology(resolve(root, args.topology)), transport);
const topology = {
  ...read,
  accounts: ACCOUNTS,
  // The baselines replay every block from genesis, so the miner keeps them all (its default
  // window forgets blocks past 64 MiB of transactions and witnesses, ~30K transactions).
  miners: {
    ...read.miners,
    // A/B of the block size from one build: the topology's miners.blockGasLimit overridden.
    ...(args['block-gas-limit'] === undefined ? {} : { blockGasLimit: Number(args['block-gas-limit']) }),
    args: [...read.miners.args, '--keep-blocks', String(SECONDS + 600), '--keep-bytes', String(8 * 2 ** 30)],
  },
  // A/B of the clients' pre-execution window from one build (the client's --max-waiting).
  clients: {
    ...read.clients,
    args: [
      ...read.clients.args,
      ...(args['max-waiting'] === undefined ? [] : ['--max-waiting', args['max-waiting']]),
    ],
  },
};
const dir = await mkdtemp(join(tmpdir(), 'monsoon-bench-e2e-'));
const cacheDir = join(root, 'data', 'accounts');
say(`starting the "${topology.name}" cluster at ${ACCOUNTS.toLocaleString('en-US')} accounts`);
const cluster = await Cluster.start(topology, {
  dir,
  cacheDir,
  ...roleOptions(args['role-flag'], args['role-env']),
  onProgress: (p) => {
    if (p.kind === 'accounts' || p.kind === 'genesis')
      say(`${p.kind}: ${p.done.toLocaleString('en-US')} / ${p.total.toLocaleString('en-US')}`);
  },
});
let out: Record<string, unknown>;
try {
  const driver = await clusterLoad(cluster, {
    seed: topology.seed,
    accounts: ACCOUNTS,
    cacheDir,
    concurrency: CONCURRENCY,
    ...(RATE === undefined ? {} : { rate: RATE }),
    seconds: SECONDS,
    witnessMetrics: true,
    signAhead: SIGN_AHEAD,
    onSigned: (n) =>
      say(`driver: signed ${n.toLocaleString('en-US')} / ${SIGN_AHEAD.toLocaleString('en-US')} ahead`),
    onProgress: (p) => say(`monsoon: ${JSON.stringify(p).slice(0, 120)}`),
  });
  const signedLive = () => Math.max(0, result.counts.generated - SIGN_AHEAD);
  const procs: ClusterProcess[] = [...cluster.storage, ...cluster.miners, ...cluster.clients];
  const cpu0 = new Map(procs.map((p) => [p.name, cpuSeconds(p.pid)]));
  const counters0 = await roleCounters(procs);
  const driverCpu0 = process.cpuUsage();
  const result = await driver.run();
  const driverUsage = process.cpuUsage(driverCpu0);
  const counters1 = await roleCounters(procs);
  const counters: Record<string, number> = {};
  for (const [k, v] of [...counters1].sort(([a], [b]) => a.localeCompare(b))) {
    const d = v - (counters0.get(k) ?? 0);
    if (d !== 0) counters[k] = Number(d.toFixed(3));
  }
  const stageMeans = meansOf(counters);
  const used = new Map(procs.map((p) => [p.name, cpuSeconds(p.pid) - cpu0.get(p.name)!]));
  used.set('driver', (driverUsage.user + driverUsage.system) / 1e6);
  const wall = (result.timing.runMs + result.timing.drainMs) / 1000;
  const cpu = Object.fromEntries([...used].map(([name, s]) => [name, Number((s / wall).toFixed(2))]));
  // CPU per committed transaction by role (all of a role's processes; the driver is this process).
  const cpuMsPerTx: Record<string, number> = {};
  for (const [name, s] of used) {
    const role = name.replace(/-\d+$/, '');
    cpuMsPerTx[role] = (cpuMsPerTx[role] ?? 0) + (s * 1000) / Math.max(1, result.counts.committed);
  }
  for (const role of Object.keys(cpuMsPerTx)) cpuMsPerTx[role] = Number(cpuMsPerTx[role]!.toFixed(3));
  status.clear();
  console.log(
    `monsoon: ${result.throughput.committedPerSecond.toFixed(0)} committed tx/s over ${(result.timing.runMs / 1000).toFixed(0)} s, cores per process ${JSON.stringify(cpu)}, CPU ms per committed tx by role ${JSON.stringify(cpuMsPerTx)}`,
  );
  // Issue 17's pipeline goals: every second after warm-up within ±25% of the mean; at half the
  // saturation rate (run again with --rate), p50 to inclusion ≤ 1.5 block intervals.
  const steady = runSteadiness(result);
  const blockIntervalMs = topology.miners.blockIntervalMs;
  const p50Blocks = result.latencyMs === null ? null : result.latencyMs.p50 / blockIntervalMs;
  console.log(
    `monsoon: committed per second after warm-up: ${describeSteadiness(steady)}; p50 to inclusion ${p50Blocks === null ? 'n/a' : p50Blocks.toFixed(2)} block intervals (${blockIntervalMs} ms)`,
  );
  say('collecting the committed blocks');
  const blocks = await canonicalBlocks(cluster.miners[0]!.address);
  // --baseline-txs 0: Monsoon alone (A/B runs of one role's cost need no replay).
  const best = BASELINE_TXS > 0 ? await baseline(cluster.genesis.file, blocks, BASELINE_TXS, {}) : null;
  // ethereumjs' defaults load a genesis slowly (~700 accounts/s): --defaults-txs 0 skips them.
  const defaults =
    DEFAULTS_TXS > 0
      ? await baseline(cluster.genesis.file, blocks, DEFAULTS_TXS, { nativeCrypto: false, caches: false })
      : null;
  let disk: (Awaited<ReturnType<typeof baseline>> & { cacheNodes: number }) | null = null;
  if (DISK_TXS > 0) {
    const db = await LevelTrieDb.open(join(dir, 'baseline-leveldb'));
    try {
      disk = {
        ...(await baseline(cluster.genesis.file, blocks, DISK_TXS, {
          disk: { db, cacheNodes: DISK_CACHE_NODES },
        })),
        cacheNodes: DISK_CACHE_NODES,
      };
    } finally {
      await db.close();
    }
  }
  out = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, loadAverage1m: loadavg()[0] },
    params: {
      accounts: ACCOUNTS,
      seconds: SECONDS,
      concurrency: CONCURRENCY,
      rate: RATE ?? null,
      topology: topology.name,
      blockGasLimit: topology.miners.blockGasLimit,
      maxWaiting: args['max-waiting'] === undefined ? null : Number(args['max-waiting']),
      storageTransport: transport,
      signAhead: SIGN_AHEAD,
    },
    monsoon: {
      committedPerSec: result.throughput.committedPerSecond,
      committed: result.counts.committed,
      latencyMs: result.latencyMs,
      counts: result.counts,
      witness: result.witness,
      coresPerProcess: cpu,
      cpuMsPerTx,
      /** Transactions the driver signed in the loop (beyond --sign-ahead): its CPU includes them. */
      signedInLoop: signedLive(),
      steadiness: steady,
      counters,
      /** Each histogram's mean over the run (its `_sum` over its `_count`): where the latency goes. */
      stageMeans,
      blockIntervalMs,
      p50BlockIntervals: p50Blocks === null ? null : Number(p50Blocks.toFixed(2)),
      series: result.series,
    },
    baseline: { best, disk, defaults },
    ratio:
      best === null || best.txPerSec === 0
        ? null
        : Number((result.throughput.committedPerSecond / best.txPerSec).toFixed(2)),
    ratioToDisk:
      disk === null || disk.txPerSec === 0
        ? null
        : Number((result.throughput.committedPerSecond / disk.txPerSec).toFixed(2)),
  };
} finally {
  await cluster.stop();
  // The roles' logs (e.g. the miner's 'block sealed' lines) kept for a look at the run's cadence.
  if (args['keep-logs'] !== undefined)
    await cp(join(dir, 'logs'), resolve(args['keep-logs']), { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
}
status.clear();
console.log(JSON.stringify(out, null, 2));
// Relative to the repository root; an absolute path as it is.
const file = resolve(root, args.out);
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
// The run's chart (committed and submitted per second, latency) beside the results.
const chart = file.replace(/\.json$/, '') + '.svg';
writeFileSync(chart, chartSvg((out.monsoon as { series: SecondSample[] }).series));
console.log(`results: ${file}, chart: ${chart}`);
