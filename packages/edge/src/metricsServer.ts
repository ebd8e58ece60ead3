/** A tiny HTTP server answering `GET /metrics` with a registry's Prometheus text exposition. */
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
}

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

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
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      modules.registry.render().then(
        (body) => {
          res.writeHead(200, { 'content-type': CONTENT_TYPE });
          res.end(req.method === 'HEAD' ? undefined : body);
        },
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
