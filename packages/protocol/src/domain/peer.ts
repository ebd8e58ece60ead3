/** What miners gossip to each other on a Peer stream. */

/** A block with everything needed to re-execute it without I/O. */
export interface PeerBlock {
  /** The Ethereum-style header, RLP-encoded (never empty). */
  readonly headerRlp: Uint8Array;
  /** Signed transactions, in block order. */
  readonly transactions: readonly Uint8Array[];
  /** The RLP trie nodes the block's execution needs, each once (a node bag). */
  readonly bag: readonly Uint8Array[];
}

/** One message on a Peer stream: a block, or a request for a block and its ancestors. */
export type PeerMessage =
  | { readonly kind: 'block'; readonly block: PeerBlock }
  | {
      readonly kind: 'getBlocks';
      /** The newest block wanted (32 bytes). */
      readonly hash: Uint8Array;
      /** It and up to count − 1 of its ancestors (the peer may send fewer). */
      readonly count: number;
    };

/** A canonical block as a miner streams it to clients: with its receipts. */
export interface BlockWithReceipts {
  /** The Ethereum-style header, RLP-encoded (never empty). */
  readonly headerRlp: Uint8Array;
  /** Signed transactions, in block order. */
  readonly transactions: readonly Uint8Array[];
  /** One EIP-2718-encoded receipt per transaction (what the header's receipts root commits to). */
  readonly receipts: readonly Uint8Array[];
}
