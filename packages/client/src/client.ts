/**
 * The prefetching client (DESIGN §1, §6): follows the chain from a miner, reads state from the
 * storage shards with proofs checked against the head's root, pre-executes each transaction to
 * learn what it touches, and sends it to a miner with the nodes that prove it (one bag per
 * submission, shared by the transactions batched into it). Transactions that certainly fail
 * are refused here with geth's messages and never reach a miner; a stale reply is answered by
 * pre-executing again on a newer head. Read-only calls are served from verified reads alone.
 *
 * `Client` is also the JSON-RPC backend: what the RPC layer (rpc/) asks, answered in domain types.
 */
import type { Common } from '@ethereumjs/common';
import { credentials, type ServiceError, status } from '@grpc/grpc-js';
import { bytesEqual, EMPTY_CODE_HASH, EMPTY_ROOT, NodeBag, rlpEncode, toHex } from '@monsoon/dsm-tree';
import { type Logger, silentLogger, unary } from '@monsoon/edge';
import {
  type BlockEnv,
  type ChainRules,
  decodeSignedTx,
  decodeTransaction,
  EvmPool,
  makeCommon,
  nativeCustomCrypto,
  recoverSenders,
  type SignedTx,
  txFees,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import {
  blockWithReceiptsFromProto,
  MinerServiceClient,
  type minerPb,
  submitRequestToProto,
  submitResponseFromProto,
  type TxResult,
  TxStatus,
} from '@monsoon/protocol';
import { callOutput, estimateGas, runCall } from './calls.js';
import { ChainView, type ClientBlock, clientBlockOf } from './chain.js';
import { ClientError, ClientErrorCode } from './clientError.js';
import { RemoteState, type StateRef } from './remoteState.js';
import type {
  AccountProofView,
  BlockTag,
  BlockView,
  CallRequest,
  FeeHistoryView,
  ReceiptView,
  RpcBackend,
  TransactionView,
} from './rpc/backend.js';
import { RpcError, RpcErrorCode } from './rpc/rpcError.js';
import { ShardedStorage } from './shardedStorage.js';
import { speculate } from './speculate.js';

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
  /** Resubmissions of a transaction answered stale before it is given up. */
  maxStaleRetries: number;
  /** Cached proof nodes at most. */
  maxCachedNodes: number;
  /** Per-call deadline towards miners and storage, ms. */
  deadlineMs: number;
  logger: Logger;
}

export const defaultClientOptions: Omit<ClientOptions, 'miners' | 'storage' | 'rules'> = {
  compactLevels: 2,
  maxBatch: 256,
  maxStaleRetries: 4,
  maxCachedNodes: 2_000_000,
  deadlineMs: 10_000,
  logger: silentLogger,
};

export interface ClientCounters {
  submitted: number;
  accepted: number;
  /** Refused here, before any miner saw them. */
  rejectedEarly: number;
  /** Refused by a miner. */
  rejectedByMiner: number;
  staleReplies: number;
  /** Given up after too many stale replies. */
  abandoned: number;
  /** Submissions sent to miners, and the bag bytes they carried. */
  submissions: number;
  bagBytes: number;
  /** Witness bytes before bagging: the sum over transactions of what each alone needed, compacted. */
  unbaggedWitnessBytes: number;
  /** The same before compaction too: each transaction's full proofs (and code). */
  rawWitnessBytes: number;
}

interface Queued {
  readonly raw: Uint8Array;
  readonly hash: Uint8Array;
  readonly at: StateRef;
  readonly served: NodeBag;
  readonly resolve: (r: TxResult) => void;
  readonly reject: (e: unknown) => void;
}

interface PendingTx {
  readonly raw: Uint8Array;
  readonly sender: Uint8Array;
  readonly nonce: bigint;
  readonly sentAt: number;
}

const CHANNEL = {
  'grpc.max_receive_message_length': 256 * 1024 * 1024,
  'grpc.max_send_message_length': 256 * 1024 * 1024,
};

