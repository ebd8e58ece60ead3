/**
 * Signed transactions as the miner executes them, decoded without @ethereumjs/tx: the fields,
 * the intrinsic gas, the hash and the signing payload, read straight from the raw bytes.
 * Building an @ethereumjs/tx object and re-encoding it to prove the bytes canonical costs
 * ~60 µs a transaction on our machine; this costs a few. {@link decodeSignedTx} accepts exactly
 * what {@link decodeTransaction} accepts and refuses the rest with the same ExecutionError code
 * (a differential test holds the two to that), so either can stand in for the other.
 */
import type { Common } from '@ethereumjs/common';
import { getCalldataFloorGas, TransactionType, type TypedTransaction } from '@ethereumjs/tx';
import { hashOne, type RlpSpan, toHex } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { bytesToBigint } from '@monsoon/util';
import { assertSupportedFork } from './chain.js';
import { ExecutionErrorCode } from './executionError.js';
import { type TxInfo, txFields, txOptionsFor } from './transactions.js';
import {
  bad,
  checkChainAndSignature,
  type Envelope,
  readEnvelope,
  signatureSpansError,
  spanBytes,
} from './txEnvelope.js';

/** An access list as bytes: [address (20 bytes), [storage keys (32 bytes each)…]] per entry. */
export type AccessListBytes = readonly (readonly [Uint8Array, readonly Uint8Array[]])[];

/** What execution reads of a transaction: a {@link SignedTx}, or a view of an @ethereumjs/tx one. */
export interface ExecutableTx extends TxInfo {
  /** EIP-2930 access list (empty for legacy transactions). */
  readonly accessList: AccessListBytes;
  /**
   * EIP-7623 (Prague): the least gas the transaction pays, 21000 + 10 per calldata token (a zero
   * byte 1 token, another byte 4); its gas limit must cover it. 0 before Prague.
   */
  readonly floorGas: bigint;
}

/**
 * A decoded, well-formed signed transaction (its sender not recovered yet). Byte fields are
 * views into `raw`, which must not be changed afterwards. Made by {@link decodeSignedTx} only.
 */
export class SignedTx implements ExecutableTx {
  /** The bytes as sent (legacy RLP, or type ‖ RLP): what the hash and the block commit to. */
  readonly raw: Uint8Array;
  /** EIP-2718 type: 0 legacy, 1 EIP-2930, 2 EIP-1559. */
  readonly type: number;
  /** The chain it is signed for; undefined for a pre-EIP-155 legacy transaction. */
  readonly chainId: bigint | undefined;
  readonly nonce: bigint;
  readonly gasLimit: bigint;
  /** 20 bytes; undefined for a contract creation. */
  readonly to: Uint8Array | undefined;
  readonly value: bigint;
  readonly data: Uint8Array;
  readonly accessList: AccessListBytes;
  /** EIP-1559's fee cap; for legacy and EIP-2930, the gas price. */
  readonly maxFeePerGas: bigint;
  /** EIP-1559's tip cap; for legacy and EIP-2930, the gas price. */
  readonly maxPriorityFeePerGas: bigint;
  /** Gas charged before execution: 21000, calldata, creation and init code, access list. */
  readonly intrinsicGas: bigint;
  readonly floorGas: bigint;
  /** Signature: v as sent (y-parity, 27/28, or EIP-155's 2·chainId + 35/36); r and s below. */
  readonly v: bigint;
  private readonly signedFrom: number;
  private readonly signedTo: number;
  /**
   * Where r's and s's bytes lie in `raw` (each at most 32 bytes, no leading zero). Recovery
   * reads them as bytes; as bigints (~600 bytes of intermediates each) only when asked.
   */
  private readonly r0: number;
  private readonly r1: number;
  private readonly s0: number;
  private readonly s1: number;
  private cachedHash: Uint8Array | undefined = undefined;

