#!/usr/bin/env node
/**
 * `npm run cluster -- --topology deploy/topologies/small.json [--dir DIR] [--genesis FILE]
 * [--accounts N]`: starts a whole cluster on this machine, prints where everything listens
 * (the JSON-RPC URLs first), and runs until Ctrl-C or SIGTERM, then stops every process in
 * order. A process that fails is reported with the tail of its log and the cluster is torn down.
 *
 * Exit codes: 0 after a clean stop; 1 when a process failed (or had to be killed on the way
 * down); 2 for a bad flag or topology (one line on stderr).
 */
import { join } from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { Cluster, ClusterProcess, ClusterProgress, StoppedProcess } from '../cluster.js';
import { ClusterErrorCode, isClusterError } from '../clusterError.js';
import { readTopology, withStorageTransport } from '../topology.js';

/** Seconds each process may take to print `listening` (the library's default). */
const START_TIMEOUT_S = 120;

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

const positive = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError(`${name}: expected an integer ≥ 1, found "${v}"`);
  return n;
};

const program = new Command('monsoon cluster')
  .description(
    'Start storage nodes, miners and clients on 127.0.0.1 from a topology file; Ctrl-C stops them.',
  )
  .requiredOption('--topology <file>', 'topology JSON (see deploy/topologies/)')
  .option(
    '--dir <dir>',
    'logs, storage data (wiped at start) and genesis (default: data/cluster/<topology name>)',
  )
  .option(
    '--genesis <file>',
    'geth-style genesis.json to use (default: generate one with the workload accounts)',
  )
  .option(
    '--accounts <n>',
    "accounts in the generated genesis (default: the topology's)",
    positive('--accounts'),
  )
  .option(
    '--cache-dir <dir>',
    'where generated account keys are cached (shared with npm run workload)',
    join('data', 'accounts'),
  )
  .option(
    '--start-timeout <s>',
    'seconds each process may take to start listening',
    positive('--start-timeout'),
    START_TIMEOUT_S,
  )
  .option(
    '--storage-transport <kind>',
    "how clients read state: grpc, or shm (storage processes export regions under /dev/shm, clients walk them) (default: the topology's)",
  )
  .option('--json', 'print where everything listens as one JSON line instead of a table')
  .option(
    '--workload <duration>',
    'run the workload (npm run workload) through the clients for this long (60s, 2m), print its summary, then stop',
  )
  .option('--concurrency <n>', 'transactions the workload keeps in flight', positive('--concurrency'))
  .option(
    '--rate <tx/s>',
    'open loop instead: the workload sends at this rate whatever happens',
    positive('--rate'),
  )
  .option('--out <dir>', "where the workload's result.json, summary.md and chart.svg go (default: <dir>/run)")
  .exitOverride()
  .configureOutput({ outputError: () => {} });

function usage(msg: string): never {
  process.stderr.write(`monsoon cluster: ${msg}\n`);
  process.exit(EXIT_USAGE);
}

try {
  program.parse(process.argv);
} catch (e) {
  if (!(e instanceof CommanderError)) throw e;
  if (e.exitCode !== 0) usage(`${e.message.replace(/^error: /, '')} (see --help)`);
  process.exit(0);
}
const o = program.opts<{
  topology: string;
  dir?: string;
  genesis?: string;
  accounts?: number;
  cacheDir: string;
  startTimeout: number;
  json?: boolean;
  workload?: string;
  concurrency?: number;
  rate?: number;
  out?: string;
  storageTransport?: string;
}>();

let topology: Awaited<ReturnType<typeof readTopology>>;
try {
  topology = await readTopology(o.topology);
} catch (e) {
  usage((e as Error).message);
}
if (o.rate !== undefined && o.concurrency !== undefined)
  usage('--rate and --concurrency: expected one of them (open or closed loop), found both');
if ((o.rate !== undefined || o.concurrency !== undefined) && o.workload === undefined)
  usage(`${o.rate !== undefined ? '--rate' : '--concurrency'}: only with --workload`);
if (o.storageTransport !== undefined) {
  if (o.storageTransport !== 'grpc' && o.storageTransport !== 'shm')
    usage(`--storage-transport: expected grpc | shm, found ${JSON.stringify(o.storageTransport)}`);
  topology = withStorageTransport(topology, o.storageTransport);
}

// Loaded only now, so that --help and usage errors answer at once.
const { Cluster: ClusterClass } = await import('../cluster.js');
const { ttyProgress } = await import('@monsoon/workload');

const tty = process.stderr.isTTY;
const accountsProgress = ttyProgress('deriving account keys');
const genesisProgress = ttyProgress('writing genesis');
const onProgress = (p: ClusterProgress): void => {
  if (p.kind === 'accounts') accountsProgress?.(p.done, p.total);
  else if (p.kind === 'genesis') genesisProgress?.(p.done, p.total);
  else if (p.kind === 'listening' && tty) {
    process.stderr.write(`${p.process.name} listening (pid ${p.process.pid})\n`);
  }
};

const abort = new AbortController();
let cluster: Cluster | undefined;
let stopping: Promise<void> | undefined;

