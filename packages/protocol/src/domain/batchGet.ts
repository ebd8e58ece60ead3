/** BatchGet: many accounts, slots and codes at one block, every proof in one node bag. */
import type { BlockRef } from './blockRef.js';

/** What to read for one account. */
export interface AccountQuery {
  /** 20 bytes. */
  readonly address: Uint8Array;
  /** 32 bytes each, before hashing. */
  readonly slots: readonly Uint8Array[];
  /** Whether to return the account's code. */
  readonly code: boolean;
}

/** What was read for one account. */
export interface AccountResult {
  /** 20 bytes, the query's address. */
  readonly address: Uint8Array;
  /** rlp([nonce, balance, storageRoot, codeHash]); undefined when the account does not exist. */
  readonly accountRlp: Uint8Array | undefined;
  /** One per slot asked, in query order: without leading zeros, empty for zero. */
  readonly slotValues: readonly Uint8Array[];
  /** The code when asked for; empty when not asked or when the account has none. */
  readonly code: Uint8Array;
}

export interface BatchGetRequest {
  readonly at: BlockRef;
  readonly queries: readonly AccountQuery[];
  /** Top levels of every account proof the caller already holds, 0–64. */
  readonly omitLevels: number;
}

export interface BatchGetResponse {
  readonly blockHash: Uint8Array;
  readonly number: bigint;
  /** One per query, in query order. */
  readonly results: readonly AccountResult[];
  /** RLP trie nodes proving every account and slot asked for, each once (a node bag). */
  readonly bag: readonly Uint8Array[];
}
