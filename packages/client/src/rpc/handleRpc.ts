/**
 * JSON-RPC 2.0 without the transport: a request body in, the response to send (or nothing, for
 * notifications) out. Batches run concurrently and answer in order. Nothing a caller sends makes
 * it throw: every fault becomes an error response, and faults of the server's own are logged.
 */
import { type Logger, silentLogger } from '@monsoon/edge';
import type { RpcBackend } from './backend.js';
import type { ChainEvents } from './chainEvents.js';
import type { Filters } from './filters.js';
import type { Json } from './json.js';
import { defaultLogQueryOptions, type LogQueryOptions } from './logQuery.js';
import { RPC_METHODS, type RpcContext, type RpcMethod } from './methods.js';
import { ArgError } from './params.js';
import { RpcError, RpcErrorCode, rpcErrorOf } from './rpcError.js';
import type { Subscriptions } from './subscriptions.js';

export interface RpcHandlerOptions extends LogQueryOptions {
  /** What web3_clientVersion answers. */
  clientVersion: string;
  /** Most requests in one batch; a larger batch is answered with a single error (geth: 1000). */
  maxBatchSize: number;
}

export const defaultRpcHandlerOptions: RpcHandlerOptions = {
  ...defaultLogQueryOptions,
  clientVersion: `Monsoon/v0.1.0/${process.platform}-${process.arch}/node${process.versions.node}`,
  maxBatchSize: 1000,
};

/**
 * What a request may use beyond the backend: the chain's events and the server's filters, and
 * the subscriptions of the connection it came on (a WebSocket's; none over HTTP).
 */
export interface RpcSession {
  readonly events?: ChainEvents;
  readonly filters?: Filters;
  readonly subscriptions?: Subscriptions;
}

/** A request id: what the response echoes. */
export type RpcId = string | number | null;

export interface RpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: Json;
}

export type RpcResponse =
  | { readonly jsonrpc: '2.0'; readonly id: RpcId; readonly result: Json }
  | { readonly jsonrpc: '2.0'; readonly id: RpcId; readonly error: RpcErrorObject };

function failure(id: RpcId, e: RpcError): RpcResponse {
  const error: RpcErrorObject =
    e.data === undefined
      ? { code: e.code, message: e.message }
      : { code: e.code, message: e.message, data: e.data };
  return { jsonrpc: '2.0', id, error };
}

function invalidParams(message: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, message);
}

const INVALID_REQUEST = new RpcError(RpcErrorCode.InvalidRequest, 'invalid request');

/** The method's arguments from `params`, refused with geth's messages. */
function decodeArgs(m: RpcMethod, params: unknown): unknown[] {
  if (m.rawParams === true) return [params];
  if (params === undefined || params === null) params = [];
  if (!Array.isArray(params)) throw invalidParams('non-array args');
  const decoders = [...m.required, ...m.optional];
  const args: unknown[] = [];
  for (let i = 0; i < params.length; i++) {
    if (i >= decoders.length) throw invalidParams(`too many arguments, want at most ${decoders.length}`);
    const v: unknown = params[i];
    if (v === null) {
      if (i < m.required.length) throw invalidParams(`missing value for required argument ${i}`);
      args.push(undefined);
      continue;
    }
    try {
      args.push(decoders[i]!(v));
    } catch (e) {
      if (e instanceof ArgError) throw invalidParams(`invalid argument ${i}: ${e.message}`);
      throw e;
    }
  }
  if (args.length < m.required.length)
    throw invalidParams(`missing value for required argument ${args.length}`);
  return args;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isId(v: unknown): v is RpcId {
  return v === null || typeof v === 'string' || typeof v === 'number';
}

/** Runs one call; the error response for anything it throws. */
async function call(
  ctx: RpcContext,
  log: Logger,
  method: string,
  params: unknown,
): Promise<RpcError | { result: Json }> {
  const m = RPC_METHODS.get(method);
  if (m === undefined) {
    return new RpcError(RpcErrorCode.MethodNotFound, `the method ${method} does not exist/is not available`);
  }
  try {
    return { result: await m.run(ctx, decodeArgs(m, params)) };
  } catch (e) {
    const known = rpcErrorOf(e);
    if (known !== undefined) return known;
    log.error('rpc method failed', {
      method,
      error: e instanceof Error ? e.message : String(e),
      stack: e instanceof Error ? e.stack : undefined,
    });
    return new RpcError(RpcErrorCode.Internal, 'internal error');
  }
}

/** One request object of a body; undefined for a notification. */
async function handleOne(ctx: RpcContext, log: Logger, msg: unknown): Promise<RpcResponse | undefined> {
  if (!isObject(msg)) return failure(null, INVALID_REQUEST);
  const hasId = 'id' in msg;
  if (hasId && !isId(msg.id)) return failure(null, INVALID_REQUEST);
  const id = hasId ? (msg.id as RpcId) : null;
  if (msg.jsonrpc !== '2.0' || typeof msg.method !== 'string' || msg.method === '') {
    return failure(id, INVALID_REQUEST);
  }
  const outcome = await call(ctx, log, msg.method, msg.params);
  if (!hasId) return undefined;
  return outcome instanceof RpcError ? failure(id, outcome) : { jsonrpc: '2.0', id, result: outcome.result };
}

/**
 * Answers a JSON-RPC body: a JSON text, or a value already parsed from one. Resolves to the
 * response object, the batch's array, or undefined when there is nothing to send (only
 * notifications). Never rejects. `session` brings the events, filters and (on a WebSocket) the
 * subscriptions the event methods need; without it they answer as unavailable.
 */
export async function handleRpc(
  body: string | object,
  backend: RpcBackend,
  opts: Partial<RpcHandlerOptions> = {},
  log: Logger = silentLogger,
  session: RpcSession = {},
): Promise<RpcResponse | RpcResponse[] | undefined> {
  const o = { ...defaultRpcHandlerOptions, ...opts };
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return failure(null, new RpcError(RpcErrorCode.ParseError, `parse error: ${why}`));
    }
  }
  const ctx: RpcContext = { ...session, backend, clientVersion: o.clientVersion, logQuery: o };
  if (!Array.isArray(value)) return handleOne(ctx, log, value);
  if (value.length === 0) return failure(null, new RpcError(RpcErrorCode.InvalidRequest, 'empty batch'));
  if (value.length > o.maxBatchSize) {
    // As geth: one error, carrying the id of the batch's first call, since a batch has no id.
    const first = value.find((m) => isObject(m) && 'id' in m && isId(m.id)) as { id: RpcId } | undefined;
    return [failure(first?.id ?? null, new RpcError(RpcErrorCode.InvalidRequest, 'batch too large'))];
  }
  const responses = await Promise.all(value.map((m: unknown) => handleOne(ctx, log, m)));
  const sent = responses.filter((r): r is RpcResponse => r !== undefined);
  return sent.length === 0 ? undefined : sent;
}
