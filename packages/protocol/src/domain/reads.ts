/** The storage node's single reads: an account, a slot, code, nodes, shard roots. */
import type { BlockRef } from './blockRef.js';
import type { ShardRoot } from './shardRoot.js';

/** GetAccount: an account and its proof. */
export interface GetAccountRequest {
  /** 20 bytes. */
  readonly address: Uint8Array;
  readonly at: BlockRef;
  /** Top levels of the proof the caller already holds, 0–64. */
  readonly omitLevels: number;
}

export interface GetAccountResponse {
  /** The block the account was read at, 32 bytes. */
  readonly blockHash: Uint8Array;
  readonly number: bigint;
  /** rlp([nonce, balance, storageRoot, codeHash]); undefined when the account does not exist. */
  readonly accountRlp: Uint8Array | undefined;
  /** RLP trie nodes from the root (minus omitted levels) down: of presence or of absence. */
  readonly proof: readonly Uint8Array[];
}

/** GetStorage: a slot, with the account's proof and the slot's proof. */
export interface GetStorageRequest {
  /** 20 bytes. */
  readonly address: Uint8Array;
  /** 32 bytes, before hashing. */
  readonly slot: Uint8Array;
  readonly at: BlockRef;
  /** Top levels of the account proof the caller already holds, 0–64. */
  readonly omitLevels: number;
}

export interface GetStorageResponse {
  readonly blockHash: Uint8Array;
  readonly number: bigint;
  /** Big-endian without leading zeros, at most 32 bytes; empty for zero or unset. */
  readonly value: Uint8Array;
  readonly accountProof: readonly Uint8Array[];
  readonly storageProof: readonly Uint8Array[];
}

/** GetCode: code by hash. */
export interface GetCodeRequest {
  /** 32 bytes. */
  readonly codeHash: Uint8Array;
}

export interface GetCodeResponse {
  readonly code: Uint8Array;
}

/** GetNodes: trie nodes by hash. */
export interface GetNodesRequest {
  /** 32 bytes each. */
  readonly hashes: readonly Uint8Array[];
  /**
   * Where each node sits: one nibble path per hash (one nibble per byte; 64 nibbles or more =
   * the account's hashed key, then the path in its storage trie). A node on the way to the path
   * matches too; absent or empty entries match only the account trie's root.
   */
  readonly paths?: readonly Uint8Array[];
}

export interface GetNodesResponse {
  /** One per requested hash, in order; undefined where the server does not know the node. */
  readonly nodes: readonly (Uint8Array | undefined)[];
}

/** GetShardRoots: the state root and the node's shard roots at a block. */
export interface GetShardRootsRequest {
  readonly at: BlockRef;
}

export interface GetShardRootsResponse {
  readonly blockHash: Uint8Array;
  readonly number: bigint;
  /** 32 bytes. */
  readonly stateRoot: Uint8Array;
  /** One of SHARD_COUNTS. */
  readonly shardCount: number;
  /** The shards this node owns, each once, each below `shardCount`. */
  readonly roots: readonly ShardRoot[];
  /** Where the node exports its node region for one-sided reads (same host only), if it does. */
  readonly region?: ExportedRegion;
}

/** A storage node's exported node region: a file its host's processes can map. */
export interface ExportedRegion {
  readonly path: string;
  /** The generation the region's header carries. */
  readonly generation: bigint;
  readonly bytes: bigint;
}
