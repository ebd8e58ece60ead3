/**
 * A load run's reports: the Markdown summary's table, the SVG chart (well-formed, a path per
 * series, axes and labels, gaps where a second had no inclusion), the files writeReport writes,
 * and the live progress line.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makeTmpDir, removeDir } from '@monsoon/test-utils';
import {
  chartSvg,
  formatLoadProgress,
  type LoadResult,
  niceStep,
  type SecondSample,
  summaryMarkdown,
  ttyLoadProgress,
  writeReport,
} from '@monsoon/workload';

const series: SecondSample[] = [
  { t: 0, submitted: 900, committed: 700, p50Ms: 40, p99Ms: 120 },
  { t: 1, submitted: 1000, committed: 980, p50Ms: 45, p99Ms: 150 },
  { t: 2, submitted: 0, committed: 0, p50Ms: null, p99Ms: null },
  { t: 3, submitted: 0, committed: 120, p50Ms: 60, p99Ms: 300 },
];

const result: LoadResult = {
  version: 1,
  startedAt: '2025-01-01T00:00:00.000Z',
  config: {
    mode: 'open',
    rate: 1000,
    durationMs: 2000,
    clients: ['127.0.0.1:7200', 'http://127.0.0.1:8545/'],
    miner: '127.0.0.1:7100',
    accounts: 100_000,
    hotFraction: 0.1,
    hotShare: 0.9,
    erc20Share: 0.15,
    txType: 'eip1559',
    chainId: '1337',
    batchIntervalMs: 5,
    maxBatch: 500,
    drainTimeoutMs: 30_000,
    meta: { seed: 'monsoon' },
  },
  timing: { runMs: 2000, drainMs: 1500, drainTimedOut: false, stoppedBy: 'duration' },
  counts: {
    generated: 1900,
    submitted: 1900,
    accepted: 1803,
    committed: 1800,
    rejected: 95,
    rejectedBy: { client: 90, miner: 3, stale: 2, rpc: 0 },
    staleAbandoned: 2,
    failed: 2,
    dropped: 3,
    unanswered: 0,
    unsent: 0,
    missed: 0,
    renumbered: 40,
  },
  throughput: { committedPerSecond: 514.2857, offeredPerSecond: 950, peakCommittedPerSecond: 980 },
  latencyMs: { samples: 1800, p50: 44, p95: 140, p99: 290.4, mean: 51.2, max: 310 },
  reasons: [
    { by: 'client', count: 90, samples: [{ reason: 'nonce too low | <weird> `x`', count: 90 }] },
    { by: 'failed', count: 2, samples: [{ reason: 'UNAVAILABLE', count: 2 }] },
  ],
  witness: {
    endpoints: 2,
    bagBytes: 1_800_000,
    unbaggedWitnessBytes: 5_400_000,
    proofBytesFetched: 900_000,
    bagBytesPerTx: 1000,
    unbaggedWitnessBytesPerTx: 3000,
    proofBytesFetchedPerTx: 500,
    storageCallsPerTx: 2.5,
    submissionsPerTx: 0.01,
  },
  blocks: { seen: 40, withRunTxs: 38, reorgs: 1, resubscriptions: 0 },
  series,
};

/** Checks that tags open and close in order (a small XML well-formedness check) and returns the element names. */
function xmlElements(xml: string): string[] {
  const names: string[] = [];
  const stack: string[] = [];
  const tag = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let at = 0;
  for (let m = tag.exec(xml); m !== null; m = tag.exec(xml)) {
    const between = xml.slice(at, m.index);
    // Text between tags has no stray markup, and entities are well formed.
    expect(between).not.toMatch(/[<>]/);
    expect(between.replace(/&(amp|lt|gt|quot|apos);/g, '')).not.toMatch(/&/);
    at = m.index + m[0].length;
    const [, close, name, , selfClosing] = m;
    if (close) expect(stack.pop()).toBe(name);
    else {
      names.push(name!);
      if (!selfClosing) stack.push(name!);
    }
  }
  expect(xml.slice(at).trim()).toBe('');
  expect(stack).toEqual([]);
  return names;
}