  constructor(f: SignedTxFields) {
    this.raw = f.raw;
    this.type = f.type;
    this.chainId = f.chainId;
    this.nonce = f.nonce;
    this.gasLimit = f.gasLimit;
    this.to = f.to;
    this.value = f.value;
    this.data = f.data;
    this.accessList = f.accessList;
    this.maxFeePerGas = f.maxFeePerGas;
    this.maxPriorityFeePerGas = f.maxPriorityFeePerGas;
    this.intrinsicGas = f.intrinsicGas;
    this.floorGas = f.floorGas;
    this.v = f.v;
    this.signedFrom = f.signedFrom;
    this.signedTo = f.signedTo;
    this.r0 = f.r0;
    this.r1 = f.r1;
    this.s0 = f.s0;
    this.s1 = f.s1;
  }

  /** The signature's r. */
  get r(): bigint {
    return bytesToBigint(this.raw, this.r0, this.r1);
  }

  /** The signature's s. */
  get s(): bigint {
    return bytesToBigint(this.raw, this.s0, this.s1);
  }

  /** {@link signatureValuesError} of r and s, read from their bytes. */
  signatureError(): string | undefined {
    return signatureSpansError(this.raw, this.r0, this.r1, this.s0, this.s1);
  }

  /** keccak256 of the raw bytes (computed once). */
  get hash(): Uint8Array {
    this.cachedHash ??= hashOne(keccak, this.raw);
    return this.cachedHash;
  }

  /** The recovery id (0 or 1) the signature's v stands for. */
  get recoveryId(): number {
    if (this.type !== TransactionType.Legacy) return Number(this.v);
    if (this.chainId === undefined) return Number(this.v - 27n);
    return Number(this.v - (2n * this.chainId + 35n));
  }

  /** Writes r ‖ s as 64 bytes (each left-padded to 32) into `out` at `offset`: what recovery takes. */
  writeSignature(out: Uint8Array, offset: number): void {
    const { r0, r1, s0, s1 } = this;
    out.fill(0, offset, offset + 64);
    out.set(this.raw.subarray(r0, r1), offset + 32 - (r1 - r0));
    out.set(this.raw.subarray(s0, s1), offset + 64 - (s1 - s0));
  }

  /**
   * What the sender signed (its keccak256 is the signing hash): for typed transactions
   * type ‖ rlp(fields but v, r, s); for legacy rlp(the first six fields), with EIP-155's
   * (chainId, 0, 0) appended when signed for a chain. Built from the raw bytes, not re-encoded.
   */
  signingPayload(): Uint8Array {
    const { raw, signedFrom, signedTo } = this;
    const tail =
      this.type === TransactionType.Legacy && this.chainId !== undefined ? eip155Tail(this.chainId) : EMPTY;
    const len = signedTo - signedFrom + tail.length;
    const typed = this.type !== TransactionType.Legacy ? 1 : 0;
    let lenBytes = 0;
    if (len >= 56) for (let n = len; n > 0; n = Math.floor(n / 256)) lenBytes++;
    const head = typed + 1 + lenBytes;
    // One allocation: the list header is written in place, the signed fields copied from `raw`.
    const out = new Uint8Array(head + len);
    if (typed) out[0] = this.type;
    if (len < 56) out[typed] = 0xc0 + len;
    else {
      out[typed] = 0xf7 + lenBytes;
      for (let n = len, k = head - 1; k > typed; k--, n = Math.floor(n / 256)) out[k] = n % 256;
    }
    out.set(raw.subarray(signedFrom, signedTo), head);
    out.set(tail, head + signedTo - signedFrom);
    return out;
  }
}

/** What a SignedTx is made of: its fields, and where its signed fields lie in `raw` (v, r, s follow). */
type SignedTxFields = Pick<
  SignedTx,
  | 'raw'
  | 'type'
  | 'chainId'
  | 'nonce'
  | 'gasLimit'
  | 'to'
  | 'value'
  | 'data'
  | 'accessList'
  | 'maxFeePerGas'
  | 'maxPriorityFeePerGas'
  | 'intrinsicGas'
  | 'floorGas'
  | 'v'
> & {
  readonly signedFrom: number;
  readonly signedTo: number;
  readonly r0: number;
  readonly r1: number;
  readonly s0: number;
  readonly s1: number;
};

