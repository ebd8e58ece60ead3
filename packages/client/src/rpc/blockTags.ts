/**
 * What `safe` and `finalized` mean on this chain. Monsoon has proof of work and no finality
 * gadget, so both name the block `confirmationDepth` below the head (the genesis while the chain
 * is shorter): a block that deep is taken as settled. The JSON-RPC layer turns these tags into
 * block numbers before any backend sees them, so every method answers them alike.
 */
import type { BlockTag } from './backend.js';

/** The number `safe` and `finalized` name when the head is `head`. */
export function confirmedNumber(head: bigint, confirmationDepth: number): bigint {
  const depth = BigInt(confirmationDepth);
  return head > depth ? head - depth : 0n;
}

/** Whether `v` is a `safe` or `finalized` tag. */
export function isConfirmedTag(v: unknown): v is { readonly kind: 'safe' | 'finalized' } {
  if (typeof v !== 'object' || v === null) return false;
  const kind = (v as { kind?: unknown }).kind;
  return kind === 'safe' || kind === 'finalized';
}

/** `tag` with `safe` / `finalized` replaced by the block number they name; any other tag as it is. */
export function resolveConfirmed(tag: BlockTag, head: () => bigint, confirmationDepth: number): BlockTag {
  return isConfirmedTag(tag) ? { kind: 'number', number: confirmedNumber(head(), confirmationDepth) } : tag;
}