describe('summaryMarkdown', () => {
  const md = summaryMarkdown(result);

  it('is a table of the headline numbers', () => {
    expect(md).toMatch(/^# Monsoon load run, 2025-01-01T00:00:00.000Z\n/);
    expect(md).toContain('| metric | value |\n| --- | ---: |\n');
    expect(md).toContain('| committed tx/s | 514.3 |');
    expect(md).toContain('| submit→inclusion latency p50 / p95 / p99 | 44.0 / 140 / 290 ms |');
    expect(md).toContain('| rejected (client / miner / stale / rpc) | 95 (90 / 3 / 2 / 0) |');
    expect(md).toContain('| dropped (accepted, never committed) | 3 |');
    expect(md).toContain('| witness bytes / tx (bag / unbagged / proofs fetched) | 1,000 / 3,000 / 500 |');
    expect(md).toContain("| clients' calls / tx (storage BatchGet / miner Submit) | 2.5 / 0.010 |");
    expect(md).toContain(
      'open loop at 1,000 tx/s, for 2.0 s · 2 clients · 100,000 accounts (10% of accounts take 90%, 15% ERC-20)',
    );
    // Every table row has exactly the two cells (a | in a value would break it).
    for (const line of md.split('\n').filter((l) => l.startsWith('| ')))
      expect(line.replace(/\\\|/g, '').split('|').length).toBe(4);
  });

  it('lists sampled refusal reasons, escaped for Markdown', () => {
    expect(md).toContain("- **client** (90): `nonce too low \\| <weird> 'x'` ×90");
    expect(md).toContain('- **failed** (2): `UNAVAILABLE` ×2');
  });

  it('says why there are no witness numbers', () => {
    expect(summaryMarkdown({ ...result, witness: null })).toContain('n/a (no --metrics)');
    expect(
      summaryMarkdown({ ...result, witness: null, witnessError: 'METRICS_UNAVAILABLE: down' }),
    ).toContain('n/a (METRICS_UNAVAILABLE: down)');
    expect(summaryMarkdown({ ...result, latencyMs: null })).toContain(
      '| submit→inclusion latency p50 / p95 / p99 | n/a |',
    );
  });
});

describe('chartSvg', () => {
  const svg = chartSvg(series, { title: 'load <test> & "chart"' });

  it('is well-formed SVG with one path per series, axes and axis labels', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    const names = xmlElements(svg);
    expect(names[0]).toBe('svg');
    const paths = [...svg.matchAll(/<path class="series" data-series="([^"]+)" d="([^"]*)"/g)];
    expect(paths.map((p) => p[1])).toEqual([
      'committed tx/s',
      'submitted tx/s',
      'latency p50',
      'latency p99',
    ]);
    expect(svg.match(/class="axis x"/g)).toHaveLength(2);
    expect(svg.match(/class="axis y"/g)).toHaveLength(2);
    expect(svg.match(/>time \(s\)</g)).toHaveLength(2);
    expect(svg).toContain('>transactions/s<');
    expect(svg).toContain('>latency (ms)<');
    expect(svg).toContain('<title>load &lt;test&gt; &amp; &quot;chart&quot;</title>');
  });

  it('plots every second of the throughput series and leaves gaps in latency where nothing was committed', () => {
    const d = Object.fromEntries(
      [...svg.matchAll(/data-series="([^"]+)" d="([^"]*)"/g)].map((m) => [m[1], m[2]!] as const),
    );
    expect(d['committed tx/s']!.match(/[ML]/g)).toHaveLength(4);
    expect(d['committed tx/s']!.match(/M/g)).toHaveLength(1);
    // Seconds 0-1, a gap at 2, then a lone point at 3 (drawn as a dot).
    expect(d['latency p50']!.match(/M/g)).toHaveLength(2);
    expect(d['latency p50']).toMatch(/ h0\.1$/);
    // Higher values are higher on the page: the committed peak (second 1) has the smallest y.
    const ys = [...d['committed tx/s']!.matchAll(/[ML]([\d.]+) ([\d.]+)/g)].map((m) => Number(m[2]));
    expect(Math.min(...ys)).toBe(ys[1]);
  });

  it('keeps every label and line inside the canvas', () => {
    // 11 s with 2 s ticks: the last tick (10) is not the end of the axis.
    const long = Array.from({ length: 11 }, (_, t) => ({ ...series[t % 4]!, t }));
    for (const s of [svg, chartSvg(series.slice(0, 3)), chartSvg(long)]) {
      for (const m of s.matchAll(/\b(x|x1|x2)="([\d.-]+)"/g)) {
        expect(Number(m[2])).toBeGreaterThanOrEqual(0);
        expect(Number(m[2])).toBeLessThanOrEqual(900);
      }
      for (const m of s.matchAll(/\b(y|y1|y2)="([\d.-]+)"/g)) {
        expect(Number(m[2])).toBeGreaterThanOrEqual(0);
        expect(Number(m[2])).toBeLessThanOrEqual(560);
      }
    }
  });

  it('stays well-formed with no data at all', () => {
    const empty = chartSvg([]);
    xmlElements(empty);
    expect(empty.match(/<path class="series"/g)).toHaveLength(4);
  });

  it('picks round tick steps', () => {
    expect(niceStep(1000)).toBe(200);
    expect(niceStep(980)).toBe(200);
    expect(niceStep(7)).toBe(2);
    expect(niceStep(0.3)).toBe(0.1);
    expect(niceStep(0)).toBe(1);
  });
});

