/** Which block a read is at: the head, or a block named by hash or by number. */
export type BlockRef =
  | { readonly kind: 'head' }
  | { readonly kind: 'hash'; readonly hash: Uint8Array }
  | { readonly kind: 'number'; readonly number: bigint };

/** The server's current head (on the wire: no BlockRef at all). */
export const HEAD: BlockRef = Object.freeze({ kind: 'head' });

/** The block with this 32-byte hash. */
export function atHash(hash: Uint8Array): BlockRef {
  return { kind: 'hash', hash };
}

/** The block with this number on the server's canonical chain. */
export function atNumber(number: bigint): BlockRef {
  return { kind: 'number', number };
}
