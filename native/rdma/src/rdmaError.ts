import { CodedError, codedErrorGuard } from '@monsoon/util';

/** Why a region could not be mapped, read or exported, or why RDMA is not available. */
export enum RdmaErrorCode {
  /** The addon is not built (`npm run build:native`): shared memory and verbs both need it. */
  NotBuilt = 'RDMA_NOT_BUILT',
  /** The addon was built without the verbs headers (libibverbs-dev, librdmacm-dev). */
  NoVerbs = 'RDMA_NO_VERBS',
  /** Verbs are built in, but no RDMA device is present (ibv_get_device_list lists none). */
  NoDevice = 'RDMA_NO_DEVICE',
  /** A handle that names nothing: never returned, or already closed. */
  BadHandle = 'RDMA_BAD_HANDLE',
  /** A mapping, device or connection used after close(). */
  Closed = 'RDMA_CLOSED',
  /** A region file smaller than it must be (its header, or what its header says it spans). */
  RegionTooSmall = 'RDMA_REGION_TOO_SMALL',
  /** A region whose header is not this format (magic, version, geometry). */
  BadRegion = 'RDMA_BAD_REGION',
  /** The region file does not exist (the storage node runs elsewhere, or has not exported yet). */
  NotFound = 'RDMA_NOT_FOUND',
  /** open / fstat / mmap or a verbs call failed; the message carries the system's reason. */
  SystemError = 'RDMA_SYSTEM_ERROR',
  /** An argument out of range (a length, an offset, a device name). */
  BadArgument = 'RDMA_BAD_ARGUMENT',
  /** The region has no room left for a node (the writer's arena is full). */
  RegionFull = 'RDMA_REGION_FULL',
}

/** The one error type of one-sided reads: a code plus structured metadata. */
export class RdmaError extends CodedError<RdmaErrorCode> {}

/** True when `e` is an RdmaError, optionally of the given code. */
export const isRdmaError = codedErrorGuard(RdmaError);

/**
 * The addon throws plain Errors with a `code` property (one of RdmaErrorCode's values); this turns
 * one into an RdmaError, keeping anything else as it is.
 */
export function fromAddonError(e: unknown): unknown {
  if (e instanceof RdmaError) return e;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (Object.values(RdmaErrorCode) as string[]).includes(code))
    return new RdmaError(code as RdmaErrorCode, (e as Error).message, {}, e);
  return e;
}
