/**
 * The prefetching client (DESIGN §1, §6): follows the chain from a miner, reads state from the
 * storage shards with proofs checked against the head's root, pre-executes each transaction to
 * learn what it touches, and sends it to a miner with the nodes that prove it (one bag per
 * submission, shared by the transactions batched into it). Transactions that certainly fail
 * are refused here with geth's messages and never reach a miner; a stale reply is answered by
 * pre-executing again on a newer head. Read-only calls are served from verified reads alone.
 *
 * `Client` is the facade over the parts that do this — ChainFollower (blocks from a miner, the
 * state head), ReadBackend (reads), SubmitQueue (pre-execution and submission) — and the
 * JSON-RPC backend: what the RPC layer (rpc/) asks, answered in domain types.
 */
import type { Common } from '@ethereumjs/common';
import { type Logger, silentLogger } from '@monsoon/edge';
import { type ChainRules, EvmPool, makeCommon, nativeCustomCrypto, type SignedTx } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import type { Genesis } from '@monsoon/protocol';
import { ChainView, type ClientBlock, defaultChainViewOptions } from './chain.js';
import { ChainFollower, defaultChainFollowerOptions, type SyncFrom } from './chainFollower.js';
import { ClientError, ClientErrorCode } from './clientError.js';
import { genesisHashOf } from './genesisHash.js';
import { MinerPool } from './minerPool.js';
import { defaultPoolSubmitterOptions, type PooledTx, PoolSubmitter, type SendWait } from './poolSubmitter.js';
import { decodeWithSenders, defaultReadBackendOptions, ReadBackend } from './readBackend.js';
import { DEFAULT_MAX_CACHED_NODES, RemoteState } from './remoteState.js';
import type {
  AccessListView,
  AccountProofView,
  BlockTag,
  BlockView,
  CallRequest,
  FeeHistoryView,
  ReceiptView,
  RpcBackend,
  SyncView,
  TransactionView,
} from './rpc/backend.js';
import { ShardedStorage } from './shardedStorage.js';
import { defaultSlotPredictorOptions, SlotPredictor } from './slotPredictor.js';
import { type OneSidedReads, openStorageTransport, type StorageTransportKind } from './storageTransport.js';
import { defaultSubmitQueueOptions, type SubmitCounters, SubmitQueue } from './submitQueue.js';
import { defaultTxPoolOptions, TxPool, type TxPoolOptions } from './txPool.js';
import { asGethRefusal } from './txRefusal.js';

export { MinerRefused } from './minerRefused.js';

export interface ClientOptions {
  /** Miners' `host:port`s: the first reachable one is followed and submitted to. */
  miners: readonly string[];
  /** Storage nodes' `host:port`s (every shard held by at least one). */
  storage: readonly string[];
  rules: ChainRules;
  /** Account-trie levels the miners retain: bags leave them out (c = r). */
  compactLevels: number;
  /** Most transactions batched into one submission. */
  maxBatch: number;
  /** Most submissions outstanding towards the miners at once (back-pressure: see SubmitQueue). */
  maxInFlight: number;
  /** Resubmissions of a transaction answered stale before it is given up. */
  maxStaleRetries: number;
  /** Most transactions pre-executing or pre-executed and waiting for a submission (SubmitQueueOptions.maxWaiting). */
  maxWaiting: number;
  /** Cached proof nodes at most (two generations: the oldest half goes when the newer is full). */
  maxCachedNodes: number;
  /** Per-call deadline towards miners and storage, ms. */
  deadlineMs: number;
  /** The per-sender pool of transactions no miner has taken yet (geth's limits by default). */
  txPool: TxPoolOptions;
  /** Canonical blocks (with transactions and receipts) kept; older ones are forgotten. */
  chainWindow: number;
  /** Transactions the chain view keeps at most: fuller blocks, fewer of them (ChainViewOptions.maxTransactions). */
  chainMaxTransactions: number;
  /**
   * Where a fresh client starts: the miner's head (served at once; that first header is an
   * anchor, the chain window's history behind it then fetched and linked to it) or genesis
   * (every block replayed and linked first).
   */
  syncFrom: SyncFrom;
  /**
   * The genesis file (optional): a late start checks the ancestry of its first block down to its
   * block 0 (the state root computed from it when first needed).
   */
  genesis?: Genesis;
  logger: Logger;
  /** How state is read from storage: grpc, or one-sided walks (shm, rdma) in front of it. */
  storageTransport: StorageTransportKind;
}

