/** The HTTP edge of a role's metrics: `/metrics`, the liveness and readiness probes, and refusals. */
import { afterEach, describe, expect, it } from '@jest/globals';
import { MetricsRegistry, MetricsServer, type MetricsServerModules } from '@monsoon/edge';

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(modules: Partial<MetricsServerModules> = {}): Promise<string> {
  const registry = new MetricsRegistry();
  registry.gauge('x_head_number', 'Head.', () => 7);
  const s = await MetricsServer.create({ listen: '127.0.0.1:0' }, { registry, ...modules });
  servers.push(s);
  return `http://${s.address()}`;
}

async function get(url: string, method = 'GET'): Promise<{ status: number; body: string; type: string }> {
  const r = await fetch(url, { method });
  return { status: r.status, body: await r.text(), type: r.headers.get('content-type') ?? '' };
}

describe('MetricsServer', () => {
  it('serves the Prometheus text at /metrics', async () => {
    const base = await serve();
    const r = await get(`${base}/metrics?x=1`);
    expect(r.status).toBe(200);
    expect(r.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(r.body).toContain('# TYPE x_head_number gauge\nx_head_number 7\n');
  });

  it('answers /healthz while it serves, and /readyz by what the role says, asked on every probe', async () => {
    let ready = false;
    const base = await serve({ ready: () => ready });
    expect(await get(`${base}/healthz`)).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await get(`${base}/readyz`)).toMatchObject({ status: 503, body: 'not ready\n' });
    ready = true;
    expect(await get(`${base}/readyz`)).toMatchObject({ status: 200, body: 'ready\n' });
    expect(await get(`${base}/readyz`, 'HEAD')).toMatchObject({ status: 200, body: '' });
    ready = false;
    expect((await get(`${base}/readyz`)).status).toBe(503);
  });

  it('is ready once serving when the role gives no readiness, and not ready when the check throws', async () => {
    expect((await get(`${await serve()}/readyz`)).status).toBe(200);
    const warnings: string[] = [];
    const base = await serve({
      ready: () => {
        throw new Error('no head yet');
      },
      logger: { info: () => {}, warn: (msg) => warnings.push(msg), error: () => {} },
    });
    expect((await get(`${base}/readyz`)).status).toBe(503);
    expect(warnings).toEqual(['readiness check failed']);
  });

  it('refuses other paths (404, naming the paths it has) and other methods (405)', async () => {
    const base = await serve();
    const r = await get(`${base}/health`);
    expect(r.status).toBe(404);
    expect(r.body).toBe('not found: try /metrics, /healthz, /readyz\n');
    expect((await get(`${base}/readyz`, 'POST')).status).toBe(405);
  });
});
