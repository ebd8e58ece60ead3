/** Why a storage-node durability operation failed. */
export enum StorageErrorCode {
  /** A WAL segment holds a bad frame or header where no torn write can be (not its tail). */
  WalCorrupt = 'WAL_CORRUPT',
  /** The WAL no longer holds the records asked for (truncated after a checkpoint). */
  WalTruncated = 'WAL_TRUNCATED',
  /** A write or fsync of the WAL failed; its on-disk state is unknown until it is reopened. */
  WalFailed = 'WAL_FAILED',
  /** The WAL or checkpoint store was used after close(). */
  Closed = 'CLOSED',
  /** A record is larger than the configured maximum. */
  RecordTooLarge = 'RECORD_TOO_LARGE',
  /** A checkpoint file is corrupt or truncated. */
  CheckpointCorrupt = 'CHECKPOINT_CORRUPT',
  /** A checkpoint was written with a sequence number below the newest one kept. */
  CheckpointSeqRegress = 'CHECKPOINT_SEQ_REGRESS',
  /** An option or argument is out of range (a negative sequence number, keep = 0, ...). */
  BadArgument = 'BAD_ARGUMENT',
}

/** The one error type of the storage node's durability layer: a code plus structured metadata. */
export class StorageError extends Error {
  readonly code: StorageErrorCode;
  readonly meta: Readonly<Record<string, unknown>>;

  constructor(code: StorageErrorCode, message: string, meta: Record<string, unknown> = {}, cause?: unknown) {
    super(`${code}: ${message}`, cause === undefined ? undefined : { cause });
    this.name = 'StorageError';
    this.code = code;
    this.meta = meta;
  }
}

/** True when `e` is a StorageError, optionally of the given code. */
export function isStorageError(e: unknown, code?: StorageErrorCode): e is StorageError {
  return e instanceof StorageError && (code === undefined || e.code === code);
}