export const defaultClientOptions: Omit<ClientOptions, 'miners' | 'storage' | 'rules'> = {
  compactLevels: 2,
  maxBatch: defaultSubmitQueueOptions.maxBatch,
  maxInFlight: defaultSubmitQueueOptions.maxInFlight,
  maxStaleRetries: defaultSubmitQueueOptions.maxStaleRetries,
  maxWaiting: defaultSubmitQueueOptions.maxWaiting,
  maxCachedNodes: DEFAULT_MAX_CACHED_NODES,
  deadlineMs: defaultSubmitQueueOptions.deadlineMs,
  txPool: defaultTxPoolOptions,
  chainWindow: defaultChainViewOptions.window,
  chainMaxTransactions: defaultChainViewOptions.maxTransactions,
  syncFrom: defaultChainFollowerOptions.syncFrom,
  logger: silentLogger,
  storageTransport: 'grpc',
};

export interface ClientCounters extends SubmitCounters {
  /** Transactions received (eth_sendRawTransaction and gRPC). */
  submitted: number;
}

export class Client implements RpcBackend {
  readonly counters: ClientCounters = {
    submitted: 0,
    accepted: 0,
    rejectedEarly: 0,
    rejectedByMiner: 0,
    staleReplies: 0,
    abandoned: 0,
    submissions: 0,
    resubmissions: 0,
    bagBytes: 0,
    unbaggedWitnessBytes: 0,
    rawWitnessBytes: 0,
  };
  readonly chain: ChainView;
  readonly common: Common;
  private readonly miners: MinerPool;
  private readonly follower: ChainFollower;
  private readonly reads: ReadBackend;
  private readonly submitQueue: SubmitQueue;
  private readonly pool: TxPool<PooledTx>;
  private readonly submitter: PoolSubmitter;
  /** Observers of submit→inclusion latency (ms) and pre-execution time (ms). */
  onInclusion: ((ms: number) => void) | undefined;
  onPreExecuted: ((ms: number, rounds: number) => void) | undefined;
  /** Observer of every transaction admitted (newPendingTransactions subscriptions and filters). */
  onAdmitted: ((hash: Uint8Array) => void) | undefined;

  /** The options, but the genesis file's allocation (see the constructor). */
  readonly opts: ClientOptions;

  private constructor(
    options: ClientOptions,
    readonly remote: RemoteState,
  ) {
    // The genesis file serves block 0's hash only (computed in a worker, which takes its own
    // copy): held here, the workload's 100K accounts and 100K token slots were ~45 MiB of a
    // client's heap for good (heap snapshots of a soak, session 12).
    const { genesis, ...opts } = options;
    this.opts = opts;
    this.chain = new ChainView({
      window: opts.chainWindow,
      maxTransactions: opts.chainMaxTransactions,
      minDifficulty: opts.rules.minDifficulty,
    });
    this.common = makeCommon(opts.rules, nativeCustomCrypto);
    this.miners = new MinerPool(opts.miners);
    this.follower = new ChainFollower(
      {
        ...defaultChainFollowerOptions,
        syncFrom: opts.syncFrom,
        history: opts.chainWindow,
        logger: opts.logger,
      },
      {
        chain: this.chain,
        miners: this.miners,
        storage: remote.storage,
        ...(genesis === undefined ? {} : { genesisHash: genesisHashOf(genesis) }),
      },
    );
    this.reads = new ReadBackend(
      { ...defaultReadBackendOptions, rules: opts.rules },
      { chain: this.chain, remote, common: this.common },
    );
    const slots = new SlotPredictor(defaultSlotPredictorOptions, keccak);
    this.submitQueue = new SubmitQueue(
      {
        ...defaultSubmitQueueOptions,
        rules: opts.rules,
        maxBatch: opts.maxBatch,
        maxInFlight: opts.maxInFlight,
        maxStaleRetries: opts.maxStaleRetries,
        maxWaiting: opts.maxWaiting,
        deadlineMs: opts.deadlineMs,
      },
      {
        remote,
        chain: this.chain,
        follower: this.follower,
        miners: this.miners,
        common: this.common,
        // Contract calls pre-executed at once each hold an EVM while they await inside it: with a
        // few hundred in flight a smaller pool is built anew (~1.4 ms an EVM) at every wave.
        evms: new EvmPool(this.common, 256),
        counters: this.counters,
        slots,
        onPreExecuted: (ms, rounds) => this.onPreExecuted?.(ms, rounds),
      },
    );
    this.pool = new TxPool(opts.txPool);
    this.submitter = new PoolSubmitter(
      { ...defaultPoolSubmitterOptions, logger: opts.logger },
      {
        pool: this.pool,
        submitter: this.submitQueue,
        follower: this.follower,
        chain: this.chain,
        reads: this.reads,
        slots,
        counters: this.counters,
        onInclusion: (ms) => this.onInclusion?.(ms),
      },
    );
  }

