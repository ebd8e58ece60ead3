/**
 * Ethereum JSON-RPC over HTTP (node:http), for wallets and dapps: POST a JSON-RPC body to any
 * path. CORS is open (dapps call from browsers), a GET is a health check (200, as geth), a body
 * over `maxBodyBytes` is refused with 413 (after reading a little more, or at once when its
 * declared length is far over), and a body that is not UTF-8 JSON is a parse error. Keep-alive
 * is on.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatHostPort, type Logger, parseHostPort, silentLogger } from '@monsoon/edge';
import type { RpcBackend } from './backend.js';
import { defaultRpcHandlerOptions, handleRpc, type RpcHandlerOptions } from './handleRpc.js';
import { RpcErrorCode } from './rpcError.js';

export interface RpcServerOptions extends RpcHandlerOptions {
  /** `host:port`; port 0 = any free port (see `url`). */
  listen: string;
  /** Largest request body in bytes; a larger one is answered 413 (geth: 5 MB). */
  maxBodyBytes: number;
  /** Access-Control-Allow-Origin of every answer: `*` lets a page on any origin call. */
  corsOrigin: string;
}

export const defaultRpcServerOptions: RpcServerOptions = {
  ...defaultRpcHandlerOptions,
  listen: '127.0.0.1:8545',
  maxBodyBytes: 5 * 1024 * 1024,
  corsOrigin: '*',
};

export interface RpcServerModules {
  backend: RpcBackend;
  logger?: Logger;
}

const JSON_TYPE = 'application/json';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * How much of a refused body is still read (and dropped) before answering 413: closing a
 * socket with unread data makes TCP reset it, and the caller would lose the answer (Go's HTTP
 * server reads up to 256 KiB for the same reason). A longer body is cut off.
 */
const LINGER_BYTES = 256 * 1024;

/**
 * The request's body, or 'too large' when it exceeds `max` bytes: once the body has ended, or
 * once LINGER_BYTES more have come.
 */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) chunks.push(chunk);
      else if (size > max + LINGER_BYTES) resolve('too large');
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

/** An HTTP JSON-RPC server bound to `opts.listen`. */
export class RpcServer {
  private constructor(
    private readonly http: Server,
    /** `http://host:port` of the bound address. */
    readonly url: string,
  ) {}

  /** Starts serving; resolves once the port is bound. */
  static async create(opts: Partial<RpcServerOptions>, modules: RpcServerModules): Promise<RpcServer> {
    const o = { ...defaultRpcServerOptions, ...opts };
    const at = parseHostPort(o.listen, 'JSON-RPC address');
    const log = modules.logger ?? silentLogger;
    const http = createServer((req, res) => {
      RpcServer.serve(req, res, o, modules.backend, log).catch((e: unknown) => {
        log.error('rpc request failed', { error: e instanceof Error ? e.message : String(e) });
        if (!res.headersSent) res.writeHead(500, { connection: 'close' });
        res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(at.port, at.host, () => {
        http.off('error', reject);
        resolve();
      });
    });
    const port = (http.address() as AddressInfo).port;
    return new RpcServer(http, `http://${formatHostPort({ host: at.host, port })}`);
  }

  private static async serve(
    req: IncomingMessage,
    res: ServerResponse,
    o: RpcServerOptions,
    backend: RpcBackend,
    log: Logger,
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
    if (declared !== undefined && declared > o.maxBodyBytes + LINGER_BYTES) {
      tooLarge(res, declared, o.maxBodyBytes);
      return;
    }
    let raw: Buffer | 'too large';
    try {
      raw = await readBody(req, o.maxBodyBytes);
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
    const answer = await handleRpc(text, backend, o, log);
    if (answer === undefined) res.writeHead(204).end();
    else sendJson(res, 200, answer);
  }

  /** Stops listening and closes every connection, keep-alive ones included. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }
}
