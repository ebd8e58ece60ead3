/** The client's bulk submission API (ClientService). */

/** A SendTransactions request. */
export interface SendTransactionsRequest {
  /** Signed transactions: legacy RLP or a typed envelope (EIP-2718). */
  readonly transactions: readonly Uint8Array[];
  /**
   * Optional: each transaction's signer's public key (x‖y), 64 bytes a transaction, packed in
   * transaction order. The client checks them in one batch instead of recovering each
   * signature; senders still come from the signatures whatever these say.
   */
  readonly senderKeys?: Uint8Array;
}

/** Where a transaction was refused. */
export type RefusedBy = 'client' | 'miner' | 'stale';

/** What became of one transaction sent with SendTransactions. */
export type SendResult =
  | { readonly txHash: Uint8Array; readonly accepted: true }
  | {
      readonly txHash: Uint8Array;
      readonly accepted: false;
      readonly error: string;
      readonly refusedBy: RefusedBy;
    }
  /** Neither accepted nor refused: no miner answered for it; it may yet be included. */
  | {
      readonly txHash: Uint8Array;
      readonly accepted: false;
      readonly error: string;
      readonly fateUnknown: true;
    };
