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
  /**
   * The same nodes as `bag`, in its order, when the reader made them as one buffer (a storage
   * node): the buffer's nodes, then `rest`. The server writes them out from here, with no object
   * per node; `bag` is then made on first use (see withPackedBag).
   */
  readonly packedBag?: PackedBag;
}

/** A bag's nodes as one buffer (node i is `bytes[ends[i - 1] … ends[i])`, from 0), then `rest`. */
export interface PackedBag {
  readonly bytes: Uint8Array;
  readonly ends: Int32Array;
  readonly rest: readonly Uint8Array[];
}

/** A response whose bag is `packed`: `bag` lists its nodes as views, made when first read. */
export function withPackedBag(
  r: Omit<BatchGetResponse, 'bag' | 'packedBag'>,
  packed: PackedBag,
): BatchGetResponse {
  return new PackedResponse(r.blockHash, r.number, r.results, packed);
}

/** Bags listed from packed ones, by response (made once, only when read). */
const listed = new WeakMap<PackedResponse, readonly Uint8Array[]>();

/**
 * withPackedBag's response: plain fields and `bag` a getter of the class, so every response
 * shares one shape (an object literal with a getter closing over its bag is a dictionary).
 */
class PackedResponse implements BatchGetResponse {
  constructor(
    readonly blockHash: Uint8Array,
    readonly number: bigint,
    readonly results: readonly AccountResult[],
    readonly packedBag: PackedBag,
  ) {}

  get bag(): readonly Uint8Array[] {
    let bag = listed.get(this);
    if (bag === undefined) {
      const { bytes, ends, rest } = this.packedBag;
      const nodes = new Array<Uint8Array>(ends.length);
      let from = 0;
      for (let i = 0; i < ends.length; i++) {
        nodes[i] = bytes.subarray(from, ends[i]);
        from = ends[i]!;
      }
      for (const n of rest) nodes.push(n);
      bag = nodes;
      listed.set(this, bag);
    }
    return bag;
  }
}
