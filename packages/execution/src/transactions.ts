/**
 * Raw signed transactions in, ethereumjs transactions out: legacy (EIP-155 and pre-155),
 * EIP-2930 and EIP-1559, as the chain's Shanghai rules accept them. What is refused is refused
 * with the ExecutionError code a caller acts on: BadTransaction (not a transaction we accept),
 * WrongChain (signed for another chain), BadSignature (unsigned, v/y-parity, r or s out of range,
 * high s).
 */
import type { Common } from '@ethereumjs/common';
import {
  create1559FeeMarketTxFromBytesArray,
  createAccessList2930TxFromBytesArray,
  createLegacyTxFromBytesArray,
  paramsTx,
  TransactionType,
  type TxOptions,
  type TypedTransaction,
} from '@ethereumjs/tx';
import { bytesEqual, toHex } from '@monsoon/dsm-tree';
import { ExecutionErrorCode } from './executionError.js';
import { bad, checkChainAndSignature, fieldValues, readEnvelope } from './txEnvelope.js';

export { SECP256K1_HALF_N, SECP256K1_N, signatureSpansError, signatureValuesError } from './txEnvelope.js';

/** Commons already given @ethereumjs/tx's parameters (see txOptionsFor). */
const withTxParams = new WeakSet<Common>();
const NO_NEW_PARAMS = Object.freeze({});

/**
 * Options for ethereumjs' constructors. Each constructor merges the tx parameters into its
 * Common (`updateParams(paramsTx)`: a JSON deep copy and a cache rebuild, twice for legacy) —
 * about half of what decoding costs. Merging them once per Common and passing no new
 * parameters gives the same parameters at ~2× the decoding rate. The merge is what ethereumjs
 * does anyway (a Common's copies share its parameter table).
 */
export function txOptionsFor(common: Common): TxOptions {
  if (!withTxParams.has(common)) {
    common.updateParams(paramsTx);
    withTxParams.add(common);
  }
  return { common, params: NO_NEW_PARAMS };
}

/**
 * Decodes one raw signed transaction (the bytes a block or a gossip message carries: an RLP
 * list for legacy, type byte ‖ RLP for EIP-2930 and EIP-1559) for `common`'s chain.
 *
 * Throws ExecutionError:
 * - BadTransaction: empty, unsupported type, malformed or non-canonical RLP, wrong field count
 *   or shape (an access list must be [byte string, [byte strings…]] pairs), or fields
 *   ethereumjs refuses (leading zeros, overflow, access list lengths, …);
 * - WrongChain: an EIP-155 v or a typed chain id for another chain;
 * - BadSignature: unsigned, v / y-parity out of range, r or s zero or ≥ n, or s > n/2.
 *
 * Does not recover the sender: see recoverSenders.
 */
export function decodeTransaction(raw: Uint8Array, common: Common): TypedTransaction {
  const env = readEnvelope(raw);
  const { type, layout } = env;
  checkChainAndSignature(env, common.chainId());
  let tx: TypedTransaction;
  try {
    // The FromBytesArray constructors take the decoded fields as they are; their tuple types
    // are what readEnvelope checked (byte strings and, for typed ones, one access list).
    const values = fieldValues(env) as never;
    const opts = txOptionsFor(common);
    if (type === TransactionType.Legacy) tx = createLegacyTxFromBytesArray(values, opts);
    else if (type === TransactionType.AccessListEIP2930)
      tx = createAccessList2930TxFromBytesArray(values, opts);
    else tx = create1559FeeMarketTxFromBytesArray(values, opts);
  } catch (e) {
    bad(
      ExecutionErrorCode.BadTransaction,
      `${layout.name} transaction refused by @ethereumjs/tx: ${e instanceof Error ? e.message : String(e)}`,
      { type },
      e,
    );
  }
  // The hash and the transactions root are over the bytes ethereumjs re-encodes: they must be
  // the bytes we were given (a leading zero in a chain id, say, would otherwise slip through).
  const canonical = tx.serialize();
  if (!bytesEqual(canonical, raw)) {
    bad(
      ExecutionErrorCode.BadTransaction,
      `${layout.name} transaction is not canonically encoded: expected ${canonical.length} bytes 0x${toHex(canonical)}, found ${raw.length} bytes 0x${toHex(raw)}`,
      { type },
    );
  }
  return tx;
}

/** A transaction's fields without ethereumjs types, for callers that only read them. */
export interface TxInfo {
  /** keccak256 of the raw transaction. */
  readonly hash: Uint8Array;
  /** EIP-2718 type: 0 legacy, 1 EIP-2930, 2 EIP-1559. */
  readonly type: number;
  readonly nonce: bigint;
  readonly gasLimit: bigint;
  /** 20 bytes; undefined for a contract creation. */
  readonly to: Uint8Array | undefined;
  readonly value: bigint;
  readonly data: Uint8Array;
  /** EIP-1559's fee cap; for legacy and EIP-2930, the gas price (as EIP-1559 treats them). */
  readonly maxFeePerGas: bigint;
  /** EIP-1559's tip cap; for legacy and EIP-2930, the gas price. */
  readonly maxPriorityFeePerGas: bigint;
  /** Gas charged before execution: 21000, calldata, creation, access list. */
  readonly intrinsicGas: bigint;
}

/** The plain fields of `tx`, but its hash (which costs a re-encoding and a keccak). */
export function txFields(tx: TypedTransaction): Omit<TxInfo, 'hash'> {
  return {
    type: tx.type,
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    to: tx.to?.bytes,
    value: tx.value,
    data: tx.data,
    maxFeePerGas: 'maxFeePerGas' in tx ? tx.maxFeePerGas : tx.gasPrice,
    maxPriorityFeePerGas: 'maxPriorityFeePerGas' in tx ? tx.maxPriorityFeePerGas : tx.gasPrice,
    intrinsicGas: tx.getIntrinsicGas(),
  };
}

/** The plain fields of `tx`. */
export function txInfo(tx: TypedTransaction): TxInfo {
  return { hash: tx.hash(), ...txFields(tx) };
}
