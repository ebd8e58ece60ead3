/**
 * What the storage node's callers are told (the mapping itself is the edge's): a malformed
 * message (ProtocolError), a block or read the node refuses, and a tree error only the
 * request's content can cause are the caller's fault and carry the error's own message;
 * anything else is INTERNAL.
 */
import { status } from '@grpc/grpc-js';
import { DsmErrorCode, isDsmError } from '@monsoon/dsm-tree';
import { grpcStatusMapping } from '@monsoon/edge';
import { isProtocolError } from '@monsoon/protocol';
import { isStorageError, StorageErrorCode } from '../storageError.js';

/** The status of each error a StorageService call may end with. */
export const grpcStatusOf = grpcStatusMapping([
  { is: isProtocolError, otherwise: status.INVALID_ARGUMENT },
  {
    is: isStorageError,
    codes: {
      [StorageErrorCode.UnknownVersion]: status.NOT_FOUND,
      [StorageErrorCode.UnknownParent]: status.FAILED_PRECONDITION,
      // The account or update belongs to a shard this node does not hold: asking again will not
      // help, asking the node that holds it will. The trailer says WRONG_SHARD so a client can re-route.
      [StorageErrorCode.WrongShard]: status.INVALID_ARGUMENT,
      [StorageErrorCode.BadBlock]: status.INVALID_ARGUMENT,
      [StorageErrorCode.ShardRootMismatch]: status.INVALID_ARGUMENT,
      [StorageErrorCode.StateRootMismatch]: status.INVALID_ARGUMENT,
      [StorageErrorCode.BadArgument]: status.INVALID_ARGUMENT,
      // A block whose log record is over the log's limit: the request is too large.
      [StorageErrorCode.RecordTooLarge]: status.INVALID_ARGUMENT,
      // The node is shutting down.
      [StorageErrorCode.Closed]: status.UNAVAILABLE,
      // A tiered node's LevelDB is down: asking again once it is back will help.
      [StorageErrorCode.Unavailable]: status.UNAVAILABLE,
      // A tiered node's LevelDB returned a node that is not the one asked for.
      [StorageErrorCode.CorruptNode]: status.DATA_LOSS,
    },
  },
  {
    // Tree errors that only the request's content can cause (a malformed key or value in an update).
    is: isDsmError,
    codes: {
      [DsmErrorCode.BadKey]: status.INVALID_ARGUMENT,
      [DsmErrorCode.BadValue]: status.INVALID_ARGUMENT,
      [DsmErrorCode.BadAccount]: status.INVALID_ARGUMENT,
      [DsmErrorCode.UnknownAccount]: status.INVALID_ARGUMENT,
    },
  },
]);
