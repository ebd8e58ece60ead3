/** ApplyBlock: a block and its logical updates, per shard, with the roots they must produce. */
import type { ShardRoot } from './shardRoot.js';

/** One storage slot written by a block. */
export interface StorageWrite {
  /** 32 bytes, before hashing. */
  readonly slot: Uint8Array;
  /** The new value without leading zeros (at most 32 bytes); empty deletes the slot. */
  readonly value: Uint8Array;
}

/** An account the block deleted (self-destruct, or touched and empty). */
export interface AccountDeletion {
  readonly deleted: true;
  /** 20 bytes. */
  readonly address: Uint8Array;
}

/** The new state of an account the block changed or created. */
export interface AccountChange {
  readonly deleted: false;
  /** 20 bytes. */
  readonly address: Uint8Array;
  /** Below 2^64. */
  readonly nonce: bigint;
  /** Below 2^256. */
  readonly balance: bigint;
  /** The code, only when the block created it; undefined leaves the code as it was. */
  readonly code: Uint8Array | undefined;
  /** Wipe the account's storage before applying `storage` (a re-created account). */
  readonly clearStorage: boolean;
  /** Each slot at most once. */
  readonly storage: readonly StorageWrite[];
}

/** What a block did to one account. */
export type AccountUpdate = AccountDeletion | AccountChange;

/** A block's updates to one shard. */
export interface ShardUpdate {
  readonly shard: number;
  /** Each address at most once. */
  readonly accounts: readonly AccountUpdate[];
}

export interface ApplyBlockRequest {
  /** The Ethereum-style header, RLP-encoded (never empty). */
  readonly headerRlp: Uint8Array;
  /** The updates for the receiving node's shards, each shard at most once. */
  readonly shards: readonly ShardUpdate[];
  /** Every shard's root after the block: shards 0 … shardCount−1, each once, in any order. */
  readonly expectedRoots: readonly ShardRoot[];
}

export interface ApplyBlockResponse {
  readonly blockHash: Uint8Array;
  readonly number: bigint;
  /** The receiving node's shard roots after the block, each shard once. */
  readonly roots: readonly ShardRoot[];
}
