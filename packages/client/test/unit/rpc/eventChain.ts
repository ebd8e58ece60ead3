/**
 * A chain of blocks with logs for the event tests: a real ChainView (so reorgs replace blocks as
 * the client's do) fed by hand, a ClientEvents over it (the LogIndex and the chain changes the
 * RPC layer serves from), and a FakeBackend whose head and blocks are that chain's
 * (ethers polls eth_blockNumber to know when to poll its filters). Logs are the token's ERC-20
 * Transfer events, or whatever a test passes.
 */
import { byteKey, fromHex, toHex } from '@monsoon/dsm-tree';
import { type Log, logsBloom, type Receipt, receiptsRoot, transactionsRoot } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { type BlockHeader, headerHash } from '@monsoon/protocol';
import { ChainView, type ClientBlock } from '../../../src/chain.js';
import { ClientEvents } from '../../../src/clientEvents.js';
import type { BlockTag, BlockView } from '../../../src/rpc/index.js';
import { BASE_FEE, FakeBackend, MINER, TOKEN, tokenAbi } from './fakeBackend.js';

/** A Transfer event of `token` (default: the fixture's TOKEN). */
export function transferLog(from: string, to: string, value: bigint, token = TOKEN): Log {
  const ev = tokenAbi.encodeEventLog('Transfer', [from, to, value]);
  return { address: fromHex(token), topics: ev.topics.map(fromHex), data: fromHex(ev.data) };
}

export interface MineOptions {
  /** Build on block `parent` instead of the head: a block at a held height is a reorg. */
  readonly parent?: ClientBlock;
  /** Told apart blocks at the same height (a fork): part of the hash. */
  readonly fork?: number;
  /** The block's logs bloom, when a test wants a wrong one (the log index trusts it). */
  readonly bloom?: Uint8Array;
}

export class EventChain {
  readonly chain = new ChainView();
  readonly events: ClientEvents;
  readonly backend: ChainBackend;

  constructor(window = 64) {
    this.chain.add(this.block(undefined, [], {}));
    this.events = new ClientEvents({ window, baseFeePerGas: BASE_FEE }, { chain: this.chain });
    this.backend = new ChainBackend(this.chain);
  }

  get head(): ClientBlock {
    return this.chain.requireHead();
  }

  /**
   * Adds a block whose transaction i emits `txs[i]`, on the head or on `opts.parent`; returns
   * it once the chain (and so the log index and every listener) has taken it.
   */
  mine(txs: readonly (readonly Log[])[], opts: MineOptions = {}): ClientBlock {
    const b = this.block(opts.parent ?? this.head, txs, opts);
    this.chain.add(b);
    return b;
  }

  /** `n` blocks without transactions. */
  mineEmpty(n: number): void {
    for (let i = 0; i < n; i++) this.mine([]);
  }

  private block(
    parent: ClientBlock | undefined,
    txs: readonly (readonly Log[])[],
    opts: MineOptions,
  ): ClientBlock {
    const number = parent === undefined ? 0n : parent.header.number + 1n;
    const fork = opts.fork ?? 0;
    const transactions = txs.map((_, i) => Uint8Array.of(0xc0, Number(number & 0xffn), fork, i));
    let cumulative = 0n;
    const receipts: Receipt[] = txs.map((logs) => {
      cumulative += 21_000n;
      return { type: 2, status: 1, cumulativeGasUsed: cumulative, logs };
    });
    const header: BlockHeader = {
      parentHash: parent?.hash ?? new Uint8Array(32),
      miner: fromHex(MINER),
      stateRoot: keccak.keccak256(Uint8Array.of(Number(number & 0xffn), fork)),
      transactionsRoot: transactionsRoot(transactions),
      receiptsRoot: receiptsRoot(receipts),
      number,
      difficulty: BigInt(1 + fork),
      gasLimit: 30_000_000n,
      gasUsed: cumulative,
      timestamp: 1_700_000_000n + 12n * number,
      extraData: new Uint8Array(0),
      nonce: new Uint8Array(8),
    };
    return {
      hash: headerHash(header),
      header,
      transactions,
      txHashes: transactions.map((t) => keccak.keccak256(t)),
      txKeys: transactions.map((t) => byteKey(keccak.keccak256(t))),
      receipts,
      logsBloom: opts.bloom ?? logsBloom(txs.flat()),
      size: 500,
    };
  }
}

/** The fixture's backend, but with this chain's head and blocks. */
export class ChainBackend extends FakeBackend {
  constructor(private readonly view: ChainView) {
    super();
  }

  override blockNumber(): bigint {
    return this.view.requireHead().header.number;
  }

  override async blockByTag(tag: BlockTag): Promise<BlockView | undefined> {
    let b: ClientBlock | undefined;
    if (tag.kind === 'hash') b = this.view.block(tag.hash);
    else if (tag.kind === 'number') b = this.view.byNumber(tag.number);
    else if (tag.kind === 'earliest') b = this.view.byNumber(0n);
    else b = this.view.head;
    if (b === undefined) return undefined;
    return {
      hash: b.hash,
      header: b.header,
      transactions: b.transactions,
      size: b.size,
      baseFeePerGas: BASE_FEE,
      logsBloom: b.logsBloom,
    };
  }
}

/** 0x hex of bytes. */
export const hex = (b: Uint8Array): `0x${string}` => `0x${toHex(b)}`;
