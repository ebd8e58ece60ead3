import { CodedError, codedErrorGuard, type ErrorMeta } from '@monsoon/util';

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

/** Which field of a message is wrong (a path such as `shards[2].accounts[0].address`), what it should be and what it is. */
export interface FieldFault {
  readonly field: string;
  readonly expected: string;
  readonly found: string;
}

/** The metadata of each {@link ProtocolErrorCode}. */
export interface ProtocolErrorMeta {
  [ProtocolErrorCode.BadLength]: FieldFault;
  [ProtocolErrorCode.BadQuantity]: FieldFault;
  [ProtocolErrorCode.BadShard]: FieldFault;
  [ProtocolErrorCode.MissingField]: FieldFault;
  [ProtocolErrorCode.BadEnum]: FieldFault;
  [ProtocolErrorCode.Inconsistent]: FieldFault;
  /** At least `field`, the genesis.json key at fault. */
  [ProtocolErrorCode.BadGenesis]: ErrorMeta & { readonly field: string };
}

/** The one error type of the protocol package: a code plus metadata of that code's shape. */
export class ProtocolError extends CodedError<ProtocolErrorCode, ProtocolErrorMeta> {}

/** True when `e` is a ProtocolError, optionally of the given code (narrowing `meta` to its shape). */
export const isProtocolError = codedErrorGuard<ProtocolError, ProtocolErrorMeta>(ProtocolError);
