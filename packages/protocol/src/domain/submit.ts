/** Submit: signed transactions with their node bag, to a miner; one result per transaction. */

/** What became of a submitted transaction. */
export enum TxStatus {
  /** Queued for a block. */
  Accepted = 'ACCEPTED',
  /** Refused for good (signature, nonce, balance, malformed); resubmitting it as is will not help. */
  Invalid = 'INVALID',
  /** Its witness was too old to revise: re-fetch `staleKeys` and resubmit. */
  Stale = 'STALE',
}

export interface SubmitRequest {
  /** Signed transactions, legacy RLP or typed envelopes, none empty. */
  readonly transactions: readonly Uint8Array[];
  /** The RLP trie nodes every transaction needs, each once (a node bag). */
  readonly bag: readonly Uint8Array[];
  /** The state root the bag was fetched against, 32 bytes. */
  readonly prefetchedRoot: Uint8Array;
  /**
   * Optional: the public key (x‖y, 64 bytes) the client recovered from each transaction's
   * signature, concatenated in transaction order. The miner checks them in one batch instead of
   * recovering each signature; senders still come from the signatures whatever these say.
   */
  readonly senderKeys?: Uint8Array;
}

export interface TxResult {
  /** 32 bytes. */
  readonly txHash: Uint8Array;
  readonly status: TxStatus;
  /** Why it was not accepted, for humans; empty when accepted. */
  readonly reason: string;
  /** Only when stale: the hashed keys whose witnesses must be re-fetched, 32 bytes each. */
  readonly staleKeys: readonly Uint8Array[];
}

export interface SubmitResponse {
  /** One per submitted transaction, in order. */
  readonly results: readonly TxResult[];
}
