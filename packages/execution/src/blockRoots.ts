/**
 * The roots a block header commits to for its body: the transactions root and the receipts
 * root, each the root of an "ordered trie" (key rlp(index), value the item's encoding),
 * built in a DsmTree.
 */
import { DsmTree, type DsmTreeOptions, rlpEncode } from '@monsoon/dsm-tree';
import { ExecutionError, ExecutionErrorCode } from './executionError.js';
import { encodeReceipt, type Receipt } from './receipt.js';

/** rlp(i): the key of item i in an ordered trie (0 → 0x80, 1–127 → one byte, …). */
function indexKey(i: number): Uint8Array {
  if (i === 0) return rlpEncode(new Uint8Array(0));
  const bytes: number[] = [];
  for (let n = i; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return rlpEncode(Uint8Array.from(bytes));
}

/**
 * Root of the trie mapping rlp(i) to `values[i]`; the empty list gives the empty trie root
 * (56e81f…b421). Values must be non-empty: an empty value would be a deletion in a trie.
 */
export function orderedTrieRoot(values: readonly Uint8Array[], opts: DsmTreeOptions = {}): Uint8Array {
  const tree = new DsmTree(opts);
  for (let i = 0; i < values.length; i++) {
    if (values[i]!.length === 0) {
      throw new RangeError(`ordered trie value ${i} is empty: expected a non-empty encoding`);
    }
    tree.put(indexKey(i), values[i]!);
  }
  return tree.root();
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
