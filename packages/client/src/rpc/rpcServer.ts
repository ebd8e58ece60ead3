/**
 * Ethereum JSON-RPC over HTTP (node:http) and, on the same port, over WebSocket (an HTTP
 * upgrade: `ws://host:port`, any path), for wallets and dapps. HTTP: POST a JSON-RPC body to any
 * path; CORS is open (dapps call from browsers), a GET is a health check (200, as geth), a body
 * that is not UTF-8 JSON is a parse error, keep-alive is on. A body over `maxBodyBytes` is read
 * to its end and dropped (up to `maxDrainBytes` more) before the 413 is sent and the connection
 * closed: a caller still sending when the server closes gets EPIPE instead of the answer (Node's
 * fetch and http, hence ethers and viem, do); a body beyond that bound is cut off.
 *
 * With ChainEvents, eth_getLogs and the filter methods are served (filters are shared by every
 * connection) and WebSocket connections get eth_subscribe (see wsConnection.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatHostPort, type Logger, parseHostPort, silentLogger } from '@monsoon/edge';
import { WebSocketServer } from 'ws';
import type { RpcBackend } from './backend.js';
import type { ChainEvents } from './chainEvents.js';
import { defaultFiltersOptions, Filters, type FiltersOptions } from './filters.js';
import { defaultRpcHandlerOptions, handleRpc, type RpcSession } from './handleRpc.js';
import { RpcErrorCode } from './rpcError.js';
import { defaultSubscriptionsOptions, type Subscriptions } from './subscriptions.js';
import { serveWebSocket, type WsConnectionOptions } from './wsConnection.js';

export interface RpcServerOptions extends WsConnectionOptions, FiltersOptions {
  /** `host:port`; port 0 = any free port (see `url`). */
  listen: string;
  /** Largest request body in bytes; a larger one is answered 413 (geth: 5 MB). */
  maxBodyBytes: number;
  /** How much of a refused body is still read and dropped so the caller gets its 413; beyond, it is cut off. */
  maxDrainBytes: number;
  /** Largest WebSocket message in bytes; a larger one closes the connection (1009; geth: 32 MiB). */
  wsMaxMessageBytes: number;
  /** Access-Control-Allow-Origin of every answer: `*` lets a page on any origin call. */
  corsOrigin: string;
}

export const defaultRpcServerOptions: RpcServerOptions = {
  ...defaultRpcHandlerOptions,
  ...defaultFiltersOptions,
  ...defaultSubscriptionsOptions,
  listen: '127.0.0.1:8545',
  maxBodyBytes: 5 * 1024 * 1024,
  maxDrainBytes: 32 * 1024 * 1024,
  wsMaxMessageBytes: 32 * 1024 * 1024,
  wsMaxBufferedBytes: 16 * 1024 * 1024,
  wsPingMs: 30_000,
  corsOrigin: '*',
};

export interface RpcServerModules {
  backend: RpcBackend;
  /** Logs and chain changes: without them there is no eth_getLogs, no filters and no subscriptions. */
  events?: ChainEvents;
  logger?: Logger;
}

const JSON_TYPE = 'application/json';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The request's body, or 'too large' when it exceeds `max` bytes: once the body has ended (what
 * is over is dropped as it comes), or once `drain` more bytes have come.
 */
function readBody(req: IncomingMessage, max: number, drain: number): Promise<Buffer | 'too large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) chunks.push(chunk);
      else if (size > max + drain) resolve('too large');
    });
    req.on('end', () => resolve(size > max ? 'too large' : Buffer.concat(chunks, size)));
    req.on('error', reject);
    req.on('close', () => reject(new Error('the request was closed before its body ended')));
  });
}

/** Writes a JSON answer; a connection the caller already closed is no fault of ours. */
function sendJson(res: ServerResponse, status: number, body: unknown, close = false): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'content-type': JSON_TYPE,
    'content-length': Buffer.byteLength(text),
  };
  // A body left unread must not be drained from a keep-alive connection: close it instead.
  if (close) headers.connection = 'close';
  res.writeHead(status, headers).end(text);
}

/** 413 (geth's message for a declared length), closing the connection. */
function tooLarge(res: ServerResponse, declared: number | undefined, max: number): void {
  const message =
    declared === undefined
      ? `content length too large (more than ${max} bytes)`
      : `content length too large (${declared}>${max})`;
  const body = { jsonrpc: '2.0', id: null, error: { code: RpcErrorCode.InvalidRequest, message } };
  sendJson(res, 413, body, true);
}

