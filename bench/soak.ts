/**
 * A long run of the whole system: committed tx/s and the resident memory of every role process
 * over time, to see that throughput holds and memory stays bounded (issue 15).
 *
 *   npm run build && npm run bench -- soak [--minutes 30] [--topology deploy/topologies/default.json]
 *                                          [--accounts 100000] [--concurrency 2000] [--sample-seconds 10]
 *
 * The topology's cluster (storage, miners, clients as separate processes) driven closed loop with
 * the workload's mix through the clients' gRPC bulk path; every `--sample-seconds` the committed
 * count (the driver's, inclusion seen in the first miner's block stream) and each process's
 * VmRSS from /proc, and from its /metrics V8's committed and used heap (what of the RSS is the
 * JS heap, what is outside it) and what its windows hold (storage: versions; miner: blocks and
 * the transactions they index; client: the chain view's blocks and transactions), so a curve
 * can be told apart from a window still filling; and the box's 1-minute load average. Writes bench/results/soak.json, soak.md (a table per minute, the first and
 * last quarter's means, each role's RSS growth from the end of the first minute to the end, its
 * RSS at minute 5 and at the end, and its slope over the second half of the run: least squares,
 * MiB per minute; what ended the run and why transactions failed) and two SVG charts:
 * soak-throughput.svg and soak-rss.svg (and soak-heap.svg: each role's committed V8 heap).
 *
 * The report committed in bench/results/ says when and how it was measured.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Cluster, type ClusterProcess, readTopology } from '@monsoon/cli';
import { type LoadProgress, parsePrometheusText } from '@monsoon/workload';
import { clusterLoad } from './lib/clusterLoad.js';
import { rssKb } from './lib/processCpu.js';
import { Progress } from './lib/progress.js';
import { fmtValue, xyChartSvg } from './lib/xyChart.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    topology: { type: 'string', default: 'deploy/topologies/default.json' },
    accounts: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '2000' },
    'sample-seconds': { type: 'string', default: '10' },
  },
});
const MINUTES = Number.parseFloat(args.minutes);
const ACCOUNTS = Number(args.accounts);
const CONCURRENCY = Number(args.concurrency);
const SAMPLE_S = Number.parseFloat(args['sample-seconds']);
for (const [name, v] of [
  ['--minutes', MINUTES],
  ['--accounts', ACCOUNTS],
  ['--concurrency', CONCURRENCY],
  ['--sample-seconds', SAMPLE_S],
] as const) {
  if (!Number.isFinite(v) || v <= 0) {
    console.error(`${name}: expected a positive number`);
    process.exit(2);
  }
}
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const status = new Progress();

interface Sample {
  /** Seconds since the load started. */
  readonly t: number;
  readonly committed: number;
  /** Committed per second over the interval before this sample. */
  readonly committedPerSec: number;
  /** VmRSS per process, MiB, by process name. */
  readonly rssMb: Record<string, number>;
  /** V8's committed heap and the part of it in use, MiB, by process name (absent: metrics unread). */
  readonly heapTotalMb: Record<string, number>;
  readonly heapUsedMb: Record<string, number>;
  /** What each process's windows hold (WINDOW_GAUGES it reports), by process name. */
  readonly held: Record<string, Record<string, number>>;
  /** The box's 1-minute load average. */
  readonly load: number;
}

/**
 * The gauges of what grows with the chain and is bounded by a window: with these flat, a rising
 * RSS is not the data the roles are meant to hold. (The workload creates no accounts or slots:
 * every account holds ether and tokens from genesis, so the state's size is constant.)
 */
const WINDOW_GAUGES = {
  monsoon_storage_versions: 'versions',
  monsoon_miner_blocks_held: 'blocks',
  monsoon_miner_indexed_transactions: 'txs',
  monsoon_client_chain_blocks: 'blocks',
  monsoon_client_chain_transactions: 'txs',
} as const;

/**
 * A process's V8 heap from its /metrics, MiB, and its window gauges; undefined when it has none
 * or does not answer in time.
 */
