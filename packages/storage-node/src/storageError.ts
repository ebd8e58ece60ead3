import { CodedError, codedErrorGuard } from '@monsoon/util';

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
  /** A block whose parent this node does not have (or no longer has). */
  UnknownParent = 'UNKNOWN_PARENT',
  /** A block that is not a valid child of its parent (number, proof of work). */
  BadBlock = 'BAD_BLOCK',
  /** An update or read for an account that is not in the shard named, or not in this node's shards. */
  WrongShard = 'WRONG_SHARD',
  /** A shard's root after the block is not the root the block says it must be. */
  ShardRootMismatch = 'SHARD_ROOT_MISMATCH',
  /** The state root after the block is not the header's: the shard roots do not add up to it. */
  StateRootMismatch = 'STATE_ROOT_MISMATCH',
  /** A read names a version (block hash or number) this node does not hold. */
  UnknownVersion = 'UNKNOWN_VERSION',
  /** A genesis file that is not valid geth-style JSON or has an invalid account. */
  BadGenesis = 'BAD_GENESIS',
  /** An option or argument is out of range (a negative sequence number, keep = 0, ...). */
  BadArgument = 'BAD_ARGUMENT',
  /** A tiered node's LevelDB cannot be reached (down, restarting, not answering). */
  Unavailable = 'UNAVAILABLE',
  /** A node read from a tiered node's LevelDB does not hash to the key it was stored under. */
  CorruptNode = 'CORRUPT_NODE',
}

/** The one error type of the storage node: a code plus structured metadata. */
export class StorageError extends CodedError<StorageErrorCode> {}

/** True when `e` is a StorageError, optionally of the given code. */
export const isStorageError = codedErrorGuard(StorageError);
