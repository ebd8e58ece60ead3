import { CodedError } from '@monsoon/dsm-tree';

/** Why the client could not do what it was asked. */
export enum ClientErrorCode {
  /** A flag, address or request field that is not what it should be. */
  BadArgument = 'BAD_ARGUMENT',
  /** No replica of a shard answered (all down, or all refused). */
  StorageUnavailable = 'STORAGE_UNAVAILABLE',
  /** A storage node answered with a value or proof that does not match the state root. */
  BadProof = 'BAD_PROOF',
  /** No miner took the submission (all down). */
  MinerUnavailable = 'MINER_UNAVAILABLE',
  /** A transaction kept coming back stale after the allowed resubmissions. */
  StaleRetries = 'STALE_RETRIES',
  /** A transaction whose pre-execution needed more fetch rounds than allowed. */
  TooManyFetches = 'TOO_MANY_FETCHES',
  /** No chain head yet, or a block this client does not know. */
  UnknownBlock = 'UNKNOWN_BLOCK',
  /** The client is shutting down. */
  Closed = 'CLOSED',
  /** The transaction is in the client's pool already (geth's "already known"). */
  AlreadyKnown = 'ALREADY_KNOWN',
  /** A same-nonce transaction without the required fee bump (geth's "replacement transaction underpriced"). */
  ReplaceUnderpriced = 'REPLACE_UNDERPRICED',
  /** The pool's global limit is reached (geth's "txpool is full"). */
  PoolFull = 'TXPOOL_FULL',
  /** The sender's queue of future transactions is full (geth's "account limit exceeded"). */
  AccountLimit = 'ACCOUNT_LIMIT',
  /** A pooled transaction left the pool without reaching a miner: replaced, evicted, or made obsolete. */
  Dropped = 'DROPPED',
}

export class ClientError extends CodedError<ClientErrorCode> {}

export function isClientError(e: unknown, code?: ClientErrorCode): e is ClientError {
  return e instanceof ClientError && (code === undefined || e.code === code);
}