describe('writeReport', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTmpDir();
  });
  afterAll(() => removeDir(dir));

  it('writes result.json, summary.md and chart.svg', async () => {
    const files = await writeReport(`${dir}/run`, result);
    expect(JSON.parse(await readFile(files.json, 'utf8'))).toEqual(result);
    expect(await readFile(files.markdown, 'utf8')).toBe(summaryMarkdown(result));
    expect(await readFile(files.svg, 'utf8')).toBe(chartSvg(result.series));
  });
});

describe('the progress line', () => {
  const p = {
    phase: 'run' as const,
    elapsedMs: 12_345,
    generated: 61_300,
    submitted: 61_200,
    accepted: 61_000,
    committed: 60_950,
    rejected: 3,
    failed: 0,
    outstanding: 250,
    recentCommittedPerSecond: 4_980.4,
    recentP50Ms: 81.2,
    recentP99Ms: 190,
  };

  it('says how far the run is', () => {
    expect(formatLoadProgress(p)).toBe(
      '12.3 s run · sent 61,200 · committed 60,950 (4,980/s) · p50 81 ms p99 190 ms · outstanding 250 · rejected 3',
    );
  });

  it('redraws one line on a terminal and nothing elsewhere', () => {
    const written: string[] = [];
    const stream = {
      isTTY: true,
      columns: 40,
      write: (s: string) => written.push(s) > 0,
    } as unknown as NodeJS.WriteStream;
    const line = ttyLoadProgress(stream)!;
    line.update(p);
    line.end();
    expect(written[0]!.startsWith('\r12.3 s run')).toBe(true);
    // The line is cut to the terminal's width, then the rest of the old line erased (ESC [K).
    expect(written[0]!.endsWith('\u001b[K')).toBe(true);
    expect(written[0]!.length - 3).toBeLessThanOrEqual(40);
    expect(written.at(-1)).toBe('\n');
    expect(ttyLoadProgress({ isTTY: false } as unknown as NodeJS.WriteStream)).toBeUndefined();
  });
});
