import { BytesErrorCode, CodedError, codedErrorGuard, isBytesError, type NoMeta } from '@monsoon/util';

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

/** The metadata of each {@link DsmErrorCode}; hashes are bare lower-case hex. */
export interface DsmErrorMeta {
  /** `index`: the proof node at fault; `root`: the root an empty proof was offered for. */
  [DsmErrorCode.BadProof]: { readonly index?: number; readonly root?: string };
  /** Where in the bytes: the item's first byte, its claimed length, the trailing byte count. */
  [DsmErrorCode.BadRlp]: { readonly pos?: number; readonly len?: number; readonly trailing?: number };
  [DsmErrorCode.BadNode]: NoMeta;
  /** The stub's hash and its depth in the tree (a witness must supply a node for it). */
  [DsmErrorCode.MissingNode]: { readonly hash?: string; readonly depth?: number };
  [DsmErrorCode.HashMismatch]: { readonly expected: string; readonly found: string };
  /** What key (`address`, `storage slot`) and the length it had. */
  [DsmErrorCode.BadKey]: { readonly what?: string; readonly length?: number };
  [DsmErrorCode.BadValue]: { readonly length?: number };
  /** The field lengths or values out of range. */
  [DsmErrorCode.BadAccount]: {
    readonly storageRoot?: number;
    readonly codeHash?: number;
    readonly nonce?: string;
    readonly balance?: string;
  };
  /** The account's key (keccak256 of its address), hex. */
  [DsmErrorCode.UnknownAccount]: { readonly key: string };
  [DsmErrorCode.BadPath]: { readonly path?: readonly number[]; readonly depth?: number };
  [DsmErrorCode.BadEncoding]: NoMeta;
}

/** The one error type of the DSM-Tree: a code plus metadata of that code's shape. */
export class DsmError extends CodedError<DsmErrorCode, DsmErrorMeta> {}

/** True when `e` is a DsmError, optionally of the given code (narrowing `meta` to its shape). */
export const isDsmError = codedErrorGuard<DsmError, DsmErrorMeta>(DsmError);

/**
 * `e` as the tree reports it: malformed RLP (a BAD_RLP BytesError from the reader) becomes the
 * tree's own BadRlp, so the tree's callers see only DsmErrors; anything else is returned as is.
 */
export function asTreeError(e: unknown): unknown {
  return isBytesError(e, BytesErrorCode.BadRlp) ? new DsmError(DsmErrorCode.BadRlp, e.detail, e.meta, e) : e;
}
