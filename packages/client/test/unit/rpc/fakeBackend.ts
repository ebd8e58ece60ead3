/**
 * An in-memory RpcBackend over a two-block chain of real signed transactions (ethers signs them
 * offline): block 1 holds a legacy EIP-155 transfer, an EIP-2930 token transfer with two logs
 * and an EIP-1559 contract creation with one; one EIP-1559 transaction is pending. A token
 * contract answers balanceOf and reverts transfers in three ways. Every call is recorded, so
 * tests see the domain values the JSON became.
 */

import { fromHex, toHex } from '@monsoon/dsm-tree';
import {
  decodeTransaction,
  defaultChainRules,
  ExecutionError,
  ExecutionErrorCode,
  type Log,
  logsBloom,
  makeCommon,
  receiptsRoot,
  transactionsRoot,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { type BlockHeader, headerHash } from '@monsoon/protocol';
import { AbiCoder, concat, getCreateAddress, Interface, id, Transaction, Wallet } from 'ethers';
import {
  type AccessListView,
  type AccountProofView,
  type BlockTag,
  type BlockView,
  type CallRequest,
  type FeeHistoryView,
  type ReceiptView,
  RevertError,
  type RpcBackend,
  RpcError,
  RpcErrorCode,
  type SyncView,
  type TransactionView,
} from '../../../src/rpc/index.js';

export const CHAIN_ID = defaultChainRules.chainId;
export const BASE_FEE = defaultChainRules.baseFeePerGas;
export const GWEI = 1_000_000_000n;
export const ETHER = 10n ** 18n;
/** What eth_maxPriorityFeePerGas answers. */
export const PRIORITY_FEE = 1_500_000_000n;

export const alice = new Wallet(id('monsoon rpc test: alice'));
export const bob = new Wallet(id('monsoon rpc test: bob'));
/** A sender eth_estimateGas says cannot pay. */
export const POOR = '0x00000000000000000000000000000000000000aa';
/** An address whose balance query fails inside the backend (an internal error). */
export const BROKEN = '0x00000000000000000000000000000000000000bb';
export const TOKEN = '0x1000000000000000000000000000000000000001';
export const MINER = '0x2000000000000000000000000000000000000002';

export const tokenAbi = new Interface([
  'function balanceOf(address who) view returns (uint256)',
  'function transfer(address to, uint256 amount) returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'error Insufficient(uint256 have, uint256 want)',
]);
export const TOKEN_CODE = fromHex('0x6080604052348015600f57600080fd5b50');
/** Token storage: slot 1 holds 0x2a. */
export const TOKEN_SLOT_1 = 0x2an;
export const BOB_TOKENS = 1234n;

const coder = AbiCoder.defaultAbiCoder();

/** Revert data of Solidity's `Error(string)`. */
export function errorData(reason: string): Uint8Array {
  return fromHex(concat(['0x08c379a0', coder.encode(['string'], [reason])]));
}

/** Revert data of Solidity's `Panic(uint256)`. */
export function panicData(code: bigint): Uint8Array {
  return fromHex(concat(['0x4e487b71', coder.encode(['uint256'], [code])]));
}

const hex = (b: Uint8Array) => `0x${toHex(b)}`;
const bytes32 = (n: bigint) => fromHex(n.toString(16).padStart(64, '0'));
const addr = (a: string) => fromHex(a);

/**
 * A signed value transfer on the test chain, 21000 gas: legacy at 2 gwei, or EIP-1559 with a
 * 2 gwei cap and 1 gwei tip unless `fees` says otherwise.
 */
export function signTransfer(
  from: Wallet,
  type: 0 | 2,
  nonce: number,
  to: string,
  value = 0n,
  fees: { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint } = {},
): Promise<string> {
  const price =
    type === 0 ? { gasPrice: 2n * GWEI } : { maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI, ...fees };
  return from.signTransaction({ type, chainId: CHAIN_ID, nonce, gasLimit: 21_000, to, value, ...price });
}

function transferLog(from: string, to: string, value: bigint): Log {
  const ev = tokenAbi.encodeEventLog('Transfer', [from, to, value]);
  return { address: addr(TOKEN), topics: ev.topics.map(fromHex), data: fromHex(ev.data) };
}

export interface Fixture {
  readonly backend: FakeBackend;
  readonly genesis: BlockView;
  readonly block1: BlockView;
  /** Block 1's transactions: legacy, EIP-2930, EIP-1559 creation. */
  readonly raws: readonly string[];
  readonly hashes: readonly string[];
  readonly receipts: readonly ReceiptView[];
  readonly pendingRaw: string;
  readonly pendingHash: string;
  readonly created: string;
}

/** Recorded backend calls: the method and its domain arguments. */
export type Seen = { method: string; args: unknown[] };

export class FakeBackend implements RpcBackend {
  readonly seen: Seen[] = [];
  readonly blocks: BlockView[] = [];
  readonly txs = new Map<string, TransactionView>();
  readonly receipts = new Map<string, ReceiptView>();
  readonly common = makeCommon(CHAIN_ID);

  private see(method: string, ...args: unknown[]): void {
    this.seen.push({ method, args });
  }

  /** The arguments of the last call to `method`. */
  last(method: string): unknown[] {
    const s = [...this.seen].reverse().find((x) => x.method === method);
    if (s === undefined) throw new Error(`the backend was not asked ${method}`);
    return s.args;
  }

  chainId(): bigint {
    return CHAIN_ID;
  }

  blockNumber(): bigint {
    return BigInt(this.blocks.length - 1);
  }

  /** What eth_syncing reports; undefined (at the head) unless a test sets it. */
  sync: SyncView | undefined;

  syncing(): SyncView | undefined {
    return this.sync;
  }

  private atGenesis(tag: BlockTag): boolean {
    return tag.kind === 'earliest' || (tag.kind === 'number' && tag.number === 0n);
  }

  async balance(address: Uint8Array, tag: BlockTag): Promise<bigint> {
    this.see('balance', address, tag);
    if (hex(address) === BROKEN) throw new Error('disk on fire');
    if (hex(address) === alice.address.toLowerCase()) return this.atGenesis(tag) ? 10n * ETHER : 9n * ETHER;
    return 0n;
  }

  async transactionCount(address: Uint8Array, tag: BlockTag): Promise<bigint> {
    this.see('transactionCount', address, tag);
    if (hex(address) !== bob.address.toLowerCase()) return 0n;
    return tag.kind === 'pending' ? 2n : 1n;
  }

  async code(address: Uint8Array, tag: BlockTag): Promise<Uint8Array> {
    this.see('code', address, tag);
    return hex(address) === TOKEN ? TOKEN_CODE : new Uint8Array(0);
  }

  async storageAt(address: Uint8Array, slot: Uint8Array, tag: BlockTag): Promise<Uint8Array> {
    this.see('storageAt', address, slot, tag);
    // Answered minimal (one byte): the layer pads to 32.
    return hex(address) === TOKEN && hex(slot) === hex(bytes32(1n))
      ? Uint8Array.of(Number(TOKEN_SLOT_1))
      : Uint8Array.of();
  }

  async proof(address: Uint8Array, slots: readonly Uint8Array[], tag: BlockTag): Promise<AccountProofView> {
    this.see('proof', address, slots, tag);
    return {
      address,
      balance: 5n,
      nonce: 7n,
      codeHash: keccak.keccak256(TOKEN_CODE),
      storageHash: bytes32(0xabcn),
      accountProof: [Uint8Array.of(0xc1, 0x80), Uint8Array.of(0xc2, 0x80, 0x80)],
      storageProof: slots.map((key, i) => ({ key, value: BigInt(i + 1), proof: [Uint8Array.of(0xc0 + i)] })),
    };
  }

  /** The token's answer to `req`; throws RevertError as the EVM would revert. */
  private runToken(req: CallRequest): Uint8Array {
    const data = hex(req.data ?? new Uint8Array(0));
    const tx = tokenAbi.parseTransaction({ data });
    if (tx?.name === 'balanceOf') {
      const who = (tx.args[0] as string).toLowerCase();
      return fromHex(coder.encode(['uint256'], [who === bob.address.toLowerCase() ? BOB_TOKENS : 0n]));
    }
    if (tx?.name === 'transfer') {
      const amount = tx.args[1] as bigint;
      if (amount === 0n) throw new RevertError(panicData(0x12n));
      if (amount === 999n)
        throw new RevertError(fromHex(tokenAbi.encodeErrorResult('Insufficient', [5n, 999n])));
      if (amount > 1000n) throw new RevertError(errorData('not enough tokens'));
      return fromHex(coder.encode(['bool'], [true]));
    }
    throw new RevertError(new Uint8Array(0));
  }

  async call(req: CallRequest, tag: BlockTag): Promise<Uint8Array> {
    this.see('call', req, tag);
    return req.to !== undefined && hex(req.to) === TOKEN ? this.runToken(req) : new Uint8Array(0);
  }

  async estimateGas(req: CallRequest, tag: BlockTag): Promise<bigint> {
    this.see('estimateGas', req, tag);
    if (req.from !== undefined && hex(req.from) === POOR) {
      throw new ExecutionError(
        ExecutionErrorCode.InsufficientFunds,
        'insufficient funds for gas * price + value: balance 0, tx cost 21000000000000, overshot 21000000000000',
      );
    }
    if (req.to !== undefined && hex(req.to) === TOKEN) {
      this.runToken(req);
      return 53_000n;
    }
    return 21_000n;
  }

  /** The token's storage is slot 1 (and the caller's balance slot 2); a reverting transfer says so. */
  async createAccessList(req: CallRequest, tag: BlockTag): Promise<AccessListView> {
    this.see('createAccessList', req, tag);
    if (req.to === undefined || hex(req.to) !== TOKEN) return { accessList: [], gasUsed: 21_000n };
    const accessList = [{ address: addr(TOKEN), storageKeys: [bytes32(1n), bytes32(2n)] }];
    try {
      this.runToken(req);
      return { accessList, gasUsed: 30_100n };
    } catch (e) {
      if (e instanceof RevertError) return { accessList, gasUsed: 24_200n, error: 'execution reverted' };
      throw e;
    }
  }

  async gasPrice(): Promise<bigint> {
    this.see('gasPrice');
    return BASE_FEE + PRIORITY_FEE;
  }

  async maxPriorityFeePerGas(): Promise<bigint> {
    this.see('maxPriorityFeePerGas');
    return PRIORITY_FEE;
  }

  async feeHistory(
    blockCount: number,
    newest: BlockTag,
    percentiles: readonly number[],
  ): Promise<FeeHistoryView> {
    this.see('feeHistory', blockCount, newest, percentiles);
    const n = Math.min(blockCount, this.blocks.length);
    return {
      oldestBlock: BigInt(this.blocks.length - n),
      baseFeePerGas: Array.from({ length: n + 1 }, () => BASE_FEE),
      gasUsedRatio: this.blocks.slice(-n).map((b) => Number(b.header.gasUsed) / Number(b.header.gasLimit)),
      reward: Array.from({ length: n }, () => percentiles.map((p) => GWEI * BigInt(Math.round(p)))),
    };
  }

  async sendRawTransaction(raw: Uint8Array): Promise<Uint8Array> {
    this.see('sendRawTransaction', raw);
    const tx = decodeTransaction(raw, this.common);
    const from = tx.getSenderAddress().bytes;
    const next = await this.transactionCount(from, { kind: 'pending' });
    if (tx.nonce < next) {
      throw new ExecutionError(
        ExecutionErrorCode.BadNonce,
        `nonce too low: next nonce ${next}, tx nonce ${tx.nonce}`,
      );
    }
    const hash = keccak.keccak256(raw);
    this.txs.set(hex(hash), { raw, from });
    return hash;
  }

  async transactionByHash(hash: Uint8Array): Promise<TransactionView | undefined> {
    this.see('transactionByHash', hash);
    return this.txs.get(hex(hash));
  }

  async transactionReceipt(hash: Uint8Array): Promise<ReceiptView | undefined> {
    this.see('transactionReceipt', hash);
    return this.receipts.get(hex(hash));
  }

  async blockByTag(tag: BlockTag): Promise<BlockView | undefined> {
    this.see('blockByTag', tag);
    switch (tag.kind) {
      case 'number':
        return this.blocks[Number(tag.number)];
      case 'hash':
        return this.blocks.find((b) => hex(b.hash) === hex(tag.hash));
      case 'earliest':
        return this.blocks[0];
      case 'pending':
        throw new RpcError(RpcErrorCode.Server, 'pending block not available');
      default:
        return this.blocks.at(-1);
    }
  }
}

function header(h: Partial<BlockHeader> & Pick<BlockHeader, 'number' | 'parentHash'>): BlockHeader {
  return {
    miner: addr(MINER),
    stateRoot: bytes32(0x5747en),
    transactionsRoot: transactionsRoot([]),
    receiptsRoot: receiptsRoot([]),
    difficulty: 0n,
    gasLimit: defaultChainRules.gasLimit,
    gasUsed: 0n,
    timestamp: 1_700_000_000n,
    extraData: new Uint8Array(0),
    nonce: new Uint8Array(8),
    ...h,
  };
}

/** Builds the chain: signs the transactions, links blocks and receipts. */
export async function makeFixture(): Promise<Fixture> {
  const backend = new FakeBackend();
  const created = getCreateAddress({ from: bob.address, nonce: 0 }).toLowerCase();
  const raws = [
    await signTransfer(alice, 0, 0, bob.address, ETHER),
    await alice.signTransaction({
      type: 1,
      chainId: CHAIN_ID,
      nonce: 1,
      gasPrice: 2n * GWEI,
      gasLimit: 60_000,
      to: TOKEN,
      data: tokenAbi.encodeFunctionData('transfer', [bob.address, 5n]),
      accessList: [{ address: TOKEN, storageKeys: [hex(bytes32(1n)), hex(bytes32(2n))] }],
    }),
    await bob.signTransaction({
      type: 2,
      chainId: CHAIN_ID,
      nonce: 0,
      maxFeePerGas: 3n * GWEI,
      maxPriorityFeePerGas: GWEI / 2n,
      gasLimit: 100_000,
      to: null,
      data: hex(TOKEN_CODE),
    }),
  ];
  const pendingRaw = await signTransfer(bob, 2, 1, alice.address, 7n, {
    maxFeePerGas: 4n * GWEI,
    maxPriorityFeePerGas: 2n * GWEI,
  });
  const hashes = raws.map((r) => Transaction.from(r).hash!);
  const logsOf: Log[][] = [
    [],
    [transferLog(alice.address, bob.address, 5n), transferLog(bob.address, alice.address, 1n)],
    [transferLog(created, bob.address, 1000n)],
  ];
  const gasUsed = [21_000n, 35_000n, 50_000n];
  const cumulative = [21_000n, 56_000n, 106_000n];

  const genesisHeader = header({ number: 0n, parentHash: new Uint8Array(32) });
  const genesis: BlockView = {
    hash: headerHash(genesisHeader),
    header: genesisHeader,
    transactions: [],
    size: 520,
    baseFeePerGas: BASE_FEE,
  };
  const rawBytes = raws.map(fromHex);
  const receiptList = rawBytes.map((raw, i) => ({
    type: raw[0]! >= 0xc0 ? 0 : raw[0]!,
    status: 1 as const,
    cumulativeGasUsed: cumulative[i]!,
    logs: logsOf[i]!,
  }));
  const h1 = header({
    number: 1n,
    parentHash: genesis.hash,
    transactionsRoot: transactionsRoot(rawBytes),
    receiptsRoot: receiptsRoot(receiptList),
    difficulty: 1000n,
    gasUsed: 106_000n,
    timestamp: 1_700_000_012n,
    extraData: new TextEncoder().encode('monsoon'),
    nonce: fromHex('0x0102030405060708'),
  });
  const senders = [alice.address, alice.address, bob.address].map(addr);
  const block1: BlockView = {
    hash: headerHash(h1),
    header: h1,
    transactions: rawBytes,
    senders,
    size: 1024,
    baseFeePerGas: BASE_FEE,
    logsBloom: logsBloom(logsOf.flat()),
    totalDifficulty: 1000n,
  };
  backend.blocks.push(genesis, block1);

  const receipts: ReceiptView[] = [];
  let firstLogIndex = 0;
  rawBytes.forEach((raw, i) => {
    const tx = Transaction.from(raws[i]!);
    const view: TransactionView = {
      raw,
      from: senders[i]!,
      blockHash: block1.hash,
      blockNumber: 1n,
      index: i,
      baseFeePerGas: BASE_FEE,
    };
    backend.txs.set(hashes[i]!, view);
    const receipt: ReceiptView = {
      transactionHash: fromHex(hashes[i]!),
      blockHash: block1.hash,
      blockNumber: 1n,
      index: i,
      from: senders[i]!,
      ...(tx.to === null ? { contractAddress: addr(created) } : { to: addr(tx.to) }),
      gasUsed: gasUsed[i]!,
      cumulativeGasUsed: cumulative[i]!,
      effectiveGasPrice: tx.type === 2 ? BASE_FEE + GWEI / 2n : 2n * GWEI,
      status: 1,
      type: tx.type!,
      logs: logsOf[i]!,
      firstLogIndex,
    };
    firstLogIndex += logsOf[i]!.length;
    backend.receipts.set(hashes[i]!, receipt);
    receipts.push(receipt);
  });
  const pendingHash = Transaction.from(pendingRaw).hash!;
  backend.txs.set(pendingHash, { raw: fromHex(pendingRaw), from: addr(bob.address) });
  return { backend, genesis, block1, raws, hashes, receipts, pendingRaw, pendingHash, created };
}
