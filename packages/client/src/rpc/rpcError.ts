/**
 * JSON-RPC errors, and the one place that decides what a caller is told about any other error.
 * Codes and messages follow geth, which is what wallets and libraries parse.
 */
import { isExecutionError } from '@monsoon/execution';
import { isClientError } from '../clientError.js';
import type { Json } from './json.js';

/** The error codes this server answers with. */
export enum RpcErrorCode {
  /** The body is not JSON. */
  ParseError = -32700,
  /** Not a JSON-RPC 2.0 request object, an empty batch, a batch too large. */
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  /** Wrong number or form of parameters. */
  InvalidParams = -32602,
  /** A fault of the server's own: the caller can do nothing about it. */
  Internal = -32603,
  /** geth's code for a refusal with a reason (nonce too low, header not found, …). */
  Server = -32000,
  /**
   * A query whose answer would be too large (eth_getLogs over its result limit). Not geth's:
   * geth has no result limit; -32005 is what Infura answers, and what viem calls
   * LimitExceededRpcError.
   */
  LimitExceeded = -32005,
  /** `eth_call` / `eth_estimateGas` reverted; `data` is the revert data. */
  ExecutionReverted = 3,
  /** The history asked for is no longer held (geth's PrunedHistoryError). */
  PrunedHistory = 4444,
}

/** An error answered as `{code, message, data}`. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** Sent as the error's `data` (a revert's is its 0x hex). */
    readonly data?: Json,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/**
 * The JSON-RPC error for `e`, or undefined when it is unexpected (answered -32603 and logged):
 * RpcError (RevertError included) as it is; an ExecutionError as -32000 with its message,
 * without the `CODE: ` its class puts first (`nonce too low: …`, as geth says it).
 */
export function rpcErrorOf(e: unknown): RpcError | undefined {
  if (e instanceof RpcError) return e;
  // A refused transaction, or what the client could not do (no miner, storage lying or down,
  // stale too often): the caller's answer, with the reason, as geth's -32000.
  if (isExecutionError(e) || isClientError(e)) {
    const prefix = `${e.code}: `;
    const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    return new RpcError(RpcErrorCode.Server, message);
  }
  return undefined;
}
