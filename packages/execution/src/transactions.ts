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
import { bytesEqual, type RlpValue, rlpDecode, toHex } from '@monsoon/dsm-tree';
import { ExecutionError, ExecutionErrorCode } from './executionError.js';

/** The order of the secp256k1 group. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** n / 2: signatures with a larger s are malleable, refused since Homestead (EIP-2). */
export const SECP256K1_HALF_N = SECP256K1_N >> 1n;

/** Why `r`, `s` cannot be a transaction's signature values, or undefined when they can. */
export function signatureValuesError(r: bigint, s: bigint): string | undefined {
  if (r <= 0n || r >= SECP256K1_N) return `r must be in [1, n-1], found 0x${r.toString(16)}`;
  if (s <= 0n) return 's must be in [1, n/2], found 0';
  if (s > SECP256K1_HALF_N) {
    return `s must be at most n/2 (EIP-2: no malleable signatures), found 0x${s.toString(16)}`;
  }
  return undefined;
}

/** How each supported type lays out its RLP list. */
interface Layout {
  readonly name: string;
  /** Fields of a signed transaction. */
  readonly fields: number;
  /** Index of the access list (the one field that is a list), or -1. */
  readonly accessList: number;
}

const LAYOUTS: Readonly<Record<number, Layout>> = {
  [TransactionType.Legacy]: { name: 'legacy', fields: 9, accessList: -1 },
  [TransactionType.AccessListEIP2930]: { name: 'EIP-2930', fields: 11, accessList: 7 },
  [TransactionType.FeeMarketEIP1559]: { name: 'EIP-1559', fields: 12, accessList: 8 },
};

function bad(
  code: ExecutionErrorCode,
  message: string,
  meta: Record<string, unknown> = {},
  cause?: unknown,
): never {
  throw new ExecutionError(code, message, meta, cause);
}

/** Big-endian unsigned integer of any length (empty is 0). */
function toBigint(b: Uint8Array): bigint {
  return b.length === 0 ? 0n : BigInt(`0x${toHex(b)}`);
}

/** The transaction's type from its first byte: a type byte, or an RLP list for legacy. */
function typeOf(raw: Uint8Array): number {
  if (raw.length === 0) bad(ExecutionErrorCode.BadTransaction, 'expected a transaction, found 0 bytes');
  const first = raw[0]!;
  if (first >= 0xc0) return TransactionType.Legacy;
  if (first === TransactionType.AccessListEIP2930 || first === TransactionType.FeeMarketEIP1559) return first;
  if (first <= 0x7f) {
    bad(
      ExecutionErrorCode.BadTransaction,
      `unsupported transaction type 0x${first.toString(16).padStart(2, '0')}: expected 0x01 (EIP-2930), 0x02 (EIP-1559) or an RLP list (legacy)`,
      { type: first },
    );
  }
  return bad(
    ExecutionErrorCode.BadTransaction,
    `expected a type byte or an RLP list, found an RLP byte string (prefix 0x${first.toString(16)})`,
  );
}

/** The fields of a signed transaction of `layout`, each checked to be a byte string (but the access list). */
function fieldsOf(raw: Uint8Array, type: number, layout: Layout): Uint8Array[] {
  let decoded: RlpValue;
  try {
    decoded = rlpDecode(type === TransactionType.Legacy ? raw : raw.subarray(1));
  } catch (e) {
    bad(
      ExecutionErrorCode.BadTransaction,
      `${layout.name} transaction is not valid RLP: ${e instanceof Error ? e.message : String(e)}`,
      { type },
      e,
    );
  }
  if (!Array.isArray(decoded)) {
    bad(
      ExecutionErrorCode.BadTransaction,
      `${layout.name} transaction: expected an RLP list, found a byte string`,
      {
        type,
      },
    );
  }
  if (decoded.length === layout.fields - 3) {
    bad(
      ExecutionErrorCode.BadSignature,
      `${layout.name} transaction is not signed: found ${decoded.length} fields, expected ${layout.fields}`,
      { type },
    );
  }
  if (decoded.length !== layout.fields) {
    bad(
      ExecutionErrorCode.BadTransaction,
      `${layout.name} transaction: expected ${layout.fields} fields, found ${decoded.length}`,
      {
        type,
      },
    );
  }
  for (let i = 0; i < decoded.length; i++) {
    const isList = Array.isArray(decoded[i]);
    if (isList !== (i === layout.accessList)) {
      bad(
        ExecutionErrorCode.BadTransaction,
        `${layout.name} transaction: field ${i} must be ${i === layout.accessList ? 'a list (the access list)' : 'a byte string'}, found ${isList ? 'a list' : 'a byte string'}`,
        { type, field: i },
      );
    }
  }
  return decoded as Uint8Array[];
}

