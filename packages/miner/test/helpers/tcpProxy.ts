/**
 * A user-space TCP proxy for partition tests: forwards 127.0.0.1:<port> to a target while
 * healed; `partition()` drops every open connection and every new one at once (a peer sees its
 * stream reset and its redials fail) until `heal()`.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { parseHostPort } from '@monsoon/edge';

export class TcpProxy {
  private partitioned = false;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly target: string,
  ) {}

  /** Listens on 127.0.0.1:0 and forwards to `target` (`host:port`). */
  static async start(target: string): Promise<TcpProxy> {
    const { host, port } = parseHostPort(target, 'proxy target');
    const server = createServer();
    const proxy = new TcpProxy(server, target);
    server.on('connection', (inbound) => {
      if (proxy.partitioned) {
        inbound.destroy();
        return;
      }
      const outbound = createConnection({ host, port });
      for (const [a, b] of [
        [inbound, outbound],
        [outbound, inbound],
      ] as const) {
        proxy.sockets.add(a);
        a.pipe(b);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          proxy.sockets.delete(a);
          b.destroy();
        });
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `127.0.0.1:<port>` to dial instead of the target. */
  get address(): string {
    const a = this.server.address() as { port: number };
    return `127.0.0.1:${a.port}`;
  }

  /** Cuts every connection through the proxy and refuses new ones. */
  partition(): void {
    this.partitioned = true;
    for (const s of this.sockets) s.destroy();
  }

  heal(): void {
    this.partitioned = false;
  }

  close(): Promise<void> {
    this.partition();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
