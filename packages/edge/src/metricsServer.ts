/**
 * A tiny HTTP server answering `GET /metrics` with a registry's Prometheus text exposition, and
 * the two probes an orchestrator (Kubernetes, systemd watchdogs, load balancers) asks a role:
 * `/healthz` (liveness: the process answers) and `/readyz` (readiness: the role says it serves).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatHostPort, parseHostPort } from './hostPort.js';
import { type Logger, silentLogger } from './logger.js';
import type { MetricsRegistry } from './metrics.js';

export interface MetricsServerOptions {
  /** `host:port`; port 0 = any free port (see `address()`). */
  listen: string;
}

export interface MetricsServerModules {
  registry: MetricsRegistry;
  logger?: Logger;
  /**
   * Whether the role is ready to serve, asked on every `GET /readyz` (200 when true, 503 when
   * false), so a role can report ready late (after a log replay) or fall back to not ready.
   * Without it, the process is ready as soon as this server answers.
   */
  ready?: () => boolean;
}

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const PATHS = ['/metrics', '/healthz', '/readyz'];

export class MetricsServer {
  private constructor(
    private readonly http: Server,
    private readonly host: string,
  ) {}

  /** Starts serving; resolves once the port is bound. */
  static async create(opts: MetricsServerOptions, modules: MetricsServerModules): Promise<MetricsServer> {
    const at = parseHostPort(opts.listen, 'metrics address');
    const log = modules.logger ?? silentLogger;
    const http = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (!PATHS.includes(path)) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: try ${PATHS.join(', ')}\n`);
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      const send = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
        res.writeHead(status, { 'content-type': type });
        res.end(req.method === 'HEAD' ? undefined : body);
      };
      if (path === '/healthz') {
        send(200, 'ok\n');
        return;
      }
      if (path === '/readyz') {
        let ready: boolean;
        try {
          ready = modules.ready?.() ?? true;
        } catch (e) {
          log.warn('readiness check failed', { error: e instanceof Error ? e.message : String(e) });
          ready = false;
        }
        send(ready ? 200 : 503, ready ? 'ready\n' : 'not ready\n');
        return;
      }
      modules.registry.render().then(
        (body) => send(200, body, CONTENT_TYPE),
        (e: unknown) => {
          log.warn('metrics render failed', { error: e instanceof Error ? e.message : String(e) });
          res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(at.port, at.host, () => {
        http.off('error', reject);
        resolve();
      });
    });
    return new MetricsServer(http, at.host);
  }

  /** The bound address, `host:port`. */
  address(): string {
    return formatHostPort({ host: this.host, port: (this.http.address() as AddressInfo).port });
  }

  /** Stops listening and closes idle keep-alive connections. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }
}
