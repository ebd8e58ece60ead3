/**
 * Metrics in the Prometheus text exposition format (version 0.0.4), without a metrics library:
 * counters and histograms with labels, and gauges read when scraped. `StorageMetrics` is the
 * storage node's set: requests by method and status, their latency, versions held, head number,
 * log size and resident memory.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageError, StorageErrorCode } from '../storageError.js';
import type { StorageNode } from '../storageNode.js';

export type Labels = Readonly<Record<string, string>>;

/** A label value as the text format needs it: backslash, double quote and newline escaped. */
function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labelText(labels: Labels, extra?: [string, string]): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  if (extra !== undefined) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

function num(n: number): string {
  if (n === Number.POSITIVE_INFINITY) return '+Inf';
  if (n === Number.NEGATIVE_INFINITY) return '-Inf';
  return Number.isNaN(n) ? 'NaN' : String(n);
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

interface Metric {
  readonly name: string;
  render(): Promise<string[]>;
}

/** A monotonically increasing count per label set. */
export class Counter implements Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    private readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = labelText(labels);
    const v = this.values.get(key);
    if (v === undefined) this.values.set(key, { labels, value: by });
    else v.value += by;
  }

  /** The count for a label set (0 when never incremented). */
  get(labels: Labels = {}): number {
    return this.values.get(labelText(labels))?.value ?? 0;
  }

  async render(): Promise<string[]> {
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [key, v] of this.values) out.push(`${this.name}${key} ${num(v.value)}`);
    return out;
  }
}

/** Observations counted into cumulative buckets, per label set. */
export class Histogram implements Metric {
  private readonly series = new Map<
    string,
    { labels: Labels; counts: number[]; sum: number; count: number }
  >();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly buckets: readonly number[],
  ) {}

  observe(labels: Labels, value: number): void {
    const key = labelText(labels);
    let s = this.series.get(key);
    if (s === undefined) {
      s = { labels, counts: new Array(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }

  async render(): Promise<string[]> {
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values()) {
      this.buckets.forEach((le, i) => {
        out.push(`${this.name}_bucket${labelText(s.labels, ['le', num(le)])} ${s.counts[i]}`);
      });
      out.push(`${this.name}_bucket${labelText(s.labels, ['le', '+Inf'])} ${s.count}`);
      out.push(`${this.name}_sum${labelText(s.labels)} ${num(s.sum)}`);
      out.push(`${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
    return out;
  }
}

/** A value read when scraped; a read that fails or gives undefined leaves the gauge out. */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly read: () => number | undefined | Promise<number | undefined>,
  ) {}

  async render(): Promise<string[]> {
    let v: number | undefined;
    try {
      v = await this.read();
    } catch {
      v = undefined;
    }
    if (v === undefined) return [];
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`, `${this.name} ${num(v)}`];
  }
}

/** The metrics of one process, rendered in registration order. */
export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  private add<M extends Metric>(m: M): M {
    if (!NAME.test(m.name) || this.metrics.has(m.name)) {
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `metric name ${JSON.stringify(m.name)}: expected a Prometheus name not yet registered`,
      );
    }
    this.metrics.set(m.name, m);
    return m;
  }

  counter(name: string, help: string): Counter {
    return this.add(new Counter(name, help));
  }

  histogram(name: string, help: string, buckets: readonly number[]): Histogram {
    return this.add(
      new Histogram(
        name,
        help,
        [...buckets].sort((a, b) => a - b),
      ),
    );
  }

  gauge(name: string, help: string, read: () => number | undefined | Promise<number | undefined>): Gauge {
    return this.add(new Gauge(name, help, read));
  }

  /** The text exposition of every metric. */
  async render(): Promise<string> {
    const lines: string[] = [];
    for (const m of this.metrics.values()) lines.push(...(await m.render()));
    return `${lines.join('\n')}\n`;
  }
}

/** What the gRPC server reports about each call it answers. */
export interface RequestMetrics {
  /** A finished call: its RPC name, status name (`OK`, `INVALID_ARGUMENT`, …) and duration. */
  observeRequest(method: string, code: string, seconds?: number): void;
}

/** Latency buckets, seconds: from a cached read to a large block. */
export const REQUEST_SECONDS_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** Total size of the files in a directory (0 when it does not exist). */
async function dirBytes(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
  let total = 0;
  for (const n of names) {
    try {
      const s = await stat(join(dir, n));
      if (s.isFile()) total += s.size;
    } catch {
      // A segment removed between readdir and stat: it no longer counts.
    }
  }
  return total;
}

/** The storage node's metrics. */
export class StorageMetrics implements RequestMetrics {
  readonly registry: MetricsRegistry;
  private readonly requests: Counter;
  private readonly seconds: Histogram;

  constructor(registry: MetricsRegistry = new MetricsRegistry()) {
    this.registry = registry;
    this.requests = registry.counter(
      'monsoon_storage_requests_total',
      'gRPC calls answered, by method and status.',
    );
    this.seconds = registry.histogram(
      'monsoon_storage_request_seconds',
      'Time to answer a unary gRPC call, by method.',
      REQUEST_SECONDS_BUCKETS,
    );
    registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () =>
      process.memoryUsage.rss(),
    );
  }

  observeRequest(method: string, code: string, seconds?: number): void {
    this.requests.inc({ method, code });
    if (seconds !== undefined) this.seconds.observe({ method }, seconds);
  }

  /** Calls counted so far for a method and status. */
  requestCount(method: string, code: string): number {
    return this.requests.get({ method, code });
  }

  /**
   * Adds the gauges read from a node: versions held, head number, and, given its data
   * directory, the size of its write-ahead log on disk (the node exposes no log counters).
   */
  watchNode(node: StorageNode, dataDir?: string): void {
    this.registry.gauge(
      'monsoon_storage_versions',
      'Versions (blocks) held, on every live fork.',
      () => node.versions.size,
    );
    this.registry.gauge('monsoon_storage_head_number', 'Number of the head block.', () =>
      Number(node.head.header.number),
    );
    if (dataDir !== undefined) {
      this.registry.gauge('monsoon_storage_wal_bytes', 'Bytes of write-ahead log segments on disk.', () =>
        dirBytes(join(dataDir, 'wal')),
      );
    }
  }
}