export class Client implements RpcBackend {
  readonly counters: ClientCounters = {
    submitted: 0,
    accepted: 0,
    rejectedEarly: 0,
    rejectedByMiner: 0,
    staleReplies: 0,
    abandoned: 0,
    submissions: 0,
    bagBytes: 0,
    unbaggedWitnessBytes: 0,
    rawWitnessBytes: 0,
  };
  readonly chain = new ChainView();
  readonly common: Common;
  /** EVMs reused by pre-executions (building one costs more than running a transaction). */
  private readonly evms: EvmPool;
  private readonly pending = new Map<string, PendingTx>();
  private queue: Queued[] = [];
  private flushScheduled = false;
  private follow: { cancel(): void } | undefined;
  private closed = false;
  /** Index into `miners` of the one submitted to (moves on when it is down). */
  private minerAt = 0;
  /** Observers of submit→inclusion latency (ms) and pre-execution time (ms). */
  onInclusion: ((ms: number) => void) | undefined;
  onPreExecuted: ((ms: number, rounds: number) => void) | undefined;

  private get log(): Logger {
    return this.opts.logger;
  }

  private constructor(
    readonly opts: ClientOptions,
    readonly remote: RemoteState,
    private readonly miners: MinerServiceClient[],
  ) {
    this.common = makeCommon(opts.rules.chainId, nativeCustomCrypto);
    this.evms = new EvmPool(this.common);
    this.chain.onHead((b) => {
      this.stateMoved();
      for (const h of b.txHashes) {
        const p = this.pending.get(toHex(h));
        if (p === undefined) continue;
        this.pending.delete(toHex(h));
        this.onInclusion?.(Date.now() - p.sentAt);
      }
    });
  }

  /** Connects to the storage nodes and miners and starts following the chain. */
  static async start(
    options: Partial<ClientOptions> & Pick<ClientOptions, 'miners' | 'storage' | 'rules'>,
  ): Promise<Client> {
    const opts: ClientOptions = { ...defaultClientOptions, ...options };
    if (opts.miners.length === 0) throw new ClientError(ClientErrorCode.BadArgument, 'no miners given');
    const storage = await ShardedStorage.connect(opts.storage, { deadlineMs: opts.deadlineMs });
    const remote = new RemoteState(storage, {
      compactLevels: opts.compactLevels,
      maxCachedNodes: opts.maxCachedNodes,
    });
    const miners = opts.miners.map((a) => new MinerServiceClient(a, credentials.createInsecure(), CHANNEL));
    const client = new Client(opts, remote, miners);
    storage.followHeads(() => client.stateMoved());
    client.followChain();
    return client;
  }

