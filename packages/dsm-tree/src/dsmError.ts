import { CodedError } from './codedError.js';

/** Why a DSM-Tree operation refused its input. */
export enum DsmErrorCode {
  /** A proof does not hash-link from the root to the key, or is malformed. */
  BadProof = 'BAD_PROOF',
  /** Bytes that should be RLP are not (truncated, non-canonical, wrong shape). */
  BadRlp = 'BAD_RLP',
  /** A trie node's RLP decodes, but is not a valid node. */
  BadNode = 'BAD_NODE',
  /** The operation reached a hash stub that nothing could resolve. */
  MissingNode = 'MISSING_NODE',
  /** A node offered for a stub does not hash to the stub's hash. */
  HashMismatch = 'HASH_MISMATCH',
  /** A key or value has the wrong length or form (e.g. a 19-byte address). */
  BadKey = 'BAD_KEY',
  BadValue = 'BAD_VALUE',
  /** An encoded account is not rlp([nonce, balance, storageRoot, codeHash]). */
  BadAccount = 'BAD_ACCOUNT',
  /** A storage write for an account that does not exist. */
  UnknownAccount = 'UNKNOWN_ACCOUNT',
  /** A nibble path for graft/refAt that does not run through branches (shard layout). */
  BadPath = 'BAD_PATH',
  /** An encoded tree (checkpoint) is corrupt or of an unknown format. */
  BadEncoding = 'BAD_ENCODING',
}

/** The one error type of the DSM-Tree: a code plus structured metadata. */
export class DsmError extends CodedError<DsmErrorCode> {}

/** True when `e` is a DsmError, optionally of the given code. */
export function isDsmError(e: unknown, code?: DsmErrorCode): e is DsmError {
  return e instanceof DsmError && (code === undefined || e.code === code);
}