async function metricsOf(
  p: ClusterProcess,
): Promise<{ total: number; used: number; held: Record<string, number> } | undefined> {
  if (p.metrics === undefined) return undefined;
  try {
    const m = parsePrometheusText(
      await (await fetch(p.metrics, { signal: AbortSignal.timeout(5_000) })).text(),
    );
    const total = m.get('nodejs_heap_size_total_bytes');
    const used = m.get('nodejs_heap_size_used_bytes');
    if (total === undefined || used === undefined) return undefined;
    const held: Record<string, number> = {};
    for (const [name, short] of Object.entries(WINDOW_GAUGES)) {
      const v = m.get(name);
      if (v !== undefined) held[short] = v;
    }
    return { total: Math.round(total / 2 ** 20), used: Math.round(used / 2 ** 20), held };
  } catch {
    return undefined;
  }
}

const topology = { ...(await readTopology(join(root, args.topology))), accounts: ACCOUNTS };
const dir = await mkdtemp(join(tmpdir(), 'monsoon-bench-soak-'));
const cacheDir = join(root, 'data', 'accounts');
status.update(`starting the "${topology.name}" cluster at ${ACCOUNTS.toLocaleString('en-US')} accounts`);
const cluster = await Cluster.start(topology, { dir, cacheDir });
const procs: ClusterProcess[] = [...cluster.storage, ...cluster.miners, ...cluster.clients];
const samples: Sample[] = [];
let latest: LoadProgress | undefined;
let result: Awaited<ReturnType<Awaited<ReturnType<typeof clusterLoad>>['run']>>;
try {
  const driver = await clusterLoad(cluster, {
    seed: topology.seed,
    accounts: ACCOUNTS,
    cacheDir,
    concurrency: CONCURRENCY,
    seconds: MINUTES * 60,
    witnessMetrics: false,
    onProgress: (p) => {
      latest = p;
    },
  });
  const started = performance.now();
  let last = { t: 0, committed: 0 };
  const timer = setInterval(async () => {
    const t = (performance.now() - started) / 1000;
    const committed = latest?.committed ?? 0;
    const rssMb = Object.fromEntries(procs.map((p) => [p.name, Math.round(rssKb(p.pid) / 1024)]));
    const sample: Sample = {
      t: Math.round(t),
      committed,
      committedPerSec: (committed - last.committed) / (t - last.t),
      rssMb,
      heapTotalMb: {},
      heapUsedMb: {},
      held: {},
      load: Number(loadavg()[0]?.toFixed(1)),
    };
    samples.push(sample);
    last = { t, committed };
    status.update(
      `soak: ${Math.round(t)} s of ${MINUTES * 60}, ${committed.toLocaleString('en-US')} committed, ${fmtValue(samples.at(-1)!.committedPerSec)} tx/s now`,
    );
    // Filled in when the processes answer (after the RSS, which is read at the sample's time).
    const heaps = await Promise.all(procs.map(metricsOf));
    procs.forEach((p, i) => {
      const h = heaps[i];
      if (h === undefined) return;
      sample.heapTotalMb[p.name] = h.total;
      sample.heapUsedMb[p.name] = h.used;
      sample.held[p.name] = h.held;
    });
  }, SAMPLE_S * 1000);
  try {
    result = await driver.run();
  } finally {
    clearInterval(timer);
  }
} finally {
  await cluster.stop();
  await rm(dir, { recursive: true, force: true });
}
status.clear();

