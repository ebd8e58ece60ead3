/**
 * The roots a block header commits to for its body: the transactions root and the receipts
 * root, each the root of an "ordered trie" (key rlp(index), value the item's encoding),
 * built by orderedTrieRoot.
 */
import { type DsmTreeOptions, orderedRoot } from '@monsoon/dsm-tree';
import { ExecutionError, ExecutionErrorCode } from './executionError.js';
import { encodeReceipt, type Receipt } from './receipt.js';

/**
 * Root of the trie mapping rlp(i) to `values[i]`; the empty list gives the empty trie root
 * (56e81f…b421). Values must be non-empty: an empty value would be a deletion in a trie. Built
 * by dsm-tree's orderedRoot (the nodes written in the keys' known order into one buffer, hashed
 * in one call), which the clients' block checks use too; only `opts.hash` is read.
 */
export function orderedTrieRoot(values: readonly Uint8Array[], opts: DsmTreeOptions = {}): Uint8Array {
  return orderedRoot(values, opts.hash);
}

/** The header's transactionsRoot for a block of these raw transactions (as they are sent: legacy RLP, or type ‖ RLP). */
export function transactionsRoot(raws: readonly Uint8Array[], opts: DsmTreeOptions = {}): Uint8Array {
  for (let i = 0; i < raws.length; i++) {
    if (raws[i]!.length === 0) {
      throw new ExecutionError(
        ExecutionErrorCode.BadTransaction,
        `transaction ${i} is empty: expected its raw bytes`,
        {
          index: i,
        },
      );
    }
  }
  return orderedTrieRoot(raws, opts);
}

/** The header's receiptsRoot for these receipts, in block order (see {@link encodeReceipt}). */
export function receiptsRoot(receipts: readonly Receipt[], opts: DsmTreeOptions = {}): Uint8Array {
  return orderedTrieRoot(
    receipts.map((r) => encodeReceipt(r)),
    opts,
  );
}