  /** Resolves once a head is known (or rejects after `ms`). */
  async ready(ms = 30_000): Promise<ClientBlock> {
    const head = this.chain.head;
    if (head !== undefined) return head;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        off();
        reject(
          new ClientError(
            ClientErrorCode.UnknownBlock,
            `no block from miners ${this.opts.miners.join(', ')} within ${ms} ms`,
          ),
        );
      }, ms);
      const off = this.chain.onHead((b) => {
        clearTimeout(t);
        off();
        resolve(b);
      });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.follow?.cancel();
    for (const q of this.queue) q.reject(new ClientError(ClientErrorCode.Closed, 'the client is closing'));
    this.queue = [];
    for (const m of this.miners) m.close();
    this.remote.storage.close();
  }

  // ------------------------------------------------------------ following the chain

  /** Streams canonical blocks from the current miner; on a break, resumes (another miner if need be). */
  private followChain(): void {
    if (this.closed) return;
    const head = this.chain.head;
    // Resume a little below the head: a reorg while disconnected is then seen.
    const from = head === undefined ? 0n : head.header.number > 16n ? head.header.number - 16n : 0n;
    const miner = this.miners[this.minerAt % this.miners.length]!;
    const call = miner.subscribeBlocks({ fromNumber: from });
    this.follow = call;
    let failed = false;
    const retry = (why: string) => {
      if (failed || this.closed) return;
      failed = true;
      this.log.warn('chain stream broken: following again', {
        miner: this.opts.miners[this.minerAt % this.miners.length],
        why,
      });
      this.minerAt++;
      setTimeout(() => this.followChain(), 200);
    };
    call.on('data', (m: minerPb.BlockWithReceipts) => {
      try {
        this.chain.add(clientBlockOf(blockWithReceiptsFromProto(m)));
      } catch (e) {
        call.cancel();
        retry((e as Error).message);
      }
    });
    call.on('error', (e) => retry(e.message));
    call.on('end', () => retry('the miner ended the stream'));
  }

  /**
   * The newest canonical block every shard can already be read at (what transactions are
   * pre-executed against): the chain head, or below it while storage nodes catch up.
   */
  stateHead(): ClientBlock {
    const head = this.chain.requireHead();
    const readable = this.remote.storage.readableNumber;
    if (readable >= head.header.number) return head;
    return this.chain.byNumber(readable) ?? head;
  }

  private readonly stateListeners = new Set<() => void>();

  private stateMoved(): void {
    for (const f of [...this.stateListeners]) f();
  }

  private stateAt(b: ClientBlock): StateRef {
    return { blockHash: b.hash, stateRoot: b.header.stateRoot };
  }

  /** The block a tag names; 'pending' and the like are the head. UNKNOWN_BLOCK (as geth's "header not found") otherwise. */
  private blockAt(tag: BlockTag): ClientBlock {
    let b: ClientBlock | undefined;
    switch (tag.kind) {
      case 'number':
        b = this.chain.byNumber(tag.number);
        break;
      case 'hash':
        b = this.chain.block(tag.hash);
        break;
      case 'earliest':
        b = this.chain.byNumber(0n);
        break;
      default:
        b = this.chain.requireHead();
    }
    if (b === undefined) throw new RpcError(RpcErrorCode.Server, 'header not found');
    return b;
  }

  /** The environment a transaction sent now would run in: the block after the head. */
  private nextEnv(head: ClientBlock): BlockEnv {
    const now = BigInt(Math.floor(Date.now() / 1000));
    return {
      number: head.header.number + 1n,
      timestamp: now > head.header.timestamp ? now : head.header.timestamp + 1n,
      coinbase: head.header.miner,
      gasLimit: head.header.gasLimit,
    };
  }

  /** The environment of a block itself (eth_call at it). */
  private envOf(b: ClientBlock): BlockEnv {
    return {
      number: b.header.number,
      timestamp: b.header.timestamp,
      coinbase: b.header.miner,
      gasLimit: b.header.gasLimit,
    };
  }

  // ------------------------------------------------------------ state reads

  private async account(address: Uint8Array, tag: BlockTag) {
    const at = this.stateAt(this.blockAt(tag));
    return (
      await this.remote.withState(at, [{ address, slots: [], code: false }], (t) => t.getAccount(address))
    ).value;
  }

  async balance(address: Uint8Array, tag: BlockTag): Promise<bigint> {
    return (await this.account(address, tag))?.balance ?? 0n;
  }

  async transactionCount(address: Uint8Array, tag: BlockTag): Promise<bigint> {
    const nonce = (await this.account(address, tag))?.nonce ?? 0n;
    if (tag.kind !== 'pending') return nonce;
    let next = nonce;
    for (const p of this.pending.values()) {
      if (bytesEqual(p.sender, address) && p.nonce >= next) next = p.nonce + 1n;
    }
    return next;
  }

  async code(address: Uint8Array, tag: BlockTag): Promise<Uint8Array> {
    const at = this.stateAt(this.blockAt(tag));
    const { value } = await this.remote.withState(at, [{ address, slots: [], code: true }], (t) => {
      const a = t.getAccount(address);
      if (a === undefined || bytesEqual(a.codeHash, EMPTY_CODE_HASH)) return new Uint8Array(0);
      const code = t.getCode(a.codeHash) ?? t.resolver?.(a.codeHash);
      if (code === undefined)
        throw new ClientError(ClientErrorCode.BadProof, `code of ${toHex(address)} not served`);
      return code;
    });
    return value;
  }

  async storageAt(address: Uint8Array, slot: Uint8Array, tag: BlockTag): Promise<Uint8Array> {
    const at = this.stateAt(this.blockAt(tag));
    const { value } = await this.remote.withState(at, [{ address, slots: [slot], code: false }], (t) => {
      t.getAccount(address);
      return t.getStorage(address, slot);
    });
    const out = new Uint8Array(32);
    if (value !== undefined) out.set(value, 32 - value.length);
    return out;
  }

  async proof(address: Uint8Array, slots: readonly Uint8Array[], tag: BlockTag): Promise<AccountProofView> {
    const at = this.stateAt(this.blockAt(tag));
    const { value } = await this.remote.withState(at, [{ address, slots: [...slots], code: false }], (t) => {
      const a = t.getAccount(address);
      return {
        address,
        balance: a?.balance ?? 0n,
        nonce: a?.nonce ?? 0n,
        codeHash: a?.codeHash ?? EMPTY_CODE_HASH,
        storageHash: a?.storageRoot ?? EMPTY_ROOT,
        accountProof: t.proveAccount(address),
        storageProof: slots.map((key) => {
          const v = t.getStorage(address, key);
          return {
            key,
            value: v === undefined || v.length === 0 ? 0n : BigInt(`0x${toHex(v)}`),
            proof: a === undefined ? [] : t.proveStorage(address, key),
          };
        }),
      };
    });
    return value;
  }

  async call(req: CallRequest, tag: BlockTag): Promise<Uint8Array> {
    const b = this.blockAt(tag);
    const { value } = await this.remote.withState(this.stateAt(b), this.callKeys(req), (t) =>
      runCall(t, req, this.envOf(b), this.opts.rules, this.common),
    );
    return callOutput(value);
  }

  async estimateGas(req: CallRequest, tag: BlockTag): Promise<bigint> {
    const b = this.blockAt(tag);
    const { value } = await this.remote.withState(this.stateAt(b), this.callKeys(req), (t) =>
      estimateGas(t, req, this.envOf(b), this.opts.rules, this.common),
    );
    return value;
  }

  private callKeys(req: CallRequest) {
    const keys = [];
    if (req.from !== undefined) keys.push({ address: req.from, slots: [], code: false });
    if (req.to !== undefined) keys.push({ address: req.to, slots: [], code: true });
    return keys;
  }

  // ------------------------------------------------------------ fees

  /** Base fee (constant on this chain) plus the tip miners are asked for. */
  async gasPrice(): Promise<bigint> {
    return this.opts.rules.baseFeePerGas + (await this.maxPriorityFeePerGas());
  }

  async maxPriorityFeePerGas(): Promise<bigint> {
    return 1_000_000_000n;
  }

  async feeHistory(
    blockCount: number,
    newest: BlockTag,
    rewardPercentiles: readonly number[],
  ): Promise<FeeHistoryView> {
    const last = this.blockAt(newest);
    const blocks: ClientBlock[] = [];
    for (let n = last.header.number; blocks.length < blockCount && n >= 0n; n--) {
      const b = this.chain.byNumber(n);
      if (b === undefined) break;
      blocks.unshift(b);
    }
    const base = this.opts.rules.baseFeePerGas;
    return {
      oldestBlock: blocks[0]?.header.number ?? last.header.number,
      // One more than blocks: the base fee of the block after the newest.
      baseFeePerGas: [...blocks.map(() => base), base],
      gasUsedRatio: blocks.map((b) =>
        b.header.gasLimit === 0n ? 0 : Number(b.header.gasUsed) / Number(b.header.gasLimit),
      ),
      ...(rewardPercentiles.length > 0
        ? { reward: blocks.map((b) => this.rewards(b, rewardPercentiles)) }
        : {}),
    };
  }

  /** The priority fees paid in a block at the given gas-weighted percentiles, as geth computes them. */
  private rewards(b: ClientBlock, percentiles: readonly number[]): bigint[] {
    if (b.transactions.length === 0) return percentiles.map(() => 0n);
    const base = this.opts.rules.baseFeePerGas;
    let prev = 0n;
    const items = b.transactions
      .map((raw, i) => {
        const used = b.receipts[i]!.cumulativeGasUsed - prev;
        prev = b.receipts[i]!.cumulativeGasUsed;
        return { tip: txFees(decodeTransaction(raw, this.common), base).priorityFee, used };
      })
      .sort((x, y) => (x.tip < y.tip ? -1 : x.tip > y.tip ? 1 : 0));
    const total = Number(b.header.gasUsed);
    return percentiles.map((p) => {
      const threshold = (total * p) / 100;
      let sum = 0;
      for (const it of items) {
        sum += Number(it.used);
        if (sum >= threshold) return it.tip;
      }
      return items.at(-1)!.tip;
    });
  }

  // ------------------------------------------------------------ blocks and transactions

  async blockByTag(tag: BlockTag): Promise<BlockView | undefined> {
    let b: ClientBlock | undefined;
    try {
      b = this.blockAt(tag);
    } catch {
      return undefined;
    }
    return {
      hash: b.hash,
      header: b.header,
      transactions: b.transactions,
      size: b.size,
      baseFeePerGas: this.opts.rules.baseFeePerGas,
      logsBloom: b.logsBloom,
    };
  }

  private sender(raw: Uint8Array): { tx: SignedTx; from: Uint8Array } {
    const tx = decodeSignedTx(raw, this.common);
    const from = recoverSenders([tx])[0]!;
    if (from instanceof Error) throw from;
    return { tx, from };
  }

  async transactionByHash(hash: Uint8Array): Promise<TransactionView | undefined> {
    const loc = this.chain.transaction(hash);
    if (loc !== undefined) {
      const raw = loc.block.transactions[loc.index]!;
      return {
        raw,
        from: this.sender(raw).from,
        blockHash: loc.block.hash,
        blockNumber: loc.block.header.number,
        index: loc.index,
        baseFeePerGas: this.opts.rules.baseFeePerGas,
      };
    }
    const p = this.pending.get(toHex(hash));
    return p === undefined ? undefined : { raw: p.raw, from: p.sender };
  }

  async transactionReceipt(hash: Uint8Array): Promise<ReceiptView | undefined> {
    const loc = this.chain.transaction(hash);
    if (loc === undefined) return undefined;
    const { block, index } = loc;
    const raw = block.transactions[index]!;
    const { tx, from } = this.sender(raw);
    const r = block.receipts[index]!;
    const before = index === 0 ? 0n : block.receipts[index - 1]!.cumulativeGasUsed;
    let firstLogIndex = 0;
    for (let i = 0; i < index; i++) firstLogIndex += block.receipts[i]!.logs.length;
    return {
      transactionHash: hash,
      blockHash: block.hash,
      blockNumber: block.header.number,
      index,
      from,
      ...(tx.to !== undefined ? { to: tx.to } : { contractAddress: createdAddress(from, tx.nonce) }),
      gasUsed: r.cumulativeGasUsed - before,
      cumulativeGasUsed: r.cumulativeGasUsed,
      effectiveGasPrice: txFees(tx, this.opts.rules.baseFeePerGas).gasPrice,
      status: r.status,
      type: r.type,
      logs: r.logs,
      firstLogIndex,
    };
  }

  // ------------------------------------------------------------ sending

  chainId(): bigint {
    return this.opts.rules.chainId;
  }

  blockNumber(): bigint {
    return this.chain.requireHead().header.number;
  }

  /**
   * Decodes, checks and pre-executes a signed transaction, then submits it with its witness;
   * resolves with its hash once a miner accepted it. A transaction that certainly fails is
   * refused with geth's message (as an ExecutionError) before any miner sees it.
   */
  async sendRawTransaction(raw: Uint8Array): Promise<Uint8Array> {
    this.counters.submitted++;
    let tx: SignedTx;
    let from: Uint8Array;
    try {
      ({ tx, from } = this.sender(raw));
    } catch (e) {
      this.counters.rejectedEarly++;
      throw e;
    }
    const hash = keccak.keccak256(raw);
    for (let attempt = 0; ; attempt++) {
      const state = this.stateHead();
      const at = this.stateAt(state);
      const t0 = performance.now();
      const spec = await speculate(
        this.remote,
        at,
        this.nextEnv(this.chain.requireHead()),
        this.opts.rules,
        this.common,
        tx,
        from,
        this.evms,
      );
      this.onPreExecuted?.(performance.now() - t0, spec.rounds);
      if (spec.outcome.status === 'invalid') {
        this.counters.rejectedEarly++;
        throw spec.outcome.error;
      }
      const result = await this.enqueue({ raw, hash, at, served: spec.served });
      if (result.status === TxStatus.Accepted) {
        this.counters.accepted++;
        if (!this.chain.transaction(hash))
          this.pending.set(toHex(hash), { raw, sender: from, nonce: tx.nonce, sentAt: Date.now() });
        return hash;
      }
      if (result.status === TxStatus.Invalid) {
        this.counters.rejectedByMiner++;
        throw new MinerRefused(result.reason);
      }
      this.counters.staleReplies++;
      if (attempt >= this.opts.maxStaleRetries) {
        this.counters.abandoned++;
        throw new ClientError(
          ClientErrorCode.StaleRetries,
          `transaction ${toHex(hash)} was still stale after ${attempt + 1} submissions: ${result.reason}`,
        );
      }
      // The miner is ahead of the state read here: wait until it moves (or a moment).
      await this.stateChange(state, 500);
    }
  }

  /** Resolves when the state head is no longer `than`, or after `ms`. */
  private stateChange(than: ClientBlock, ms: number): Promise<void> {
    if (this.stateHead() !== than) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.stateListeners.delete(check);
        resolve();
      };
      const check = () => {
        if (this.stateHead() !== than) done();
      };
      const t = setTimeout(done, ms);
      this.stateListeners.add(check);
    });
  }

  private enqueue(q: Omit<Queued, 'resolve' | 'reject'>): Promise<TxResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...q, resolve, reject });
      if (this.queue.length >= this.opts.maxBatch) this.flush();
      else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends what is queued: one submission per state root, each with one merged bag. */
  private flush(): void {
    this.flushScheduled = false;
    const queued = this.queue;
    this.queue = [];
    const byRoot = new Map<string, Queued[]>();
    for (const q of queued) {
      const k = toHex(q.at.stateRoot);
      const list = byRoot.get(k);
      if (list === undefined) byRoot.set(k, [q]);
      else list.push(q);
    }
    for (const group of byRoot.values()) {
      for (let i = 0; i < group.length; i += this.opts.maxBatch)
        void this.submit(group.slice(i, i + this.opts.maxBatch));
    }
  }

  private async submit(group: Queued[]): Promise<void> {
    const bag = new NodeBag({ hash: keccak });
    for (const q of group) {
      this.counters.rawWitnessBytes += q.served.byteSize;
      for (const n of this.remote.bagOf(q.served)) {
        this.counters.unbaggedWitnessBytes += n.length;
        bag.add(n);
      }
    }
    const nodes = bag.values();
    this.counters.submissions++;
    this.counters.bagBytes += bag.byteSize;
    const req = submitRequestToProto({
      transactions: group.map((q) => q.raw),
      bag: nodes,
      prefetchedRoot: group[0]!.at.stateRoot,
    });
    const errors: string[] = [];
    for (let tried = 0; tried < this.miners.length; tried++) {
      const miner = this.miners[this.minerAt % this.miners.length]!;
      try {
        const res = submitResponseFromProto(
          await unary(miner, miner.submit, req, { deadline: Date.now() + this.opts.deadlineMs }),
        );
        group.forEach((q, i) => {
          const r = res.results[i];
          if (r === undefined)
            q.reject(
              new ClientError(
                ClientErrorCode.MinerUnavailable,
                'the miner answered fewer results than transactions',
              ),
            );
          else q.resolve(r);
        });
        return;
      } catch (e) {
        const code = (e as ServiceError).code;
        if (code === status.INVALID_ARGUMENT) {
          for (const q of group)
            q.reject(new RpcError(RpcErrorCode.Server, (e as ServiceError).details ?? String(e)));
          return;
        }
        errors.push(`${this.opts.miners[this.minerAt % this.miners.length]}: ${(e as Error).message}`);
        this.minerAt++;
      }
    }
    const err = new ClientError(
      ClientErrorCode.MinerUnavailable,
      `no miner took the submission (${errors.join('; ')})`,
    );
    for (const q of group) q.reject(err);
  }

  /** Transactions accepted by a miner and not yet seen in a block. */
  get pendingCount(): number {
    return this.pending.size;
  }
}

/** A transaction a miner refused as invalid (geth's -32000, with the miner's reason). */
export class MinerRefused extends RpcError {
  constructor(reason: string) {
    super(RpcErrorCode.Server, reason);
    this.name = 'MinerRefused';
  }
}

/** The address a CREATE from `sender` with `nonce` deploys to: keccak(rlp([sender, nonce]))[12:]. */
function createdAddress(sender: Uint8Array, nonce: bigint): Uint8Array {
  const hex = nonce.toString(16);
  const n =
    nonce === 0n ? new Uint8Array(0) : new Uint8Array(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
  return keccak.keccak256(rlpEncode([sender, n])).subarray(12);
}