const EMPTY = new Uint8Array(0);

/** The last chain's {@link eip155Tail} (a process signs for one chain): not rebuilt a transaction. */
let lastTail: { readonly chainId: bigint; readonly tail: Uint8Array } | undefined;

/** rlp(chainId) ‖ 0x80 ‖ 0x80: what EIP-155 appends to a legacy transaction's signed fields. */
function eip155Tail(chainId: bigint): Uint8Array {
  if (lastTail?.chainId !== chainId) lastTail = { chainId, tail: buildEip155Tail(chainId) };
  return lastTail.tail;
}

function buildEip155Tail(chainId: bigint): Uint8Array {
  let hex = chainId.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const b = chainId === 0n ? EMPTY : Buffer.from(hex, 'hex');
  const head = b.length === 1 && b[0]! < 0x80 ? EMPTY : Uint8Array.of(0x80 + b.length);
  const out = new Uint8Array(head.length + b.length + 2);
  out.set(head, 0);
  out.set(b, head.length);
  out[out.length - 2] = 0x80;
  out[out.length - 1] = 0x80;
  return out;
}

/** The transaction rules of a Common, read once (they are @ethereumjs/tx's parameters). */
interface TxRules {
  readonly chainId: bigint;
  readonly txGas: number;
  readonly dataZeroGas: number;
  readonly dataNonZeroGas: number;
  readonly creationGas: number;
  /** EIP-3860: per 32-byte word of init code, and the most init code (0: no limit). */
  readonly initCodeWordGas: number;
  readonly maxInitCodeSize: number;
  readonly accessListAddressGas: number;
  readonly accessListStorageKeyGas: number;
  /** EIP-7623: gas per calldata token of the floor (0: no floor). */
  readonly floorPerToken: number;
  /** EIP-7825 (Osaka): the most gas a transaction may ask for (0: no cap). */
  readonly maxTxGas: bigint;
}

const rulesByCommon = new WeakMap<Common, TxRules>();

function txRules(common: Common): TxRules {
  let r = rulesByCommon.get(common);
  if (r !== undefined) return r;
  assertSupportedFork(common);
  txOptionsFor(common); // makes sure the Common has @ethereumjs/tx's parameters
  const p = (name: string) => Number(common.param(name));
  const eip3860 = common.isActivatedEIP(3860);
  r = {
    chainId: common.chainId(),
    txGas: p('txGas'),
    dataZeroGas: p('txDataZeroGas'),
    dataNonZeroGas: p('txDataNonZeroGas'),
    creationGas: p('txCreationGas'),
    initCodeWordGas: eip3860 ? p('initCodeWordGas') : 0,
    maxInitCodeSize: eip3860 ? p('maxInitCodeSize') : 0,
    accessListAddressGas: p('accessListAddressGas'),
    accessListStorageKeyGas: p('accessListStorageKeyGas'),
    floorPerToken: common.isActivatedEIP(7623) ? p('totalCostFloorPerToken') : 0,
    maxTxGas: common.isActivatedEIP(7825) ? common.param('maxTransactionGasLimit') : 0n,
  };
  rulesByCommon.set(common, r);
  return r;
}

const MAX_UINT64 = (1n << 64n) - 1n;
const MAX_UINT256 = (1n << 256n) - 1n;

/** Field indices per type. */
const FIELDS = {
  [TransactionType.Legacy]: { nonce: 0, price: 1, tip: 1, gasLimit: 2, to: 3, value: 4, data: 5 },
  [TransactionType.AccessListEIP2930]: { nonce: 1, price: 2, tip: 2, gasLimit: 3, to: 4, value: 5, data: 6 },
  [TransactionType.FeeMarketEIP1559]: { nonce: 1, price: 3, tip: 2, gasLimit: 4, to: 5, value: 6, data: 7 },
} as const;

/**
 * Decodes one raw signed transaction for `common`'s chain, like {@link decodeTransaction} (same
 * checks, same ExecutionError codes: BadTransaction, WrongChain, BadSignature) but into a
 * {@link SignedTx}. Does not recover the sender: see recoverSenders.
 */
