/**
 * A transaction as geth's `eth_getTransactionByHash` writes it (RPCTransaction), from the raw
 * signed bytes: decoded here, so every field is what was signed.
 */
import { TransactionType, type TypedTransaction } from '@ethereumjs/tx';
import { decodeTransaction, makeCommon, txFees } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import type { TransactionView } from './backend.js';
import { hexData, type JsonObject, quantity } from './json.js';

/** The ethereumjs chain configuration decoding needs. */
export type Common = ReturnType<typeof makeCommon>;

const commons = new Map<bigint, Common>();

/** One Common per chain id, kept: decoding with a Common prepares it once (see decodeTransaction). */
export function commonFor(chainId: bigint): Common {
  let common = commons.get(chainId);
  if (common === undefined) {
    common = makeCommon(chainId);
    commons.set(chainId, common);
  }
  return common;
}

/**
 * Decodes a transaction the backend holds. One that does not decode is the server's fault, not
 * the caller's: a plain Error (answered as an internal error), not the ExecutionError.
 */
export function decodeStored(raw: Uint8Array, common: Common): TypedTransaction {
  try {
    return decodeTransaction(raw, common);
  } catch (e) {
    throw new Error(
      `a transaction the backend holds does not decode (${raw.length} bytes): ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
}

/** The JSON of the decoded `tx` (whose raw bytes hash to `hash`), sent by `view.from`. */
export function decodedTransactionJson(
  tx: TypedTransaction,
  hash: Uint8Array,
  view: TransactionView,
): JsonObject {
  const mined = view.blockHash !== undefined;
  const out: JsonObject = {
    blockHash: mined ? hexData(view.blockHash) : null,
    blockNumber: view.blockNumber === undefined ? null : quantity(view.blockNumber),
    from: hexData(view.from),
    gas: quantity(tx.gasLimit),
  };
  if ('gasPrice' in tx) {
    out.gasPrice = quantity(tx.gasPrice);
  } else {
    // EIP-1559 (geth): what a mined transaction paid per gas, the cap while it is pending.
    out.gasPrice = quantity(
      mined && view.baseFeePerGas !== undefined ? txFees(tx, view.baseFeePerGas).gasPrice : tx.maxFeePerGas,
    );
    out.maxFeePerGas = quantity(tx.maxFeePerGas);
    out.maxPriorityFeePerGas = quantity(tx.maxPriorityFeePerGas);
  }
  out.hash = hexData(hash);
  out.input = hexData(tx.data);
  out.nonce = quantity(tx.nonce);
  out.to = tx.to === undefined ? null : hexData(tx.to.bytes);
  out.transactionIndex = view.index === undefined ? null : quantity(view.index);
  out.value = quantity(tx.value);
  out.type = quantity(tx.type);
  const v = tx.v!;
  if (tx.type === TransactionType.Legacy) {
    // EIP-155: v = 2·chainId + 35 + yParity; a pre-155 signature (27, 28) names no chain.
    if (v >= 35n) out.chainId = quantity((v - 35n) / 2n);
  } else {
    out.accessList = tx.accessList.map(([address, keys]) => ({
      address: hexData(address),
      storageKeys: keys.map(hexData),
    }));
    out.chainId = quantity(tx.chainId);
  }
  out.v = quantity(v);
  out.r = quantity(tx.r!);
  out.s = quantity(tx.s!);
  if (tx.type !== TransactionType.Legacy) out.yParity = quantity(v);
  return out;
}

/** The JSON of a transaction the backend returned. */
export function transactionJson(view: TransactionView, common: Common): JsonObject {
  return decodedTransactionJson(decodeStored(view.raw, common), keccak.keccak256(view.raw), view);
}