const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const q = Math.max(1, Math.floor(samples.length / 4));
const firstQuarter = mean(samples.slice(0, q).map((s) => s.committedPerSec));
const lastQuarter = mean(samples.slice(-q).map((s) => s.committedPerSec));
const afterWarmup = samples.find((s) => s.t >= 60) ?? samples[0];
const end = samples.at(-1);
const growth = Object.fromEntries(
  procs.map((p) => [p.name, end && afterWarmup ? end.rssMb[p.name]! - afterWarmup.rssMb[p.name]! : 0]),
);
/** Least-squares slope of RSS over the samples of the run's second half, MiB per minute. */
const half = samples.filter((s) => s.t >= (end?.t ?? 0) / 2);
const slope = (name: string, of: (s: Sample) => Record<string, number> = (s) => s.rssMb): number => {
  const known = half.filter((s) => of(s)[name] !== undefined);
  if (known.length < 2) return 0;
  const xs = known.map((s) => s.t / 60);
  const ys = known.map((s) => of(s)[name]!);
  const mx = mean(xs);
  const my = mean(ys);
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * (ys[i]! - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? 0 : num / den;
};
const atMinute5 = samples.find((s) => s.t >= 300);
const atMinute15 = samples.find((s) => s.t >= 900);
const lastKnown = (name: string, of: (s: Sample) => Record<string, number>): number | undefined => {
  for (let i = samples.length - 1; i >= 0; i--) {
    const v = of(samples[i]!)[name];
    if (v !== undefined) return v;
  }
  return undefined;
};
const rssCurve = Object.fromEntries(
  procs.map((p) => [
    p.name,
    {
      minute5: atMinute5?.rssMb[p.name] ?? null,
      minute15: atMinute15?.rssMb[p.name] ?? null,
      end: end?.rssMb[p.name] ?? null,
      slopeSecondHalfMbPerMin: Number(slope(p.name).toFixed(2)),
      heapTotalEnd: lastKnown(p.name, (s) => s.heapTotalMb) ?? null,
      heapUsedEnd: lastKnown(p.name, (s) => s.heapUsedMb) ?? null,
      heapTotalSlopeMbPerMin: Number(slope(p.name, (s) => s.heapTotalMb).toFixed(2)),
      /** RSS minus the committed heap: native memory, array buffers, code. */
      outsideHeapSlopeMbPerMin: Number(
        slope(p.name, (s) =>
          Object.fromEntries(Object.entries(s.heapTotalMb).map(([k, v]) => [k, (s.rssMb[k] ?? 0) - v])),
        ).toFixed(2),
      ),
    },
  ]),
);
const resultsDir = join(root, 'bench', 'results');
const minutes = samples.map((s) => Number((s.t / 60).toFixed(1)));
writeFileSync(
  join(resultsDir, 'soak-throughput.svg'),
  xyChartSvg({
    title: `Soak: committed tx/s every ${SAMPLE_S} s`,
    xLabel: 'minutes',
    yLabel: 'committed tx/s',
    xs: minutes,
    series: [{ name: 'committed', values: samples.map((s) => Math.round(s.committedPerSec)) }],
  }),
);
writeFileSync(
  join(resultsDir, 'soak-rss.svg'),
  xyChartSvg({
    title: 'Soak: resident memory per process',
    xLabel: 'minutes',
    yLabel: 'VmRSS, MiB',
    xs: minutes,
    series: procs.map((p) => ({ name: p.name, values: samples.map((s) => s.rssMb[p.name] ?? null) })),
  }),
);
writeFileSync(
  join(resultsDir, 'soak-heap.svg'),
  xyChartSvg({
    title: "Soak: V8's committed heap per process",
    xLabel: 'minutes',
    yLabel: 'heap total, MiB',
    xs: minutes,
    series: procs.map((p) => ({ name: p.name, values: samples.map((s) => s.heapTotalMb[p.name] ?? null) })),
  }),
);
const date = new Date().toISOString();
const signed = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}`;
const md = [
  '# Soak: throughput and memory over time',
  '',
  `Measured ${date.slice(0, 16).replace('T', ' ')} UTC by \`npm run bench -- soak ${process.argv.slice(2).join(' ')}\` on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'} (1-min load average ${loadavg()[0]?.toFixed(1)} at the end): the "${topology.name}" topology at ${ACCOUNTS.toLocaleString('en-US')} accounts, the workload's mix closed loop at ${CONCURRENCY} in flight for ${MINUTES} min.`,
  '',
  `Committed ${result.counts.committed.toLocaleString('en-US')} transactions, ${result.throughput.committedPerSecond.toFixed(0)} tx/s over the run (refused ${result.counts.rejected}, failed ${result.counts.failed}); first quarter ${firstQuarter.toFixed(0)} tx/s, last quarter ${lastQuarter.toFixed(0)} tx/s.`,
  '',
  `RSS growth from minute ${((afterWarmup?.t ?? 0) / 60).toFixed(1)} to the end, MiB: ${procs.map((p) => `${p.name} ${growth[p.name]! >= 0 ? '+' : ''}${growth[p.name]}`).join(', ')}.`,
  '',
  `| process | RSS at minute 5, MiB | at minute 15 | at the end (minute ${((end?.t ?? 0) / 60).toFixed(1)}) | slope over minutes ${((half[0]?.t ?? 0) / 60).toFixed(1)}-${((end?.t ?? 0) / 60).toFixed(1)}, MiB/min |`,
  '|---|---|---|---|---|',
  ...procs.map((p) => {
    const c = rssCurve[p.name]!;
    return `| ${p.name} | ${c.minute5 ?? '-'} | ${c.minute15 ?? '-'} | ${c.end ?? '-'} | ${c.slopeSecondHalfMbPerMin >= 0 ? '+' : ''}${c.slopeSecondHalfMbPerMin.toFixed(1)} |`;
  }),
  '',
  `1-minute load average at minute 5 / 15 / the end: ${[atMinute5, atMinute15, end].map((x) => x?.load ?? '-').join(' / ')}.`,
  '',
  "What the roles' windows held at the same times (storage: versions; miner: blocks held and the transactions they index; client: the chain view's blocks and transactions). The workload creates no accounts or slots (every account holds ether and tokens from genesis), so the state itself does not grow: with these flat, RSS should be too.",
  '',
  '| process | at minute 5 | at minute 15 | at the end |',
  '|---|---|---|---|',
  ...procs.map((p) => {
    const at = (x: Sample | undefined) =>
      Object.entries(x?.held[p.name] ?? {})
        .map(([k, v]) => `${v.toLocaleString('en-US')} ${k}`)
        .join(', ') || '-';
    return `| ${p.name} | ${at(atMinute5)} | ${at(atMinute15)} | ${at(end)} |`;
  }),
  '',
  "Where the RSS is: V8's committed heap (and the part of it in use) at the end, and the slopes over the same minutes of the committed heap and of the rest of the RSS (native memory, array buffers, code).",
  '',
  '| process | heap committed / used at the end, MiB | committed heap slope, MiB/min | RSS outside the heap slope, MiB/min |',
  '|---|---|---|---|',
  ...procs.map((p) => {
    const c = rssCurve[p.name]!;
    return `| ${p.name} | ${c.heapTotalEnd ?? '-'} / ${c.heapUsedEnd ?? '-'} | ${signed(c.heapTotalSlopeMbPerMin)} | ${signed(c.outsideHeapSlopeMbPerMin)} |`;
  }),
  '',
  `The run phase ended by ${result.timing.stoppedBy} after ${(result.timing.runMs / 60_000).toFixed(1)} min.${result.reasons.length === 0 ? ' No transaction was refused or failed.' : ''}`,
  ...result.reasons.flatMap((r) => [
    '',
    `${r.by === 'failed' ? 'Failed' : `Refused by ${r.by}`}: ${r.count.toLocaleString('en-US')}, for example:`,
    ...r.samples.map(
      (x) => `- ${x.count.toLocaleString('en-US')} × ${x.reason.replaceAll('\n', ' ').slice(0, 300)}`,
    ),
  ]),
  '',
  '![committed tx/s](soak-throughput.svg)',
  '',
  '![RSS per process](soak-rss.svg)',
  '',
  "![V8's committed heap per process](soak-heap.svg)",
  '',
  `| minute | load | committed tx/s | ${procs.map((p) => `${p.name} MiB`).join(' | ')} |`,
  `|---|---|---|${procs.map(() => '---').join('|')}|`,
  ...samples
    .filter(
      (_, i) => i % Math.max(1, Math.round(60 / SAMPLE_S)) === Math.max(1, Math.round(60 / SAMPLE_S)) - 1,
    )
    .map(
      (s) =>
        `| ${(s.t / 60).toFixed(1)} | ${s.load} | ${Math.round(s.committedPerSec)} | ${procs.map((p) => s.rssMb[p.name]).join(' | ')} |`,
    ),
  '',
];
writeFileSync(join(resultsDir, 'soak.md'), `${md.join('\n')}\n`);
writeFileSync(
  join(resultsDir, 'soak.json'),
  `${JSON.stringify(
    {
      date,
      machine: { cpus: cpus().length, model: cpus()[0]?.model, loadAverage1m: loadavg()[0] },
      params: {
        minutes: MINUTES,
        topology: topology.name,
        accounts: ACCOUNTS,
        concurrency: CONCURRENCY,
        sampleSeconds: SAMPLE_S,
      },
      committed: result.counts.committed,
      committedPerSec: result.throughput.committedPerSecond,
      firstQuarterPerSec: firstQuarter,
      lastQuarterPerSec: lastQuarter,
      rssGrowthMb: growth,
      rssCurve,
      stoppedBy: result.timing.stoppedBy,
      runMs: result.timing.runMs,
      counts: result.counts,
      reasons: result.reasons,
      samples,
    },
    null,
    2,
  )}\n`,
);
console.log(md.join('\n'));
console.log(
  `results: ${join(resultsDir, 'soak.md')}, soak.json, soak-throughput.svg, soak-rss.svg, soak-heap.svg`,
);