/** The chain and signature checks, done before ethereumjs so each gets its own code. */
function checkChainAndSignature(
  fields: readonly Uint8Array[],
  type: number,
  layout: Layout,
  chainId: bigint,
): void {
  const n = fields.length;
  if (fields[n - 2]!.length === 0 && fields[n - 1]!.length === 0) {
    bad(ExecutionErrorCode.BadSignature, `${layout.name} transaction is not signed: r and s are empty`, {
      type,
    });
  }
  const v = toBigint(fields[n - 3]!);
  if (type === TransactionType.Legacy) {
    if (fields[n - 3]!.length === 0) {
      bad(ExecutionErrorCode.BadSignature, 'legacy transaction is not signed: v is empty');
    }
    if (v >= 35n) {
      const signedFor = (v - 35n) / 2n;
      if (signedFor !== chainId) {
        bad(
          ExecutionErrorCode.WrongChain,
          `transaction is signed for chain ${signedFor} (v = ${v}), expected chain ${chainId}`,
          {
            signedFor,
            chainId,
          },
        );
      }
    } else if (v !== 27n && v !== 28n) {
      bad(
        ExecutionErrorCode.BadSignature,
        `legacy v must be 27 or 28 (pre-EIP-155) or ${2n * chainId + 35n} or ${2n * chainId + 36n} (EIP-155, chain ${chainId}), found ${v}`,
        { v },
      );
    }
  } else {
    const signedFor = toBigint(fields[0]!);
    if (signedFor !== chainId) {
      bad(
        ExecutionErrorCode.WrongChain,
        `${layout.name} transaction is for chain ${signedFor}, expected chain ${chainId}`,
        {
          signedFor,
          chainId,
        },
      );
    }
    if (v !== 0n && v !== 1n) {
      bad(ExecutionErrorCode.BadSignature, `${layout.name} y-parity must be 0 or 1, found ${v}`, { v });
    }
  }
  const why = signatureValuesError(toBigint(fields[n - 2]!), toBigint(fields[n - 1]!));
  if (why !== undefined) bad(ExecutionErrorCode.BadSignature, `${layout.name} transaction: ${why}`, { type });
}

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
function txOptionsFor(common: Common): TxOptions {
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
 *   or shape, or fields ethereumjs refuses (leading zeros, overflow, bad access list, …);
 * - WrongChain: an EIP-155 v or a typed chain id for another chain;
 * - BadSignature: unsigned, v / y-parity out of range, r or s zero or ≥ n, or s > n/2.
 *
 * Does not recover the sender: see recoverSenders.
 */
export function decodeTransaction(raw: Uint8Array, common: Common): TypedTransaction {
  const type = typeOf(raw);
  const layout = LAYOUTS[type]!;
  const fields = fieldsOf(raw, type, layout);
  checkChainAndSignature(fields, type, layout, common.chainId());
  let tx: TypedTransaction;
  try {
    // The FromBytesArray constructors take the decoded fields as they are; their tuple types
    // are what fieldsOf checked (byte strings and, for typed ones, one access list).
    const values = fields as never;
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

/** The plain fields of `tx`. */
export function txInfo(tx: TypedTransaction): TxInfo {
  const maxFee = 'maxFeePerGas' in tx ? tx.maxFeePerGas : tx.gasPrice;
  const maxPriority = 'maxPriorityFeePerGas' in tx ? tx.maxPriorityFeePerGas : tx.gasPrice;
  return {
    hash: tx.hash(),
    type: tx.type,
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    to: tx.to?.bytes,
    value: tx.value,
    data: tx.data,
    maxFeePerGas: maxFee,
    maxPriorityFeePerGas: maxPriority,
    intrinsicGas: tx.getIntrinsicGas(),
  };
}
