import { CodedError } from '@monsoon/dsm-tree';

/**
 * Why a message could not cross the wire: the converters in `convert/` refuse malformed input
 * with one of these. The server edge answers them with gRPC INVALID_ARGUMENT; a client edge
 * treats them as a misbehaving server.
 */
export enum ProtocolErrorCode {
  /** A fixed-size byte field (address 20, slot 32, hash 32) has another length. */
  BadLength = 'BAD_LENGTH',
  /** A number out of range (negative, over 64 or 256 bits), or its bytes are too long or not minimal. */
  BadQuantity = 'BAD_QUANTITY',
  /** A shard index at or above the shard count, a shard listed twice or missing, or a bad shard count. */
  BadShard = 'BAD_SHARD',
  /** A field that must be set is empty or absent (a header, a oneof, a trie node). */
  MissingField = 'MISSING_FIELD',
  /** An enum value that is UNSPECIFIED or unknown to this version. */
  BadEnum = 'BAD_ENUM',
  /** Fields that contradict each other or the request (a deleted account with storage, a slot twice, a result count that is not the query count). */
  Inconsistent = 'INCONSISTENT',
  /** A genesis.json that is not geth-style, or a field of it out of range. */
  BadGenesis = 'BAD_GENESIS',
}

/** The one error type of the protocol package: a code plus structured metadata. */
export class ProtocolError extends CodedError<ProtocolErrorCode> {
  /** At least `field` (a path such as `shards[2].accounts[0].address`), `expected` and `found`. */
  declare readonly meta: Readonly<Record<string, unknown>>;
}

/** True when `e` is a ProtocolError, optionally of the given code. */
export function isProtocolError(e: unknown, code?: ProtocolErrorCode): e is ProtocolError {
  return e instanceof ProtocolError && (code === undefined || e.code === code);
}
