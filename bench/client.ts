/**
 * One client process: transactions pre-executed and submitted per second (plain transfers and
 * ERC-20 calls apart), and witness bytes per transaction raw (each transaction's full proofs),
 * compacted (the miners' top r levels left out) and bagged (one merged bag per submission), for
 * r = c from 0 to 8.
 *
 *   npm run build && npm run bench -- client [--accounts 100000] [--seconds 10] [--levels 0,1,2,3,4,5,6,7,8]
 *                                             [--concurrency 256]
 *
 * For each level a fresh cluster (2 storage processes, 1 miner with --retention r, 1 client with
 * --compact-levels r) is driven by the workload's driver through the client's gRPC bulk path,
 * closed loop; the rate is what committed (every accepted transaction commits: the driver checks).
 * Bytes come from the client's /metrics counters before and after each run.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Cluster, parseTopology } from '@monsoon/cli';
import { AccountSet, LoadDriver, parsePrometheusText, TrafficGenerator } from '@monsoon/workload';
import { Progress } from './lib/progress.js';

const { values: args } = parseArgs({
  options: {
    accounts: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    levels: { type: 'string', default: '0,1,2,3,4,5,6,7,8' },
    concurrency: { type: 'string', default: '256' },
  },
});
const ACCOUNTS = Number(args.accounts);
const SECONDS = Number(args.seconds);
const LEVELS = args.levels.split(',').map(Number);
const CONCURRENCY = Number(args.concurrency);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cacheDir = join(root, 'data', 'accounts');
const status = new Progress();
const say = (m: string) => status.update(m);

const COUNTERS = [
  'monsoon_client_witness_bytes_raw_total',
  'monsoon_client_witness_bytes_unbagged_total',
  'monsoon_client_bag_bytes_total',
];

async function scrape(url: string): Promise<number[]> {
  const samples = parsePrometheusText(await (await fetch(url)).text());
  return COUNTERS.map((name) => samples.get(name) ?? 0);
}

interface Row {
  level: number;
  kind: 'transfer' | 'erc20';
  committedPerSec: number;
  committed: number;
  rawBytesPerTx: number;
  compactedBytesPerTx: number;
  baggedBytesPerTx: number;
}

const accounts = await AccountSet.create({
  seed: new TextEncoder().encode('monsoon'),
  count: ACCOUNTS,
  cacheDir,
});
const rows: Row[] = [];
for (const level of LEVELS) {
  const topology = parseTopology(
    {
      description: `bench client, r = c = ${level}`,
      shardCount: 16,
      accounts: ACCOUNTS,
      seed: 'monsoon',
      storage: { processes: 2, replicas: 1, fsync: 'none' },
      miners: { count: 1, blockIntervalMs: 500, retention: level },
      clients: { count: 1 },
    },
    `bench-client-r${level}`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'monsoon-bench-client-'));
  say(`r = c = ${level}: starting the cluster`);
  const cluster = await Cluster.start(topology, { dir, cacheDir });
  try {
    const client = cluster.clients[0]!;
    for (const kind of ['transfer', 'erc20'] as const) {
      say(`r = c = ${level}: ${kind}s for ${SECONDS} s`);
      const traffic = new TrafficGenerator(
        {
          chainId: BigInt(cluster.genesis.chainId ?? 1337),
          erc20Share: kind === 'erc20' ? 1 : 0,
          seed: new TextEncoder().encode(`bench-client-${kind}`),
        },
        { accounts },
      );
      const before = await scrape(client.metrics!);
      const driver = await LoadDriver.create(
        {
          clients: [client.grpc],
          miner: cluster.miners[0]!.address,
          load: { concurrency: CONCURRENCY },
          until: { durationMs: SECONDS * 1000 },
        },
        { traffic, accounts },
      );
      const r = await driver.run();
      const after = await scrape(client.metrics!);
      const n = Math.max(1, r.counts.accepted);
      const per = (i: number) => Math.round((after[i]! - before[i]!) / n);
      rows.push({
        level,
        kind,
        committedPerSec: Math.round(r.throughput.committedPerSecond),
        committed: r.counts.committed,
        rawBytesPerTx: per(0),
        compactedBytesPerTx: per(1),
        baggedBytesPerTx: per(2),
      });
    }
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
status.clear();
console.log(
  `client, ${ACCOUNTS.toLocaleString('en-US')} accounts, ${SECONDS} s per run, ${CONCURRENCY} in flight`,
);
console.log('| r = c | kind | committed tx/s | raw B/tx | compacted B/tx | bagged B/tx | saved vs raw |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  const saved = r.rawBytesPerTx === 0 ? 0 : 100 * (1 - r.baggedBytesPerTx / r.rawBytesPerTx);
  console.log(
    `| ${r.level} | ${r.kind} | ${r.committedPerSec.toLocaleString('en-US')} | ${r.rawBytesPerTx.toLocaleString('en-US')} | ${r.compactedBytesPerTx.toLocaleString('en-US')} | ${r.baggedBytesPerTx.toLocaleString('en-US')} | ${saved.toFixed(0)}% |`,
  );
}
const file = join(root, 'bench', 'results', 'client.json');
writeFileSync(
  file,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, loadAverage1m: loadavg()[0] },
      params: { accounts: ACCOUNTS, seconds: SECONDS, concurrency: CONCURRENCY, levels: LEVELS },
      rows,
    },
    null,
    2,
  )}\n`,
);
console.log(`results: ${file}`);
