/** A block that became the head of a chain, as SubscribeHeads streams it. */
export interface Head {
  /** keccak-256 of `headerRlp`, 32 bytes. */
  readonly hash: Uint8Array;
  readonly number: bigint;
  /** The Ethereum-style header, RLP-encoded (never empty). */
  readonly headerRlp: Uint8Array;
  /** The state root after the block, 32 bytes. */
  readonly stateRoot: Uint8Array;
}
