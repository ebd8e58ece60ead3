/**
 * Metrics in the Prometheus text exposition format (version 0.0.4), without a metrics library:
 * counters and histograms with labels, and gauges and counters read when scraped (from counts a
 * component already keeps). Each role builds its own set on a `MetricsRegistry`.
 */
import { EdgeError, EdgeErrorCode } from './edgeError.js';

export type Labels = Readonly<Record<string, string>>;

/** One labelled value of a metric read on scrape. */
export interface Sample {
  readonly labels: Labels;
  readonly value: number;
}

/** What a metric read on scrape gives: one value, one per label set, or undefined for none. */
export type Reading = number | undefined | readonly Sample[];

export type ReadMetric = () => Reading | Promise<Reading>;

/** A label value as the text format needs it: backslash, double quote and newline escaped. */
function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** `{k="v",…}` of `labels` (and `extra` last), '' for none: no arrays (3 histogram observations a transaction). */
function labelText(labels: Labels, extra?: [string, string]): string {
  let text = '';
  for (const k in labels) {
    if (!Object.hasOwn(labels, k)) continue;
    text += `${text === '' ? '{' : ','}${k}="${escapeLabel(labels[k]!)}"`;
  }
  if (extra !== undefined) text += `${text === '' ? '{' : ','}${extra[0]}="${escapeLabel(extra[1])}"`;
  return text === '' ? '' : `${text}}`;
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

/** Values read when scraped; a read that fails or gives undefined leaves the metric out. */
abstract class ReadOnScrape implements Metric {
  protected abstract readonly type: 'gauge' | 'counter';

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly read: ReadMetric,
  ) {}

  async render(): Promise<string[]> {
    let v: Reading;
    try {
      v = await this.read();
    } catch {
      v = undefined;
    }
    if (v === undefined) return [];
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    if (typeof v === 'number') out.push(`${this.name} ${num(v)}`);
    else for (const s of v) out.push(`${this.name}${labelText(s.labels)} ${num(s.value)}`);
    return out;
  }
}

/** A level read when scraped (a head number, a queue length). */
export class Gauge extends ReadOnScrape {
  protected readonly type = 'gauge';
}

/** A count some component already keeps, read when scraped; it must never go down. */
export class ObservableCounter extends ReadOnScrape {
  protected readonly type = 'counter';
}

/** The metrics of one process, rendered in registration order. */
export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  private add<M extends Metric>(m: M): M {
    if (!NAME.test(m.name) || this.metrics.has(m.name)) {
      throw new EdgeError(
        EdgeErrorCode.BadArgument,
        `metric name ${JSON.stringify(m.name)}: expected a Prometheus name not yet registered`,
        { name: m.name },
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

  gauge(name: string, help: string, read: ReadMetric): Gauge {
    return this.add(new Gauge(name, help, read));
  }

  observableCounter(name: string, help: string, read: ReadMetric): ObservableCounter {
    return this.add(new ObservableCounter(name, help, read));
  }

  /** The text exposition of every metric. */
  async render(): Promise<string> {
    const lines: string[] = [];
    for (const m of this.metrics.values()) lines.push(...(await m.render()));
    return `${lines.join('\n')}\n`;
  }
}

/** What a gRPC server reports about each call it answers. */
export interface RequestMetrics {
  /** A finished call: its RPC name, status name (`OK`, `INVALID_ARGUMENT`, …) and duration. */
  observeRequest(method: string, code: string, seconds?: number): void;
}

/** Latency buckets, seconds: from a cached read to a large block. */
export const REQUEST_SECONDS_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** Seconds since `started` (a `process.hrtime.bigint()`). */
export function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/**
 * Adds what every role process reports about itself: its resident memory, and how much of it is
 * V8's heap (committed and live) and memory outside it held by JS objects (Buffers and other
 * array buffers), so a growing RSS can be told apart: the heap V8 keeps committed, live objects,
 * or native memory (names as prom-client's default metrics, which dashboards know).
 */
export function addProcessMetrics(registry: MetricsRegistry): void {
  registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () =>
    process.memoryUsage.rss(),
  );
  registry.gauge(
    'nodejs_heap_size_total_bytes',
    "V8's committed heap, bytes.",
    () => process.memoryUsage().heapTotal,
  );
  registry.gauge(
    'nodejs_heap_size_used_bytes',
    "V8's heap in use, bytes.",
    () => process.memoryUsage().heapUsed,
  );
  registry.gauge(
    'nodejs_external_memory_bytes',
    'Memory outside the V8 heap held by JS objects (array buffers included), bytes.',
    () => process.memoryUsage().external,
  );
}
