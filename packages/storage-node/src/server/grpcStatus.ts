/**
 * Where domain errors become gRPC statuses: the one place that decides what a caller is told.
 * ProtocolError (a malformed message) and a block or read the node refuses are the caller's
 * fault and carry the error's own message; anything unexpected is INTERNAL.
 */
import { Metadata, status } from '@grpc/grpc-js';
import { DsmErrorCode, isDsmError } from '@monsoon/dsm-tree';
import { isProtocolError } from '@monsoon/protocol';
import { isStorageError, StorageErrorCode } from '../storageError.js';

/** The trailer naming the domain error code (`BAD_LENGTH`, `WRONG_SHARD`, …) of a refused call. */
export const ERROR_CODE_TRAILER = 'monsoon-error-code';

/** What a refused call answers. */
export interface GrpcStatus {
  readonly code: status;
  /** The error's message (`SHARD_ROOT_MISMATCH: shard 3 ends at …, the block expects …`). */
  readonly details: string;
  /** The domain error code, or undefined for an unexpected error. */
  readonly errorCode: string | undefined;
  /** False for an error the caller caused; true for one the operator should look at. */
  readonly internal: boolean;
}

const STORAGE_STATUS: Partial<Record<StorageErrorCode, status>> = {
  [StorageErrorCode.UnknownVersion]: status.NOT_FOUND,
  [StorageErrorCode.UnknownParent]: status.FAILED_PRECONDITION,
  // The account or update belongs to a shard this node does not hold: asking again will not help,
  // asking the node that holds it will. The trailer says WRONG_SHARD so a client can re-route.
  [StorageErrorCode.WrongShard]: status.INVALID_ARGUMENT,
  [StorageErrorCode.BadBlock]: status.INVALID_ARGUMENT,
  [StorageErrorCode.ShardRootMismatch]: status.INVALID_ARGUMENT,
  [StorageErrorCode.StateRootMismatch]: status.INVALID_ARGUMENT,
  [StorageErrorCode.BadArgument]: status.INVALID_ARGUMENT,
  // A block whose log record is over the log's limit: the request is too large.
  [StorageErrorCode.RecordTooLarge]: status.INVALID_ARGUMENT,
  // The node is shutting down.
  [StorageErrorCode.Closed]: status.UNAVAILABLE,
};

/**
 * A refusal decided at the edge itself, with its status (e.g. GetCode of a hash no account here
 * has: NOT_FOUND). The core's refusals are StorageErrors; this is for what has no core code.
 */
export class CallRefused extends Error {
  constructor(
    readonly code: status,
    /** The domain-style code sent in the trailer, e.g. `UNKNOWN_CODE`. */
    readonly errorCode: string,
    message: string,
  ) {
    super(`${errorCode}: ${message}`);
    this.name = 'CallRefused';
  }
}

/** Tree errors that only the request's content can cause (a malformed key or value in an update). */
const DSM_INPUT = new Set<DsmErrorCode>([
  DsmErrorCode.BadKey,
  DsmErrorCode.BadValue,
  DsmErrorCode.BadAccount,
  DsmErrorCode.UnknownAccount,
]);

/** The status for an error thrown while decoding a request or serving it. */
export function grpcStatusOf(e: unknown): GrpcStatus {
  if (e instanceof CallRefused) {
    return { code: e.code, details: e.message, errorCode: e.errorCode, internal: false };
  }
  if (isProtocolError(e)) {
    return { code: status.INVALID_ARGUMENT, details: e.message, errorCode: e.code, internal: false };
  }
  if (isStorageError(e)) {
    const code = STORAGE_STATUS[e.code];
    if (code !== undefined) return { code, details: e.message, errorCode: e.code, internal: false };
    return { code: status.INTERNAL, details: e.message, errorCode: e.code, internal: true };
  }
  if (isDsmError(e) && DSM_INPUT.has(e.code)) {
    return { code: status.INVALID_ARGUMENT, details: e.message, errorCode: e.code, internal: false };
  }
  const details = e instanceof Error ? e.message : String(e);
  return {
    code: status.INTERNAL,
    details: `internal error: ${details}`,
    errorCode: isDsmError(e) ? e.code : undefined,
    internal: true,
  };
}

/** The status as grpc-js sends it: code, details and the error-code trailer. */
export function toServiceError(s: GrpcStatus): { code: status; details: string; metadata: Metadata } {
  const metadata = new Metadata();
  if (s.errorCode !== undefined) metadata.set(ERROR_CODE_TRAILER, s.errorCode);
  return { code: s.code, details: s.details, metadata };
}

/** `status.INVALID_ARGUMENT` → `'INVALID_ARGUMENT'` (for metrics labels). */
export function statusName(code: status): string {
  return status[code] ?? String(code);
}
