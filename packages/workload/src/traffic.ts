/**
 * The load test's transactions: RainBlock's mainnet-like mix (§8.4). A hot set, 10% of the
 * accounts, sends and receives 90% of the transactions; 15% of them are ERC-20 `transfer`
 * calls to MonsoonToken, the rest plain ether transfers. Everything comes from one seeded PRNG,
 * so the same options and accounts give the same transactions, byte for byte.
 *
 * The hot set is accounts [0, hotCount): addresses are keccak outputs, so index order says
 * nothing about where an account lands in the trie or in which shard.
 *
 * The generator tracks each sender's nonce from 0 (the genesis nonce) and assumes every
 * transaction it made is included, in order. With the defaults an account spends at most
 * 0.001 ether of value plus 0.0002 ether of fees per transaction, so the genesis' million
 * ether per account does not run out in any realistic run.
 */
import type { Common } from '@ethereumjs/common';
import { defaultChainRules, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { PackedTxs } from './packedTxs.js';
import { Prng } from './prng.js';
import {
  type SignedTransaction,
  signTransaction,
  signTransactionWithEthereumjs,
  type TxFields,
  type TxType,
} from './signTransaction.js';
import { encodeTokenTransfer } from './tokenCalldata.js';
import { DEFAULT_TOKEN_ADDRESS } from './tokenStorage.js';
import { WorkloadError, WorkloadErrorCode } from './workloadError.js';

/** The keys a generator signs with, such as an {@link AccountSet}. */
export interface KeySource {
  readonly count: number;
  privateKey(index: number): Uint8Array;
  address(index: number): Uint8Array;
  /** The 64-byte public key (x ‖ y), where the source keeps it: a driver sends it along. */
  publicKey?(index: number): Uint8Array;
}

/** How the transactions are serialized: built directly (fast) or through @ethereumjs/tx objects (reference). */
export type TxEncoder = 'direct' | 'ethereumjs';

/** The traffic mix and the transactions' fee and gas fields. */
export interface TrafficOptions {
  /** Seeds the PRNG that picks senders, recipients, kinds and amounts. */
  readonly seed: Uint8Array;
  /** The chain id the transactions are signed for. */
  readonly chainId: bigint;
  /** Share of the accounts in the hot set, in (0, 1]. */
  readonly hotFraction: number;
  /** Share of senders, and independently of recipients, drawn from the hot set, in [0, 1]. */
  readonly hotShare: number;
  /** Share of transactions that are ERC-20 transfers, in [0, 1]. */
  readonly erc20Share: number;
  /** EIP-1559 (type 2) or legacy EIP-155 transactions. */
  readonly txType: TxType;
  /** EIP-1559 fee cap, wei per gas (the chain's base fee is a constant 1 gwei). */
  readonly maxFeePerGas: bigint;
  /** EIP-1559 tip to the miner, wei per gas. */
  readonly maxPriorityFeePerGas: bigint;
  /** Legacy gas price, wei per gas. */
  readonly gasPrice: bigint;
  /** Gas limit of a plain transfer (exactly its intrinsic gas). */
  readonly transferGasLimit: bigint;
  /** Gas limit of a token transfer: a safe bound (~52k are used when both balances exist). */
  readonly tokenGasLimit: bigint;
  /** Range of a plain transfer's value, wei, inclusive. */
  readonly minValue: bigint;
  readonly maxValue: bigint;
  /** Range of a token transfer's amount, token units, inclusive. */
  readonly minTokenAmount: bigint;
  readonly maxTokenAmount: bigint;
  /** The token contract (where the genesis put it). */
  readonly tokenAddress: Uint8Array;
  /** See {@link TxEncoder}; both give identical bytes. */
  readonly encoder: TxEncoder;
}

const GWEI = 1_000_000_000n;

/** RainBlock's mix on the chain's defaults: 10% hot accounts take 90%, 15% ERC-20, EIP-1559 at 2 gwei cap / 1 gwei tip. */
export const defaultTrafficOptions: TrafficOptions = {
  seed: new TextEncoder().encode('monsoon-traffic'),
  chainId: defaultChainRules.chainId,
  hotFraction: 0.1,
  hotShare: 0.9,
  erc20Share: 0.15,
  txType: 'eip1559',
  maxFeePerGas: 2n * GWEI,
  maxPriorityFeePerGas: 1n * GWEI,
  gasPrice: 2n * GWEI,
  transferGasLimit: 21_000n,
  tokenGasLimit: 100_000n,
  minValue: 1n,
  maxValue: 10n ** 15n,
  minTokenAmount: 1n,
  maxTokenAmount: 10n ** 18n,
  tokenAddress: DEFAULT_TOKEN_ADDRESS,
  encoder: 'direct',
};

/** What a transaction does. */
export type TxKind = 'transfer' | 'erc20';

/** One generated, signed transaction and what it is meant to do. */
export interface GeneratedTx extends SignedTransaction {
  /** Sender's account index. */
  readonly from: number;
  /** Recipient's account index: of the ether for a transfer, of the tokens for an ERC-20 call. */
  readonly to: number;
  readonly nonce: bigint;
  readonly kind: TxKind;
  /** Wei sent with the transaction (0 for an ERC-20 call). */
  readonly value: bigint;
  /** Tokens moved by an ERC-20 call (0 for a plain transfer). */
  readonly tokenAmount: bigint;
}

const NO_DATA = new Uint8Array(0);

/** Redraws of a recipient equal to the sender before falling back to a uniform other account. */
const MAX_REDRAWS = 64;

/** Generates the mix, one signed transaction at a time, with per-sender nonces. */
export class TrafficGenerator {
  /** The options in force (defaults filled in). */
  readonly options: TrafficOptions;
  /** Accounts [0, hotCount) are the hot set. */
  readonly hotCount: number;
  private readonly accounts: KeySource;
  private readonly prng: Prng;
  private readonly nonces: BigUint64Array;
  private readonly common: Common | undefined;
  private made = 0;
  /** Transactions signed ahead (signAhead), not handed out yet. */
  private readonly ahead = new PackedTxs();

  constructor(opts: Partial<TrafficOptions>, modules: { readonly accounts: KeySource }) {
    const o = { ...defaultTrafficOptions, ...opts };
    const count = modules.accounts.count;
    const bad = (field: string, expected: string, found: unknown): never => {
      throw new WorkloadError(
        WorkloadErrorCode.BadOptions,
        `traffic ${field}: expected ${expected}, found ${String(found)}`,
        {
          field,
          expected,
          found,
        },
      );
    };
    if (!Number.isSafeInteger(count) || count < 2) bad('accounts', 'at least 2 accounts', count);
    if (!(o.hotFraction > 0 && o.hotFraction <= 1)) bad('hotFraction', 'a number in (0, 1]', o.hotFraction);
    if (!(o.hotShare >= 0 && o.hotShare <= 1)) bad('hotShare', 'a number in [0, 1]', o.hotShare);
    if (!(o.erc20Share >= 0 && o.erc20Share <= 1)) bad('erc20Share', 'a number in [0, 1]', o.erc20Share);
    if (o.txType !== 'eip1559' && o.txType !== 'legacy') bad('txType', "'eip1559' or 'legacy'", o.txType);
    if (o.encoder !== 'direct' && o.encoder !== 'ethereumjs')
      bad('encoder', "'direct' or 'ethereumjs'", o.encoder);
    if (o.chainId < 1n || o.chainId > BigInt(Number.MAX_SAFE_INTEGER))
      bad('chainId', 'an integer in [1, 2^53)', o.chainId);
    if (o.maxPriorityFeePerGas < 0n || o.maxFeePerGas < o.maxPriorityFeePerGas) {
      bad(
        'maxFeePerGas',
        `at least maxPriorityFeePerGas (${o.maxPriorityFeePerGas}) and that at least 0`,
        o.maxFeePerGas,
      );
    }
    if (o.gasPrice < 0n) bad('gasPrice', 'at least 0', o.gasPrice);
    if (o.transferGasLimit < 21_000n) bad('transferGasLimit', 'at least 21000', o.transferGasLimit);
    if (o.tokenGasLimit < 21_000n) bad('tokenGasLimit', 'at least 21000', o.tokenGasLimit);
    if (o.minValue < 0n || o.maxValue < o.minValue)
      bad('maxValue', `at least minValue (${o.minValue}) >= 0`, o.maxValue);
    if (o.minTokenAmount < 0n || o.maxTokenAmount < o.minTokenAmount) {
      bad('maxTokenAmount', `at least minTokenAmount (${o.minTokenAmount}) >= 0`, o.maxTokenAmount);
    }
    if (o.tokenAddress.length !== 20)
      bad('tokenAddress', 'a 20-byte address', `${o.tokenAddress.length} bytes`);
    this.options = o;
    this.accounts = modules.accounts;
    this.hotCount = Math.min(count, Math.max(1, Math.round(count * o.hotFraction)));
    this.prng = new Prng(o.seed);
    this.nonces = new BigUint64Array(count);
    this.common =
      o.encoder === 'ethereumjs' ? makeCommon(o.chainId, { keccak256: keccak.keccak256 }) : undefined;
  }

  /** Transactions generated so far. */
  get generated(): number {
    return this.made;
  }

  /** The nonce account `index`'s next transaction will carry. */
  nonceOf(index: number): bigint {
    if (!Number.isInteger(index) || index < 0 || index >= this.nonces.length) {
      throw new WorkloadError(
        WorkloadErrorCode.BadIndex,
        `account index: expected an integer in [0, ${this.nonces.length}), found ${index}`,
        {
          index,
        },
      );
    }
    return this.nonces[index]!;
  }

  /**
   * Signs the mix's next `count` transactions now, so that `next()` hands them out later without
   * signing: a load driver does it before its clock starts, as users sign on their own machines,
   * and the box under test then spends no CPU on signing (~35 µs a transaction, ~half of the
   * driver's CPU in the e2e bench). The same transactions, in the same order, as signing each
   * when asked; `generated` and `nonceOf` count them as made. `onProgress` is told the count
   * signed every 10,000.
   */
  signAhead(count: number, onProgress?: (signed: number) => void): void {
    if (!Number.isSafeInteger(count) || count < 0)
      throw new WorkloadError(
        WorkloadErrorCode.BadOptions,
        `signAhead count: expected an integer ≥ 0, found ${count}`,
        {
          field: 'signAhead',
          expected: 'an integer ≥ 0',
          found: count,
        },
      );
    // Behind what is left of an earlier call.
    for (let i = 0; i < count; i++) {
      this.ahead.push(this.make());
      if (onProgress !== undefined && (i + 1) % 10_000 === 0) onProgress(i + 1);
    }
  }

  /** Transactions signed ahead and not handed out yet. */
  get signedAhead(): number {
    return this.ahead.size;
  }

  /** The next transaction of the mix, signed (ahead, or now). */
  next(): GeneratedTx {
    return this.ahead.shift() ?? this.make();
  }

  private make(): GeneratedTx {
    const o = this.options;
    const from = this.pick();
    const to = this.pickOther(from);
    const kind: TxKind = this.prng.nextFloat() < o.erc20Share ? 'erc20' : 'transfer';
    const nonce = this.nonces[from]!;
    let value = 0n;
    let tokenAmount = 0n;
    let target: Uint8Array;
    let data: Uint8Array;
    let gasLimit: bigint;
    if (kind === 'transfer') {
      value = this.prng.nextBigInt(o.minValue, o.maxValue);
      target = this.accounts.address(to);
      data = NO_DATA;
      gasLimit = o.transferGasLimit;
    } else {
      tokenAmount = this.prng.nextBigInt(o.minTokenAmount, o.maxTokenAmount);
      target = o.tokenAddress;
      data = encodeTokenTransfer(this.accounts.address(to), tokenAmount);
      gasLimit = o.tokenGasLimit;
    }
    const fields: TxFields =
      o.txType === 'eip1559'
        ? {
            type: 'eip1559',
            chainId: o.chainId,
            nonce,
            maxFeePerGas: o.maxFeePerGas,
            maxPriorityFeePerGas: o.maxPriorityFeePerGas,
            gasLimit,
            to: target,
            value,
            data,
          }
        : {
            type: 'legacy',
            chainId: o.chainId,
            nonce,
            gasPrice: o.gasPrice,
            gasLimit,
            to: target,
            value,
            data,
          };
    const key = this.accounts.privateKey(from);
    const signed =
      this.common === undefined
        ? signTransaction(fields, key)
        : signTransactionWithEthereumjs(fields, key, this.common);
    this.nonces[from] = nonce + 1n;
    this.made++;
    return { raw: signed.raw, hash: signed.hash, from, to, nonce, kind, value, tokenAmount };
  }

  /** The next `n` transactions. */
  take(n: number): GeneratedTx[] {
    const out: GeneratedTx[] = [];
    for (let i = 0; i < n; i++) out.push(this.next());
    return out;
  }

  /** An account: from the hot set with probability hotShare, else from the rest, uniformly within each. */
  private pick(): number {
    const count = this.nonces.length;
    const hot = this.prng.nextFloat() < this.options.hotShare;
    if (hot || this.hotCount === count) return this.prng.nextInt(this.hotCount);
    return this.hotCount + this.prng.nextInt(count - this.hotCount);
  }

  /** A recipient other than `from`, drawn like a sender. */
  private pickOther(from: number): number {
    for (let i = 0; i < MAX_REDRAWS; i++) {
      const to = this.pick();
      if (to !== from) return to;
    }
    // Only when nearly all the weight is on `from` (a hot set of one at hotShare ≈ 1).
    return (from + 1 + this.prng.nextInt(this.nonces.length - 1)) % this.nonces.length;
  }
}