  /** Connects to the storage nodes and miners and starts following the chain. */
  static async create(
    options: Partial<ClientOptions> & Pick<ClientOptions, 'miners' | 'storage' | 'rules'>,
  ): Promise<Client> {
    const opts: ClientOptions = { ...defaultClientOptions, ...options };
    if (opts.miners.length === 0) throw new ClientError(ClientErrorCode.BadArgument, 'no miners given');
    const storage = await ShardedStorage.connect(opts.storage, { deadlineMs: opts.deadlineMs });
    let oneSided: OneSidedReads | undefined;
    try {
      oneSided = await openStorageTransport(opts.storageTransport, storage, opts.logger);
    } catch (e) {
      storage.close();
      throw e;
    }
    const remote = new RemoteState(
      storage,
      { compactLevels: opts.compactLevels, maxCachedNodes: opts.maxCachedNodes },
      undefined,
      oneSided,
    );
    const client = new Client(opts, remote);
    client.follower.start();
    return client;
  }

  /** `create` under its older name. */
  static start(
    options: Partial<ClientOptions> & Pick<ClientOptions, 'miners' | 'storage' | 'rules'>,
  ): Promise<Client> {
    return Client.create(options);
  }

  /** Resolves once a head is known (or rejects after `ms`). */
  ready(ms = 30_000): Promise<ClientBlock> {
    return this.follower.ready(ms);
  }

  async close(): Promise<void> {
    this.follower.stop();
    this.submitter.close();
    this.submitQueue.close();
    this.miners.close();
    this.remote.oneSided?.close();
    this.remote.storage.close();
  }

  /**
   * The newest canonical block every shard can already be read at (what transactions are
   * pre-executed against): the chain head, or below it while storage nodes catch up.
   */
  stateHead(): ClientBlock {
    return this.follower.stateHead();
  }

  // ------------------------------------------------------------ reads (ReadBackend)

  chainId(): bigint {
    return this.opts.rules.chainId;
  }

  blockNumber(): bigint {
    return this.chain.requireHead().header.number;
  }

  syncing(): SyncView | undefined {
    return this.follower.syncing();
  }

  /** Blocks taken from miners' streams so far (replays included). */
  get blocksReceived(): number {
    return this.follower.blocksReceived;
  }

  /** Whether the oldest block held is linked to the genesis file's block 0 (undefined: not known yet). */
  get ancestryChecked(): boolean | undefined {
    return this.follower.ancestryChecked;
  }

  /** Blocks of history added behind a late start's anchor. */
  get historyBlocks(): number {
    return this.follower.historyBlocks;
  }

  balance(address: Uint8Array, tag: BlockTag): Promise<bigint> {
    return this.reads.balance(address, tag);
  }

  async transactionCount(address: Uint8Array, tag: BlockTag): Promise<bigint> {
    const nonce = await this.reads.nonce(address, tag);
    // 'pending' (geth's pool nonce): past what the pool holds for the sender without a gap.
    return tag.kind === 'pending' ? this.pool.pendingNonce(address, nonce) : nonce;
  }

  code(address: Uint8Array, tag: BlockTag): Promise<Uint8Array> {
    return this.reads.code(address, tag);
  }

  storageAt(address: Uint8Array, slot: Uint8Array, tag: BlockTag): Promise<Uint8Array> {
    return this.reads.storageAt(address, slot, tag);
  }

