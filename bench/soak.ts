/**
 * A long run of the whole system: committed tx/s and the resident memory of every role process
 * over time, to see that throughput holds and memory stays bounded (issue 15).
 *
 *   npm run build && npm run bench -- soak [--minutes 30] [--topology deploy/topologies/default.json]
 *                                          [--accounts 100000] [--concurrency 2000] [--sample-seconds 10]
 *                                          [--probe] [--role-flag <role>:<node flag>]...
 *                                          [--role-env <role>[-<i>]:<NAME>=<value>]... [--out bench/results]
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
 * soak-throughput.svg and soak-rss.svg (and soak-heap.svg: each role's committed V8 heap), into
 * `--out`.
 *
 * `--probe` loads bench/lib/memProbe.ts into every role (`node --import`): each samples its own
 * V8 spaces, array buffers and resident memory by kind, and the report adds, per role, the old
 * space's committed and live size, code, large objects, new space, array buffers and the
 * anonymous memory outside V8's pages at minutes 5 and 15 and the end, with their slopes: which
 * part of a rising RSS rises. `--role-flag storage:--some-v8-flag` starts one role's processes
 * with a flag (an A/B of V8's heap behaviour between runs). `--role-env client-1:NAME=value` adds
 * to one process's environment (`client` to every client's, on top of the cluster's `roleEnv`):
 * an A/B of malloc's tunables within one run, one client against the other.
 *
 * The report committed in bench/results/ says when and how it was measured.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Cluster, type ClusterProcess, readTopology } from '@monsoon/cli';
import { type LoadProgress, parsePrometheusText } from '@monsoon/workload';
import { clusterLoad } from './lib/clusterLoad.js';
import type { ProbeLine } from './lib/memProbe.js';
import { rssKb } from './lib/processCpu.js';
import { Progress } from './lib/progress.js';
import { roleOptions } from './lib/roleOptions.js';
import { fmtValue, xyChartSvg } from './lib/xyChart.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    topology: { type: 'string', default: 'deploy/topologies/default.json' },
    accounts: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '2000' },
    'sample-seconds': { type: 'string', default: '10' },
    probe: { type: 'boolean', default: false },
    'role-flag': { type: 'string', multiple: true, default: [] },
    'role-env': { type: 'string', multiple: true, default: [] },
    out: { type: 'string', default: 'bench/results' },
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
// --probe: every role samples its own memory (bench/lib/memProbe.ts) into probeDir.
const probeDir = await mkdtemp(join(tmpdir(), 'monsoon-bench-soak-probe-'));
if (args.probe) {
  process.env.MONSOON_MEM_PROBE_DIR = probeDir;
  process.env.MONSOON_MEM_PROBE_SECONDS = String(SAMPLE_S);
}
const probeModule = join(dirname(fileURLToPath(import.meta.url)), 'lib', 'memProbe.js');
const cluster = await Cluster.start(topology, {
  dir,
  cacheDir,
  ...roleOptions(args['role-flag'], args['role-env'], args.probe ? ['--import', probeModule] : []),
});
const procs: ClusterProcess[] = [...cluster.storage, ...cluster.miners, ...cluster.clients];
const samples: Sample[] = [];
let latest: LoadProgress | undefined;
let result: Awaited<ReturnType<Awaited<ReturnType<typeof clusterLoad>>['run']>>;
/** Date.now() when the load started (the probes' lines are placed on the run's clock by it). */
let startedAt = 0;
/** What each role's probe wrote (--probe), by process name, on the run's clock. */
const probes: Record<string, (ProbeLine & { minute: number })[]> = {};
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
  startedAt = Date.now();
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
  // The lines of the run phase only: those taken while the cluster stops are not the load's.
  const runEnd = (samples.at(-1)?.t ?? 0) / 60 + 0.05;
  for (const p of procs) {
    const file = join(probeDir, `${p.pid}.jsonl`);
    if (!args.probe || !existsSync(file)) continue;
    probes[p.name] = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as ProbeLine)
      .map((l) => ({ ...l, minute: (l.at - startedAt) / 60_000 }))
      .filter((l) => l.minute >= 0 && l.minute <= runEnd);
  }
  await rm(dir, { recursive: true, force: true });
  await rm(probeDir, { recursive: true, force: true });
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
/** Least-squares slope of `points` ([x, y]); 0 with fewer than two. */
const leastSquares = (points: readonly (readonly [number, number])[]): number => {
  if (points.length < 2) return 0;
  const mx = mean(points.map((p) => p[0]));
  const my = mean(points.map((p) => p[1]));
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
};
const slope = (name: string, of: (s: Sample) => Record<string, number> = (s) => s.rssMb): number =>
  leastSquares(half.filter((s) => of(s)[name] !== undefined).map((s) => [s.t / 60, of(s)[name]!] as const));
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
/**
 * The probes' breakdown (--probe): per process, what V8's spaces commit, the old space's live
 * size (the lowest in use over the minute before: after a collection), array buffers, and the
 * anonymous memory outside V8's heap pages (malloc: native code, gRPC, LevelDB, array buffers'
 * backing stores), at minutes 5 and 15 and the end, with each one's slope over the second half.
 */
