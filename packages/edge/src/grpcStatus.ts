/**
 * Where domain errors become gRPC statuses: the one place that decides what a caller is told.
 * Each service lists its domains' error classes and which of their codes the caller caused
 * (`grpcStatusMapping`); those carry the error's own message and code. Anything unexpected is
 * INTERNAL, for the operator.
 */
import { Metadata, status } from '@grpc/grpc-js';
import { CodedError } from '@monsoon/util';

/** The trailer naming the domain error code (`BAD_LENGTH`, `WRONG_SHARD`, …) of a refused call. */
export const ERROR_CODE_TRAILER = 'monsoon-error-code';

/** What a refused call answers. */
export interface GrpcStatus {
  readonly code: status;
  /** The error's message (`SHARD_ROOT_MISMATCH: shard 3 ends at …, the block expects …`). */
  readonly details: string;
  /** The domain error code, or undefined for an error that has none. */
  readonly errorCode: string | undefined;
  /** False for an error the caller caused; true for one the operator should look at. */
  readonly internal: boolean;
}

/**
 * A refusal decided at the edge itself, with its status (e.g. GetCode of a hash no account here
 * has: NOT_FOUND). The core's refusals are coded errors; this is for what has no core code.
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

/** One domain's errors and the status of each of their codes. */
export interface ErrorStatusRule {
  /** Recognises the domain's errors, e.g. `isStorageError`. */
  readonly is: (e: unknown) => e is CodedError<string>;
  /** The status of each code listed; a code not listed gets `otherwise`. */
  readonly codes?: Readonly<Partial<Record<string, status>>>;
  /** The status of the codes not listed; INTERNAL when left out (the operator's problem). */
  readonly otherwise?: status;
}

/**
 * The status function of a service: the first rule whose `is` accepts the error decides (a
 * status other than INTERNAL is the caller's fault); CallRefused carries its own; anything else
 * is INTERNAL with `internal error:` before its message.
 */
export function grpcStatusMapping(rules: readonly ErrorStatusRule[]): (e: unknown) => GrpcStatus {
  return (e) => {
    if (e instanceof CallRefused) {
      return { code: e.code, details: e.message, errorCode: e.errorCode, internal: false };
    }
    for (const rule of rules) {
      if (!rule.is(e)) continue;
      const code = rule.codes?.[e.code] ?? rule.otherwise ?? status.INTERNAL;
      return { code, details: e.message, errorCode: e.code, internal: code === status.INTERNAL };
    }
    const details = e instanceof Error ? e.message : String(e);
    return {
      code: status.INTERNAL,
      details: `internal error: ${details}`,
      errorCode: e instanceof CodedError ? (e.code as string) : undefined,
      internal: true,
    };
  };
}

/** The status as grpc-js sends it: code, details and the error-code trailer. */
export function toServiceError(s: GrpcStatus): { code: status; details: string; metadata: Metadata } {
  const metadata = new Metadata();
  if (s.errorCode !== undefined) metadata.set(ERROR_CODE_TRAILER, s.errorCode);
  return { code: s.code, details: s.details, metadata };
}

/** `status.INVALID_ARGUMENT` → `'INVALID_ARGUMENT'` (for metrics labels and logs). */
export function statusName(code: status): string {
  return status[code] ?? String(code);
}
