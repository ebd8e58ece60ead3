/**
 * A block as geth's `eth_getBlockByNumber` writes it. Monsoon's header lacks some of Ethereum's
 * fields; they get the values an Ethereum block without them has: no uncles (sha3Uncles is the
 * hash of the empty list), no mix hash (zeros), Shanghai's withdrawals empty (withdrawalsRoot
 * is the empty trie's root), and the chain's constant base fee.
 */
import { EMPTY_ROOT } from '@monsoon/dsm-tree';
import { BLOOM_BYTES } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import type { BlockView } from './backend.js';
import type { HeadView } from './chainEvents.js';
import { hexData, type Json, type JsonObject, quantity } from './json.js';
import { type Common, decodedTransactionJson, decodeStored } from './transactionJson.js';

/** keccak256(rlp([])): the uncle hash of a block without uncles. */
const EMPTY_UNCLES_HASH = hexData(keccak.keccak256(Uint8Array.of(0xc0)));
const ZERO_HASH = hexData(new Uint8Array(32));
const EMPTY_BLOOM = hexData(new Uint8Array(BLOOM_BYTES));
const EMPTY_TRIE_ROOT = hexData(EMPTY_ROOT);

/** The hashes of raw transactions, in one keccak batch. */
export function transactionHashes(raws: readonly Uint8Array[]): Uint8Array[] {
  if (raws.length === 0) return [];
  const digests = keccak.keccak256Batch(raws);
  return raws.map((_, i) => digests.subarray(32 * i, 32 * i + 32));
}

/**
 * The JSON of the block's transaction `index`, or null when it has none there. Its sender is
 * the view's, or recovered from the signature when the view has none.
 */
export function blockTransactionJson(view: BlockView, index: number, common: Common): JsonObject | null {
  const raw = view.transactions[index];
  if (raw === undefined) return null;
  return blockTransactionsJson(view, common, [raw], index)[0]!;
}

function blockTransactionsJson(
  view: BlockView,
  common: Common,
  raws: readonly Uint8Array[],
  first: number,
): JsonObject[] {
  const hashes = transactionHashes(raws);
  return raws.map((raw, i) => {
    const tx = decodeStored(raw, common);
    const index = first + i;
    return decodedTransactionJson(tx, hashes[i]!, {
      raw,
      from: view.senders?.[index] ?? tx.getSenderAddress().bytes,
      blockHash: view.hash,
      blockNumber: view.header.number,
      index,
      baseFeePerGas: view.baseFeePerGas,
    });
  });
}

/** The header fields of a block's JSON (also what a newHeads subscription sends). */
export function headerJson(view: HeadView): JsonObject {
  const h = view.header;
  return {
    number: quantity(h.number),
    hash: hexData(view.hash),
    parentHash: hexData(h.parentHash),
    nonce: hexData(h.nonce),
    mixHash: ZERO_HASH,
    sha3Uncles: EMPTY_UNCLES_HASH,
    logsBloom: view.logsBloom === undefined ? EMPTY_BLOOM : hexData(view.logsBloom),
    stateRoot: hexData(h.stateRoot),
    miner: hexData(h.miner),
    difficulty: quantity(h.difficulty),
    extraData: hexData(h.extraData),
    gasLimit: quantity(h.gasLimit),
    gasUsed: quantity(h.gasUsed),
    timestamp: quantity(h.timestamp),
    transactionsRoot: hexData(h.transactionsRoot),
    receiptsRoot: hexData(h.receiptsRoot),
    baseFeePerGas: quantity(view.baseFeePerGas),
    withdrawalsRoot: EMPTY_TRIE_ROOT,
  };
}

/** The JSON of a block: its transactions as hashes, or as objects when `full`. */
export function blockJson(view: BlockView, full: boolean, common: Common): JsonObject {
  const out = headerJson(view);
  if (view.totalDifficulty !== undefined) out.totalDifficulty = quantity(view.totalDifficulty);
  out.size = quantity(view.size);
  const transactions: Json[] = full
    ? blockTransactionsJson(view, common, view.transactions, 0)
    : transactionHashes(view.transactions).map(hexData);
  out.transactions = transactions;
  out.uncles = [];
  out.withdrawals = [];
  return out;
}
