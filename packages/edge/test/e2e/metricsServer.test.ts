/** The /metrics endpoint on a real socket (127.0.0.1:0): the registry as it is when scraped. */
import { afterEach, describe, expect, it } from '@jest/globals';
import { MetricsRegistry, MetricsServer } from '@monsoon/edge';

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('MetricsServer', () => {
  it('serves GET and HEAD /metrics as Prometheus text, 404 elsewhere, 405 for other methods', async () => {
    const registry = new MetricsRegistry();
    const calls = registry.counter('x_calls_total', 'Calls.');
    server = await MetricsServer.create({ listen: '127.0.0.1:0' }, { registry });
    const url = `http://${server.address()}`;
    expect(server.address()).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);

    calls.inc({ method: 'A' });
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await res.text()).toContain('x_calls_total{method="A"} 1\n');
    calls.inc({ method: 'A' });
    expect(await (await fetch(`${url}/metrics?x=1`)).text()).toContain('x_calls_total{method="A"} 2\n');

    const head = await fetch(`${url}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await fetch(`${url}/other`)).status).toBe(404);
    expect((await fetch(`${url}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('refuses an address that is not host:port', async () => {
    await expect(
      MetricsServer.create({ listen: 'localhost' }, { registry: new MetricsRegistry() }),
    ).rejects.toThrow(/^BAD_ARGUMENT: metrics address "localhost": expected host:port/);
  });
});
