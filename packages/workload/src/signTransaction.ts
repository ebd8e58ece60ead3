/**
 * Signs transactions fast: the signing hash and the signed serialization are built directly
 * (RLP of the fields, @monsoon/util's `rlpEncode`) and the signature from native libsecp256k1
 * (`ecdsaSign` of @monsoon/execution: the revm addon's, ~29 µs, else the `secp256k1` package's, ~50). Building them through @ethereumjs/tx objects instead costs ~70-140 µs a transaction
 * on top of the ~45 µs signature (two validated, frozen tx objects per transaction): the
 * generator makes ~20k transactions/s this way and ~5-7k/s that way (scripts/bench.mjs).
 * {@link signTransactionWithEthereumjs} keeps that path as the reference the tests compare
 * against, byte for byte.
 */
import type { Common } from '@ethereumjs/common';
import { createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import { ecdsaSign } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { bigintToBytes, type RlpInput, rlpEncode, stripLeadingZeros } from '@monsoon/util';
import secp256k1 from 'secp256k1';
import { WorkloadError, WorkloadErrorCode } from './workloadError.js';

/** Fields every transaction the workload makes has: a call or transfer to an existing account. */
interface BaseTxFields {
  readonly chainId: bigint;
  readonly nonce: bigint;
  readonly gasLimit: bigint;
  /** 20 bytes (no contract creation). */
  readonly to: Uint8Array;
  readonly value: bigint;
  readonly data: Uint8Array;
}

/** An EIP-1559 (type 2) transaction with an empty access list. */
export interface FeeMarketTxFields extends BaseTxFields {
  readonly type: 'eip1559';
  readonly maxFeePerGas: bigint;
  readonly maxPriorityFeePerGas: bigint;
}

/** A legacy transaction, replay-protected by EIP-155 (v = 35 + 2·chainId + y-parity). */
export interface LegacyTxFields extends BaseTxFields {
  readonly type: 'legacy';
  readonly gasPrice: bigint;
}

/** What {@link signTransaction} signs. */
export type TxFields = FeeMarketTxFields | LegacyTxFields;

/** Which transaction kind a generator makes. */
export type TxType = TxFields['type'];

/** A signed transaction. */
export interface SignedTransaction {
  /** The network serialization (what eth_sendRawTransaction takes): 0x02 ‖ RLP for EIP-1559, RLP for legacy. */
  readonly raw: Uint8Array;
  /** The transaction hash: keccak256(raw). */
  readonly hash: Uint8Array;
}

const EMPTY_LIST: readonly RlpInput[] = [];
const EMPTY = new Uint8Array(0);

function check(tx: TxFields): void {
  if (tx.to.length !== 20) {
    throw new WorkloadError(
      WorkloadErrorCode.BadOptions,
      `to: expected a 20-byte address, found ${tx.to.length} bytes`,
      {
        found: tx.to.length,
      },
    );
  }
}

/** The fields the signature covers, in RLP order. */
function unsignedItems(tx: TxFields): RlpInput[] {
  const n = bigintToBytes;
  if (tx.type === 'eip1559') {
    return [
      n(tx.chainId),
      n(tx.nonce),
      n(tx.maxPriorityFeePerGas),
      n(tx.maxFeePerGas),
      n(tx.gasLimit),
      tx.to,
      n(tx.value),
      tx.data,
      EMPTY_LIST,
    ];
  }
  return [n(tx.nonce), n(tx.gasPrice), n(tx.gasLimit), tx.to, n(tx.value), tx.data];
}

/** The typed-transaction envelope: `type` ‖ RLP(items). */
function typed(type: number, items: RlpInput[]): Uint8Array {
  const out = rlpEncode(items, 1);
  out[0] = type;
  return out;
}

/** The 32-byte hash the sender signs (EIP-1559: keccak(0x02 ‖ RLP); legacy: EIP-155's keccak(RLP(…, chainId, 0, 0))). */
export function signingHash(tx: TxFields): Uint8Array {
  check(tx);
  return hashToSign(tx, unsignedItems(tx));
}

function hashToSign(tx: TxFields, items: RlpInput[]): Uint8Array {
  if (tx.type === 'eip1559') return keccak.keccak256(typed(2, items));
  return keccak.keccak256(rlpEncode([...items, bigintToBytes(tx.chainId), EMPTY, EMPTY]));
}

/** Signs `tx` with `privateKey` (32 bytes) through native secp256k1; the signature has low s. */
export function signTransaction(tx: TxFields, privateKey: Uint8Array): SignedTransaction {
  check(tx);
  const items = unsignedItems(tx);
  const { signature, recid } = ecdsaSign(hashToSign(tx, items), privateKey);
  const v = tx.type === 'eip1559' ? BigInt(recid) : 35n + 2n * tx.chainId + BigInt(recid);
  items.push(
    bigintToBytes(v),
    stripLeadingZeros(signature.subarray(0, 32)),
    stripLeadingZeros(signature.subarray(32, 64)),
  );
  const raw = tx.type === 'eip1559' ? typed(2, items) : rlpEncode(items);
  return { raw, hash: keccak.keccak256(raw) };
}

/**
 * The same as {@link signTransaction}, through @ethereumjs/tx objects (unsigned tx →
 * `getHashedMessageToSign()` → native signature → `addSignature()` → `serialize()`). Slower;
 * the reference for tests and a fallback should the direct encoding ever be in doubt.
 * `common` must carry the same chain id as `tx`.
 */
export function signTransactionWithEthereumjs(
  tx: TxFields,
  privateKey: Uint8Array,
  common: Common,
): SignedTransaction {
  check(tx);
  if (common.chainId() !== tx.chainId) {
    throw new WorkloadError(
      WorkloadErrorCode.BadOptions,
      `common: expected chain id ${tx.chainId}, found ${common.chainId()}`,
      {
        expected: tx.chainId,
        found: common.chainId(),
      },
    );
  }
  const base = { nonce: tx.nonce, gasLimit: tx.gasLimit, to: tx.to, value: tx.value, data: tx.data };
  if (tx.type === 'eip1559') {
    const unsigned = createFeeMarket1559Tx(
      {
        ...base,
        chainId: tx.chainId,
        maxFeePerGas: tx.maxFeePerGas,
        maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
      },
      { common },
    );
    const { signature, recid } = secp256k1.ecdsaSign(unsigned.getHashedMessageToSign(), privateKey);
    const signed = unsigned.addSignature(
      BigInt(recid),
      signature.subarray(0, 32),
      signature.subarray(32, 64),
    );
    return { raw: signed.serialize(), hash: signed.hash() };
  }
  const unsigned = createLegacyTx({ ...base, gasPrice: tx.gasPrice }, { common });
  const { signature, recid } = secp256k1.ecdsaSign(unsigned.getHashedMessageToSign(), privateKey);
  const v = 35n + 2n * tx.chainId + BigInt(recid);
  const signed = unsigned.addSignature(v, signature.subarray(0, 32), signature.subarray(32, 64));
  return { raw: signed.serialize(), hash: signed.hash() };
}