/** Stops the cluster (once) and exits: `code`, or 1 if a process had to be killed or exited badly. */
function shutDown(code: number, why: string): Promise<void> {
  stopping ??= (async () => {
    process.stderr.write(`monsoon cluster: ${why}: stopping clients, miners, storage…\n`);
    const stopped = cluster === undefined ? [] : await cluster.stop();
    const bad = stopped.filter((s) => s.killed || s.code !== 0);
    for (const s of bad) process.stderr.write(`  ${s.name} (pid ${s.pid}) ${ending(s)}\n`);
    process.stderr.write(`monsoon cluster: stopped ${stopped.length} processes\n`);
    process.exit(code === 0 && bad.length > 0 ? EXIT_FAILURE : code);
  })();
  return stopping;
}

function ending(s: StoppedProcess): string {
  if (s.killed) return 'ignored SIGTERM and was killed';
  return s.signal !== null ? `was killed by ${s.signal}` : `exited with code ${s.code}`;
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (cluster === undefined) abort.abort();
    else void shutDown(0, signal);
  });
}

const dir = o.dir ?? join('data', 'cluster', topology.name);
try {
  cluster = await ClusterClass.start(topology, {
    dir,
    ...(o.genesis !== undefined ? { genesisFile: o.genesis } : {}),
    ...(o.accounts !== undefined ? { accounts: o.accounts } : {}),
    cacheDir: o.cacheDir,
    startTimeoutMs: o.startTimeout * 1000,
    onProgress,
    onFailure: (e) => {
      process.stderr.write(`monsoon cluster: ${e.message}\n`);
      void shutDown(EXIT_FAILURE, 'a process failed');
    },
    signal: abort.signal,
  });
} catch (e) {
  const bad =
    isClusterError(e, ClusterErrorCode.BadOptions) || isClusterError(e, ClusterErrorCode.BadTopology);
  process.stderr.write(`monsoon cluster: ${(e as Error).message}\n`);
  process.exit(bad ? EXIT_USAGE : EXIT_FAILURE);
}
// A signal that came while start() was writing cluster.json found nothing to abort.
if (abort.signal.aborted) await shutDown(0, 'interrupted');

if (o.json) {
  process.stdout.write(`${JSON.stringify(cluster.describe())}\n`);
} else {
  process.stdout.write(`${table(cluster)}\n`);
}

if (o.workload !== undefined) {
  const code = await runWorkload(cluster, o.workload);
  await shutDown(code, code === 0 ? 'the workload finished' : 'the workload failed');
}

/**
 * The main job's second half: the workload's own run command, pointed at this cluster (its
 * clients' gRPC bulk path and metrics, the first miner's block stream, the genesis accounts).
 */
async function runWorkload(c: Cluster, duration: string): Promise<number> {
  const { runCommand } = await import('@monsoon/workload');
  const g = c.genesis;
  const args = [
    '--clients',
    c.clients.map((k) => k.grpc).join(','),
    '--miner',
    c.miners[0]!.address,
    '--duration',
    duration,
    '--cache-dir',
    o.cacheDir,
    '--out',
    o.out ?? join(c.dir, 'run'),
  ];
  const metrics = c.clients.map((k) => k.metrics).filter((m): m is string => m !== undefined);
  if (metrics.length > 0) args.push('--metrics', metrics.join(','));
  if (g.accounts !== undefined) args.push('--accounts', String(g.accounts.count), '--seed', g.accounts.seed);
  if (g.chainId !== undefined) args.push('--chain-id', String(g.chainId));
  if (o.concurrency !== undefined) args.push('--concurrency', String(o.concurrency));
  if (o.rate !== undefined) args.push('--rate', String(o.rate));
  process.stderr.write(`monsoon cluster: running the workload for ${duration}\n`);
  try {
    return await runCommand(args);
  } catch (e) {
    process.stderr.write(`monsoon cluster: workload: ${(e as Error).message}\n`);
    return EXIT_FAILURE;
  }
}

function table(c: Cluster): string {
  const lines: string[] = [];
  for (const k of c.clients) lines.push(`JSON-RPC  ${k.rpc}  (${k.name})`);
  const t = c.topology;
  lines.push(
    '',
    `cluster "${t.name}": ${c.storage.length} storage, ${c.miners.length} miner(s), ${c.clients.length} client(s)`,
  );
  const width = Math.max(...c.processes.map((p) => p.name.length));
  const rows: Array<[ClusterProcess, Record<string, string | undefined>]> = [
    ...c.clients.map((k): [ClusterProcess, Record<string, string>] => [k, { rpc: k.rpc, grpc: k.grpc }]),
    ...c.miners.map((m): [ClusterProcess, Record<string, string>] => [m, { grpc: m.address }]),
    ...c.storage.map((s): [ClusterProcess, Record<string, string>] => [
      s,
      { grpc: s.address, shards: s.shards },
    ]),
  ];
  for (const [p, fields] of rows) {
    const shown = Object.entries({ ...fields, metrics: p.metrics }).filter(([, v]) => v !== undefined);
    lines.push(
      `  ${p.name.padEnd(width)}  pid ${String(p.pid).padEnd(7)} ${shown.map(([k, v]) => `${k} ${v}`).join('  ')}`,
    );
  }
  const g = c.genesis;
  const about = g.accounts
    ? ` (${g.accounts.count} accounts, seed ${JSON.stringify(g.accounts.seed)}, chain id ${g.chainId})`
    : '';
  lines.push(
    `  genesis   ${g.file}${about}`,
    `  logs      ${join(c.dir, 'logs')}`,
    `  endpoints ${join(c.dir, 'cluster.json')}`,
    '',
    o.workload === undefined ? 'Ctrl-C to stop.' : '',
  );
  return lines.join('\n');
}