/** A JSON-RPC server (HTTP and WebSocket) bound to `opts.listen`. */
export class RpcServer {
  private constructor(
    private readonly http: Server,
    private readonly wss: WebSocketServer,
    /** `http://host:port` of the bound address. */
    readonly url: string,
    /** The installed filters (with ChainEvents only). */
    readonly filters: Filters | undefined,
    /** The subscriptions of each open WebSocket connection. */
    private readonly connections: ReadonlySet<Subscriptions>,
  ) {}

  /** Subscriptions open on all WebSocket connections. */
  get subscriptionCount(): number {
    let n = 0;
    for (const subs of this.connections) n += subs.size;
    return n;
  }

  /** `ws://host:port`: the same port, for WebSocket clients. */
  get wsUrl(): string {
    return `ws://${this.url.slice('http://'.length)}`;
  }

  /** Starts serving; resolves once the port is bound. */
  static async create(opts: Partial<RpcServerOptions>, modules: RpcServerModules): Promise<RpcServer> {
    const o = { ...defaultRpcServerOptions, ...opts };
    const at = parseHostPort(o.listen, 'JSON-RPC address');
    const log = modules.logger ?? silentLogger;
    const { backend, events } = modules;
    const filters = events === undefined ? undefined : new Filters(o, { events, logger: log });
    const session: RpcSession = { events, filters };
    const http = createServer((req, res) => {
      RpcServer.serve(req, res, o, backend, log, session).catch((e: unknown) => {
        log.error('rpc request failed', { error: e instanceof Error ? e.message : String(e) });
        if (!res.headersSent) res.writeHead(500, { connection: 'close' });
        res.end();
      });
    });
    const wss = new WebSocketServer({ noServer: true, maxPayload: o.wsMaxMessageBytes });
    const connections = new Set<Subscriptions>();
    http.on('upgrade', (req, socket, head) => {
      wss.handleUpgrade(req, socket, head, (ws) => {
        const subs = serveWebSocket(ws, o, { backend, events, filters, logger: log });
        if (subs === undefined) return;
        connections.add(subs);
        ws.on('close', () => connections.delete(subs));
      });
    });
    try {
      await new Promise<void>((resolve, reject) => {
        http.once('error', reject);
        http.listen(at.port, at.host, () => {
          http.off('error', reject);
          resolve();
        });
      });
    } catch (e) {
      filters?.close();
      throw e;
    }
    const port = (http.address() as AddressInfo).port;
    return new RpcServer(
      http,
      wss,
      `http://${formatHostPort({ host: at.host, port })}`,
      filters,
      connections,
    );
  }

  private static async serve(
    req: IncomingMessage,
    res: ServerResponse,
    o: RpcServerOptions,
    backend: RpcBackend,
    log: Logger,
    session: RpcSession,
  ): Promise<void> {
    res.setHeader('access-control-allow-origin', o.corsOrigin);
    if (req.method === 'OPTIONS') {
      res
        .writeHead(204, {
          'access-control-allow-methods': 'POST, GET, OPTIONS',
          'access-control-allow-headers': req.headers['access-control-request-headers'] ?? 'content-type',
          'access-control-max-age': '600',
        })
        .end();
      return;
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      res.writeHead(200).end();
      return;
    }
    if (req.method !== 'POST') {
      res
        .writeHead(405, { allow: 'POST, GET, OPTIONS', 'content-type': 'text/plain' })
        .end('method not allowed\n');
      return;
    }
    const length = req.headers['content-length'];
    const declared = length === undefined ? undefined : Number(length);
    // Too large to drain politely: answer at once and cut the connection.
    if (declared !== undefined && declared > o.maxBodyBytes + o.maxDrainBytes) {
      tooLarge(res, declared, o.maxBodyBytes);
      return;
    }
    let raw: Buffer | 'too large';
    try {
      raw = await readBody(req, o.maxBodyBytes, o.maxDrainBytes);
    } catch (e) {
      log.warn('rpc request body not read', { error: e instanceof Error ? e.message : String(e) });
      res.destroy();
      return;
    }
    if (raw === 'too large') {
      tooLarge(res, declared, o.maxBodyBytes);
      return;
    }
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      sendJson(res, 200, {
        jsonrpc: '2.0',
        id: null,
        error: { code: RpcErrorCode.ParseError, message: 'parse error: the body is not UTF-8' },
      });
      return;
    }
    const answer = await handleRpc(text, backend, o, log, session);
    if (answer === undefined) res.writeHead(204).end();
    else sendJson(res, 200, answer);
  }

  /** Stops listening and closes every connection, keep-alive and WebSocket ones included. */
  close(): Promise<void> {
    this.filters?.close();
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
    return new Promise((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }
}