type ProbeRow = ProbeLine & { minute: number };
const PROBE_METRICS: readonly { name: string; of: (l: ProbeRow) => number; lowest?: true }[] = [
  { name: 'old space committed', of: (l) => l.spaces.old_space?.size ?? 0 },
  { name: 'old space live', of: (l) => l.spaces.old_space?.used ?? 0, lowest: true },
  { name: 'code space committed', of: (l) => l.spaces.code_space?.size ?? 0 },
  { name: 'large objects committed', of: (l) => l.spaces.large_object_space?.size ?? 0 },
  { name: 'new space committed', of: (l) => l.spaces.new_space?.size ?? 0 },
  { name: 'array buffers', of: (l) => l.arrayBuffers },
  { name: 'anonymous RSS outside V8 pages', of: (l) => (l.status.RssAnon ?? 0) / 1024 - l.physicalV8 },
  { name: 'file-backed RSS', of: (l) => (l.status.RssFile ?? 0) / 1024 },
];
const probeEnd = Math.max(0, ...Object.values(probes).flatMap((ls) => ls.map((l) => l.minute)));
const probeAt = (lines: readonly ProbeRow[], m: (typeof PROBE_METRICS)[number], minute: number) => {
  const window = lines.filter((l) => l.minute <= minute + 1e-9 && l.minute > minute - 1);
  if (window.length === 0) return undefined;
  return m.lowest ? Math.min(...window.map(m.of)) : m.of(window.at(-1)!);
};
/** Least squares over the second half: per-minute values (lowest ones for a live size). */
const probeSlope = (lines: readonly ProbeRow[], m: (typeof PROBE_METRICS)[number]): number => {
  const points: [number, number][] = [];
  for (let minute = Math.ceil(probeEnd / 2); minute <= Math.floor(probeEnd); minute++) {
    const v = probeAt(lines, m, minute);
    if (v !== undefined) points.push([minute, v]);
  }
  return leastSquares(points);
};
const probeTable = Object.entries(probes).flatMap(([name, lines]) =>
  PROBE_METRICS.map((m) => {
    const v = (minute: number) => {
      const x = probeAt(lines, m, minute);
      return x === undefined ? null : Math.round(x);
    };
    return {
      process: name,
      what: m.name,
      minute5: v(5),
      minute15: v(15),
      end: v(probeEnd),
      slopeSecondHalfMbPerMin: Number(probeSlope(lines, m).toFixed(2)),
    };
  }),
);
const resultsDir = isAbsolute(args.out) ? args.out : join(root, args.out);
mkdirSync(resultsDir, { recursive: true });
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
  ...(probeTable.length === 0
    ? []
    : [
        '',
        `Inside each role (\`--probe\`: bench/lib/memProbe.ts samples every ${SAMPLE_S} s), MiB: what V8's spaces commit, the old space's live size (its lowest use over the minute before), array buffers, and the anonymous memory outside V8's heap pages (malloc: native code, gRPC, LevelDB, array buffers' backing stores); the slope per minute over minutes ${Math.ceil(probeEnd / 2)}-${Math.floor(probeEnd)}.`,
        '',
        `| process | what | minute 5 | minute 15 | the end (minute ${probeEnd.toFixed(1)}) | slope, MiB/min |`,
        '|---|---|---|---|---|---|',
        ...probeTable.map(
          (r) =>
            `| ${r.process} | ${r.what} | ${r.minute5 ?? '-'} | ${r.minute15 ?? '-'} | ${r.end ?? '-'} | ${signed(r.slopeSecondHalfMbPerMin)} |`,
        ),
      ]),
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
      probeTable,
      probes,
    },
    null,
    2,
  )}\n`,
);
console.log(md.join('\n'));
console.log(
  `results: ${join(resultsDir, 'soak.md')}, soak.json, soak-throughput.svg, soak-rss.svg, soak-heap.svg`,
);