export function decodeSignedTx(raw: Uint8Array, common: Common): SignedTx {
  const rules = txRules(common);
  const env = readEnvelope(raw);
  checkChainAndSignature(env, rules.chainId);
  return fromEnvelope(env, rules);
}

/** Refuses `env`'s transaction as BadTransaction, saying why. */
function refuseTx(env: Envelope, why: string): never {
  return bad(ExecutionErrorCode.BadTransaction, `${env.layout.name} transaction: ${why}`, { type: env.type });
}

/** Checks an integer field: no leading zero (what ethereumjs refuses), at most 32 bytes. */
function checkInt(env: Envelope, s: RlpSpan, name: string): void {
  if (s.end > s.dataStart && env.raw[s.dataStart] === 0) {
    refuseTx(env, `${name} cannot have leading zeroes, found 0x${toHex(spanBytes(env.raw, s))}`);
  }
  if (s.end - s.dataStart > 32)
    refuseTx(env, `${name} cannot exceed 2^256-1, found ${s.end - s.dataStart} bytes`);
}

/** An integer field, checked ({@link checkInt}). */
function intField(env: Envelope, s: RlpSpan, name: string): bigint {
  checkInt(env, s, name);
  return bytesToBigint(env.raw, s.dataStart, s.end);
}

/** The empty access list of every transaction that has none. */
const NO_ACCESS_LIST: AccessListBytes = Object.freeze([]);

