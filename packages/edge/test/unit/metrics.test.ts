/** The Prometheus text a registry renders, and the names it refuses. */
import { describe, expect, it } from '@jest/globals';
import { addProcessMetrics, EdgeError, MetricsRegistry } from '@monsoon/edge';

describe('MetricsRegistry', () => {
  it('renders counters with escaped labels, cumulative histogram buckets, and gauges read on scrape', async () => {
    const r = new MetricsRegistry();
    const c = r.counter('x_total', 'Things.');
    c.inc({ method: 'A', code: 'OK' });
    c.inc({ method: 'A', code: 'OK' }, 2);
    c.inc({ method: 'say "hi"\\\n' });
    const h = r.histogram('x_seconds', 'Time.', [1, 0.1]);
    h.observe({ m: 'A' }, 0.05);
    h.observe({ m: 'A' }, 0.5);
    h.observe({ m: 'A' }, 5);
    let g = 1;
    r.gauge('x_gauge', 'Level.', () => g++);
    r.gauge('x_broken', 'Fails.', () => {
      throw new Error('unreadable');
    });
    expect(await r.render()).toBe(
      [
        '# HELP x_total Things.',
        '# TYPE x_total counter',
        'x_total{method="A",code="OK"} 3',
        'x_total{method="say \\"hi\\"\\\\\\n"} 1',
        '# HELP x_seconds Time.',
        '# TYPE x_seconds histogram',
        'x_seconds_bucket{m="A",le="0.1"} 1',
        'x_seconds_bucket{m="A",le="1"} 2',
        'x_seconds_bucket{m="A",le="+Inf"} 3',
        'x_seconds_sum{m="A"} 5.55',
        'x_seconds_count{m="A"} 3',
        '# HELP x_gauge Level.',
        '# TYPE x_gauge gauge',
        'x_gauge 1',
        '',
      ].join('\n'),
    );
    expect(await r.render()).toContain('x_gauge 2\n');
  });

  it('renders a histogram without labels, and labels in their order, none inherited', async () => {
    const r = new MetricsRegistry();
    const h = r.histogram('y_ms', 'Y.', [1]);
    h.observe({}, 0.5);
    h.observe({}, 2);
    const g = r.histogram('z_ms', 'Z.', [1]);
    const labels = Object.assign(Object.create({ inherited: 'no' }) as Record<string, string>, {
      b: 'x"',
      a: 'y',
    });
    g.observe(labels, 3);
    g.observe({ b: 'x"', a: 'y' }, 0.25);
    expect(await r.render()).toBe(
      [
        '# HELP y_ms Y.',
        '# TYPE y_ms histogram',
        'y_ms_bucket{le="1"} 1',
        'y_ms_bucket{le="+Inf"} 2',
        'y_ms_sum 2.5',
        'y_ms_count 2',
        '# HELP z_ms Z.',
        '# TYPE z_ms histogram',
        'z_ms_bucket{b="x\\"",a="y",le="1"} 1',
        'z_ms_bucket{b="x\\"",a="y",le="+Inf"} 2',
        'z_ms_sum{b="x\\"",a="y"} 3.25',
        'z_ms_count{b="x\\"",a="y"} 2',
        '',
      ].join('\n'),
    );
  });

  it('refuses a name twice or a name Prometheus does not allow', () => {
    const r = new MetricsRegistry();
    r.counter('a_total', 'A.');
    expect(() => r.counter('a_total', 'A.')).toThrow(EdgeError);
    expect(() => r.counter('a_total', 'A.')).toThrow(/BAD_ARGUMENT: metric name "a_total"/);
    expect(() => r.gauge('a-b', 'B.', () => 1)).toThrow(/BAD_ARGUMENT: metric name "a-b"/);
  });
});

describe('read on scrape', () => {
  it('renders one value or one per label set, typed gauge or counter; undefined leaves the metric out', async () => {
    const r = new MetricsRegistry();
    const counts = { accepted: 2, invalid: 0 };
    r.observableCounter('txs_total', 'Transactions.', () =>
      Object.entries(counts).map(([result, value]) => ({ labels: { result }, value })),
    );
    let head: number | undefined;
    r.gauge('head_number', 'Head.', () => head);
    expect(await r.render()).toBe(
      [
        '# HELP txs_total Transactions.',
        '# TYPE txs_total counter',
        'txs_total{result="accepted"} 2',
        'txs_total{result="invalid"} 0',
        '',
      ].join('\n'),
    );
    counts.accepted++;
    head = 7;
    const text = await r.render();
    expect(text).toContain('txs_total{result="accepted"} 3\n');
    expect(text).toContain('# TYPE head_number gauge\nhead_number 7\n');
  });

  it('adds the process gauges', async () => {
    const r = new MetricsRegistry();
    addProcessMetrics(r);
    const text = await r.render();
    expect(text).toMatch(/^process_resident_memory_bytes [1-9]\d*$/m);
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    // The committed heap is part of the resident memory.
    expect(gauge('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(gauge('nodejs_heap_size_total_bytes')).toBeLessThan(gauge('process_resident_memory_bytes'));
    expect(gauge('nodejs_external_memory_bytes')).toBeGreaterThan(0);
  });
});