  proof(address: Uint8Array, slots: readonly Uint8Array[], tag: BlockTag): Promise<AccountProofView> {
    return this.reads.proof(address, slots, tag);
  }

  call(req: CallRequest, tag: BlockTag): Promise<Uint8Array> {
    return this.reads.call(req, tag);
  }

  estimateGas(req: CallRequest, tag: BlockTag): Promise<bigint> {
    return this.reads.estimateGas(req, tag);
  }

  createAccessList(req: CallRequest, tag: BlockTag): Promise<AccessListView> {
    return this.reads.createAccessList(req, tag);
  }

  gasPrice(): Promise<bigint> {
    return this.reads.gasPrice();
  }

  maxPriorityFeePerGas(): Promise<bigint> {
    return this.reads.maxPriorityFeePerGas();
  }

  feeHistory(
    blockCount: number,
    newest: BlockTag,
    rewardPercentiles: readonly number[],
  ): Promise<FeeHistoryView> {
    return this.reads.feeHistory(blockCount, newest, rewardPercentiles);
  }

  blockByTag(tag: BlockTag): Promise<BlockView | undefined> {
    return this.reads.blockByTag(tag);
  }

  async transactionByHash(hash: Uint8Array): Promise<TransactionView | undefined> {
    const mined = await this.reads.minedTransaction(hash);
    if (mined !== undefined) return mined;
    const p = this.pool.get(hash);
    return p === undefined ? undefined : { raw: p.tx.raw, from: p.tx.sender };
  }

  transactionReceipt(hash: Uint8Array): Promise<ReceiptView | undefined> {
    return this.reads.transactionReceipt(hash);
  }

  // ------------------------------------------------------------ sending (PoolSubmitter)

  /**
   * eth_sendRawTransaction: decodes and checks a signed transaction, admits it into the pool and
   * resolves with its hash once a miner accepted it — or at once when its nonce leaves a gap
   * (as geth, the hash is the answer; it goes to a miner when the gap fills). A transaction that
   * certainly fails is refused with geth's message before any miner sees it.
   */
  sendRawTransaction(raw: Uint8Array): Promise<Uint8Array> {
    return this.send(raw, 'queued');
  }

  /**
   * The same, but resolves only once a miner accepted the transaction, however long it waits
   * in the pool (gRPC SendTransactions: "accepted" means a miner has it).
   */
  submitTransaction(raw: Uint8Array): Promise<Uint8Array> {
    return this.send(raw, 'accepted');
  }

  /**
   * submitTransaction for many at once (gRPC SendTransactions): their senders are recovered in
   * one batch. Each promise settles as submitTransaction's would for its transaction.
   * `senderKeys` (64 bytes a transaction, in order): the signers' public keys as the caller
   * claims them, checked in one batch instead of recovering each signature (see
   * {@link decodeWithSenders}): the same outcome whatever they say.
   */
  submitTransactions(raws: readonly Uint8Array[], senderKeys?: Uint8Array): Promise<Uint8Array>[] {
    return decodeWithSenders(raws, this.common, senderKeys).map((d, i) =>
      this.admit(raws[i]!, d, 'accepted'),
    );
  }

  private send(raw: Uint8Array, wait: SendWait): Promise<Uint8Array> {
    return this.admit(raw, decodeWithSenders([raw], this.common)[0]!, wait);
  }

  private async admit(
    raw: Uint8Array,
    decoded: { tx: SignedTx; from: Uint8Array } | Error,
    wait: SendWait,
  ): Promise<Uint8Array> {
    this.counters.submitted++;
    if (decoded instanceof Error) {
      this.counters.rejectedEarly++;
      throw asGethRefusal(decoded);
    }
    const { tx, from } = decoded;
    await this.submitter.send(tx, from, raw, wait);
    this.onAdmitted?.(tx.hash);
    return tx.hash;
  }

  /** Transactions accepted by a miner and not yet seen in a block. */
  get pendingCount(): number {
    return this.pool.counts().sent;
  }

  /** Transactions in the pool waiting for a nonce gap to fill or for their turn. */
  get queuedCount(): number {
    return this.pool.queuedCount;
  }
}