// A function of its own per check and refusal, not closures: fromEnvelope runs once for every
// transaction a client is sent, and its closures were a tenth of what it allocated.
function fromEnvelope(env: Envelope, rules: TxRules): SignedTx {
  const { raw, type, fields } = env;
  const at = FIELDS[type as 0 | 1 | 2];
  const n = fields.length;
  const nonce = intField(env, fields[at.nonce]!, 'nonce');
  const maxFeePerGas = intField(
    env,
    fields[at.price]!,
    type === TransactionType.FeeMarketEIP1559 ? 'maxFeePerGas' : 'gasPrice',
  );
  const maxPriorityFeePerGas =
    type === TransactionType.FeeMarketEIP1559
      ? intField(env, fields[at.tip]!, 'maxPriorityFeePerGas')
      : maxFeePerGas;
  const gasLimit = intField(env, fields[at.gasLimit]!, 'gasLimit');
  const value = intField(env, fields[at.value]!, 'value');
  const v = intField(env, fields[n - 3]!, 'v');
  const rField = fields[n - 2]!;
  const sField = fields[n - 1]!;
  checkInt(env, rField, 'r');
  checkInt(env, sField, 's');
  if (type !== TransactionType.Legacy) {
    const c = fields[0]!;
    if (c.end > c.dataStart && raw[c.dataStart] === 0) {
      refuseTx(
        env,
        `is not canonically encoded: its chain id 0x${toHex(spanBytes(raw, c))} has a leading zero`,
      );
    }
  }
  // EIP-2681 (nonce below 2^64 − 1), geth's gas limit bound, and no fee that could overflow.
  if (nonce >= MAX_UINT64) refuseTx(env, `nonce cannot equal or exceed MAX_UINT64 (2^64-1), found ${nonce}`);
  if (gasLimit > MAX_UINT64) refuseTx(env, `gasLimit cannot exceed MAX_UINT64 (2^64-1), found ${gasLimit}`);
  if (rules.maxTxGas > 0n && gasLimit > rules.maxTxGas) {
    refuseTx(env, `transaction gas limit too high (cap: ${rules.maxTxGas}, tx: ${gasLimit}) (EIP-7825)`);
  }
  // Below 2^64 times below 2^192 (24 bytes) is below 2^256: no product to make.
  const priceSpan = fields[at.price]!;
  if (priceSpan.end - priceSpan.dataStart > 24 && gasLimit * maxFeePerGas > MAX_UINT256)
    refuseTx(env, 'gasLimit * gas price cannot exceed MAX_INTEGER (2^256-1)');
  if (maxFeePerGas < maxPriorityFeePerGas) {
    refuseTx(
      env,
      `maxFeePerGas ${maxFeePerGas} cannot be less than maxPriorityFeePerGas ${maxPriorityFeePerGas}`,
    );
  }
  let chainId: bigint | undefined = rules.chainId;
  if (type === TransactionType.Legacy) {
    if (v < 37n && v !== 27n && v !== 28n)
      refuseTx(env, `v must be 27, 28 or at least 37 (EIP-155), found ${v}`);
    if (v === 27n || v === 28n) chainId = undefined;
  }
  const toSpan = fields[at.to]!;
  const toLen = toSpan.end - toSpan.dataStart;
  if (toLen !== 0 && toLen !== 20)
    refuseTx(env, `a recipient is 20 bytes (or none, to create), found ${toLen}`);
  const to = toLen === 0 ? undefined : spanBytes(raw, toSpan);
  const data = spanBytes(raw, fields[at.data]!);
  if (to === undefined && rules.maxInitCodeSize > 0 && data.length > rules.maxInitCodeSize) {
    refuseTx(
      env,
      `init code of ${data.length} bytes is over the limit of ${rules.maxInitCodeSize} (EIP-3860)`,
    );
  }
  const entries: [Uint8Array, Uint8Array[]][] | undefined = env.accessList.length === 0 ? undefined : [];
  let keys = 0;
  for (const [a, slots] of env.accessList) {
    if (a.end - a.dataStart !== 20)
      refuseTx(env, `access list address must be 20 bytes, found ${a.end - a.dataStart}`);
    const ks: Uint8Array[] = [];
    for (const k of slots) {
      if (k.end - k.dataStart !== 32)
        refuseTx(env, `access list storage key must be 32 bytes, found ${k.end - k.dataStart}`);
      ks.push(spanBytes(raw, k));
    }
    keys += ks.length;
    entries!.push([spanBytes(raw, a), ks]);
  }
  const accessList: AccessListBytes = entries ?? NO_ACCESS_LIST;
  let zeros = 0;
  for (let i = 0; i < data.length; i++) if (data[i] === 0) zeros++;
  let gas =
    rules.txGas +
    zeros * rules.dataZeroGas +
    (data.length - zeros) * rules.dataNonZeroGas +
    accessList.length * rules.accessListAddressGas +
    keys * rules.accessListStorageKeyGas;
  if (to === undefined) gas += rules.creationGas + rules.initCodeWordGas * Math.ceil(data.length / 32);
  const floorGas =
    rules.floorPerToken === 0 ? 0 : rules.txGas + rules.floorPerToken * (zeros + 4 * (data.length - zeros));
  return new SignedTx({
    raw,
    type,
    chainId,
    nonce,
    gasLimit,
    to,
    value,
    data,
    accessList,
    maxFeePerGas,
    maxPriorityFeePerGas,
    intrinsicGas: BigInt(gas),
    floorGas: BigInt(floorGas),
    v,
    signedFrom: fields[0]!.start,
    signedTo: fields[n - 3]!.start,
    r0: rField.dataStart,
    r1: rField.end,
    s0: sField.dataStart,
    s1: sField.end,
  });
}

/** True for an @ethereumjs/tx transaction (as opposed to a plain {@link ExecutableTx}). */
export function isEthereumjsTx(tx: TypedTransaction | ExecutableTx): tx is TypedTransaction {
  return typeof (tx as TypedTransaction).getIntrinsicGas === 'function';
}

/** `tx` as execution reads it: itself when it is one already, else a view of the ethereumjs object. */
export function executableTx(tx: TypedTransaction | ExecutableTx): ExecutableTx {
  if (!isEthereumjsTx(tx)) return tx;
  return {
    ...txFields(tx),
    accessList: 'accessList' in tx ? (tx.accessList as AccessListBytes) : [],
    floorGas: getCalldataFloorGas(tx),
    get hash(): Uint8Array {
      return tx.hash();
    },
  };
}
