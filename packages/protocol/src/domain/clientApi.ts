/** The client's bulk submission API (ClientService). */

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
