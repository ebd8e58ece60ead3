/**
 * A miner (DESIGN §1, §5): executes submitted transactions at once into its pending block, from
 * its top layer (the state root and the top `r` levels of the account trie) plus each
 * submission's node bag, and never reads storage. Bag nodes are only ever used where a stub
 * with exactly their hash is met, so a forged node is never used and a bag built against an
 * older root still serves every part of the tree that has not changed since (witness revision
 * on the live path); what has changed is reported stale, by key, for the client to refetch.
 *
 * Blocks: the pending block is sealed (proof of work at the configured difficulty) into a new
 * head; the block goes to peers with the nodes its execution used, so they re-execute it with
 * no I/O either, and to the storage nodes as per-shard logical updates. Fork choice: heaviest
 * chain (total difficulty, then height, then first seen). A reorg re-queues the transactions
 * the losing branch had and the winning one does not.
 */
import {
  bytesEqual,
  decodeTree,
  encodeTree,
  NodeBag,
  type NodeListener,
  StateTree,
  toHex,
  type VerifiedNodeSource,
} from '@monsoon/dsm-tree';
import {
  type BlockEnv,
  BlockExecutor,
  type ChainRules,
  decodeSignedTx,
  type EngineName,
  type ExecutedBlock,
  ExecutionError,
  ExecutionErrorCode,
  keysAt,
  makeCommon,
  nativeEcrecover,
  orderedTrieRoot,
  recoverSenders,
  type SignedTx,
  type TxOutcome,
  transactionsRoot,
} from '@monsoon/execution';
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import {
  type AccountUpdate,
  type BlockHeader,
  checkPow,
  decodeHeader,
  encodeHeader,
  type Genesis,
  genesisHeader,
  genesisState,
  headerHash,
  type PeerBlock,
  ShardLayout,
  type ShardRoot,
  type ShardUpdate,
  type SubmitRequest,
  type SubmitResponse,
  sealPow,
  type TxResult,
  TxStatus,
} from '@monsoon/protocol';
import { byteKey, detachAll, windowLength } from '@monsoon/util';

export interface MinerOptions {
  /** Retention level r: the top layer keeps the account trie's levels 0 … r−1. */
  retention: number;
  /** 20 bytes: paid the priority fees and the block reward. */
  coinbase: Uint8Array;
  /** Proof-of-work difficulty of the blocks this miner seals (0: none). */
  difficulty: bigint;
  /** Most transactions in one block. */
  maxBlockTransactions: number;
  /** Most nodes (and code blobs) in one submission's bag. */
  maxBagNodes: number;
  /** Execute plain transfers without the EVM (a differential test holds both to one state). */
  fastTransfers: boolean;
  /** Shards the state is cut into, for storage updates. */
  shardCount: 16 | 256;
  /** Most bytes of signed transactions in one block. */
  maxBlockBytes: number;
  /**
   * Who recovers senders (default: this thread, natively). A {@link SenderRecoveryPool} keeps
   * recovery off the thread that executes: submissions are recovered while earlier ones run.
   */
  recovery: SenderRecovery;
  rules: ChainRules;
  /**
   * Blocks kept below the head (with their top layers, transactions, witnesses, receipts):
   * older ones are forgotten, so a long run's memory stays flat. A peer block whose parent is
   * older than this is refused (unknown parent), and SubscribeBlocks replays only this far.
   */
  keepBlocks: number;
  /**
   * Bytes of transactions and witnesses the head chain's kept blocks hold at most: beyond it
   * the oldest go too, down to {@link KEEP_BLOCKS_FLOOR} blocks. A block costs what it carries,
   * so a window counted in blocks alone held as much as the blocks were full, and the miner's
   * memory rose with throughput.
   */
  keepBytes: number;
  /** The EVM engine (default: revm where its addon is built, else @ethereumjs/evm). */
  engine?: EngineName;
  /**
   * A submission that waited longer than this (ms) behind earlier ones is answered stale
   * without being executed: its client pre-executes it again on a newer head and resubmits.
   * Submissions run one at a time, so an overloaded miner's queue would otherwise outgrow its
   * clients' deadline (10 s): every call then timed out, each failing all its transactions,
   * and a soak's load stopped (issue 15).
   */
  maxQueueWaitMs: number;
  /** Milliseconds for queue waits (performance.now unless a test moves time). */
  now: () => number;
}

/**
 * Recovers the senders of a batch of transactions (a {@link SenderRecoveryPool} is one).
 * `claimedKeys`: the public keys (x‖y, 64 bytes a transaction) a client says it recovered; they
 * may make recovery cheaper, never change its answer.
 */
export interface SenderRecovery {
  recoverSenders(
    txs: readonly SignedTx[],
    claimedKeys?: Uint8Array,
  ): Promise<(Uint8Array | ExecutionError)[]>;
}

/** Recovery on the calling thread, natively (keys are not kept for recoveredSenderKey: only clients send them). */
export const inlineRecovery: SenderRecovery = {
  recoverSenders: async (txs, claimedKeys) => recoverSenders(txs, claimedKeys, false),
};

/**
 * A submission made ready to execute: decoded, its bag's nodes hashed, its senders recovered.
 * This is the part of a submission that needs no miner state, so it runs outside the queue.
 */
export interface PreparedSubmission {
  readonly bag: NodeBag;
  readonly prefetchedRoot: Uint8Array;
  readonly items: readonly PreparedTx[];
}

export type PreparedTx =
  | { readonly tx: SignedTx; readonly sender: Uint8Array }
  | { readonly refused: TxResult };

export const defaultMinerOptions: Omit<MinerOptions, 'rules'> = {
  retention: 2,
  coinbase: new Uint8Array(20),
  difficulty: 0n,
  maxBlockTransactions: 4000,
  maxBagNodes: 200_000,
  fastTransfers: true,
  shardCount: 16,
  maxBlockBytes: 8 * 1024 * 1024,
  recovery: inlineRecovery,
  keepBlocks: 128,
  keepBytes: 64 * 1024 * 1024,
  maxQueueWaitMs: 5_000,
  now: () => performance.now(),
};

/**
 * Blocks below the head kept whatever `keepBytes` says (fewer only where `keepBlocks` is
 * smaller): peers' forks, storage catch-ups and block streams reach this far at least.
 */
export const KEEP_BLOCKS_FLOOR = 64;

/** A block this miner holds, with the state after it (its top layer). */
export interface ChainBlock {
  readonly hash: Uint8Array;
  readonly header: BlockHeader;
  /** Pruned to the retention level. */
  readonly state: StateTree;
  /** Total difficulty up to and including this block. */
  readonly td: bigint;
  readonly transactions: readonly Uint8Array[];
  /** The nodes its execution read below the top layer (sent to peers; re-queues use them). */
  readonly witness: readonly Uint8Array[];
  /**
   * One receipt per transaction, encoded: what the header's receipts root commits to, and what
   * SubscribeBlocks sends (encoded once, at the seal or a peer block's check).
   */
  readonly receipts: readonly Uint8Array[];
  /** Undefined for genesis, and once the parent falls out of the kept window (`keepBlocks`). */
  parent: ChainBlock | undefined;
}

/**
 * A held block's header and top layer as bytes: what a restart needs to continue from that
 * block instead of re-executing the chain from genesis (the miner's chain log compaction).
 */
export interface MinerCheckpoint {
  readonly headerRlp: Uint8Array;
  readonly td: bigint;
  /** The account trie as encodeTree writes it: the top `r` levels and the coinbase path, stubs below. */
  readonly accounts: Uint8Array;
  readonly code: readonly Uint8Array[];
}

/** A held block as peers (and the chain log) take it: header, transactions, witness. */
export function peerBlockOf(b: ChainBlock): PeerBlock {
  return { headerRlp: encodeHeader(b.header), transactions: b.transactions, bag: b.witness };
}

/** A block just sealed or adopted: what peers and storage nodes are sent. */
export interface SealedBlock {
  readonly block: ChainBlock;
  readonly peer: PeerBlock;
  /** Every shard's updates (empty ones included) and every shard's root after the block. */
  readonly shards: readonly ShardUpdate[];
  readonly expectedRoots: readonly ShardRoot[];
}

/** Blocks whose changed paths the miner keeps for revising witnesses. */
const RECENT_BLOCKS = 4;

/**
 * One block's changed paths: every node its state root's commit hashed (StateTree.root tells
 * them), kept as that commit wrote them, hashes included. They are indexed by hash the first
 * time they are looked in: the miner looks in them only for a node a submission's bag lacks (a
 * witness to revise). Taking them from the commit, not proving each written key again after
 * it, saves a walk of every changed path and a copy of every node on it at each seal (3-4% of
 * the execution-only pass), and the hashing of them again when first looked in; keeping them as
 * strings until one is asked for saves a copy of each (a block's ~15,000, where a revision
 * takes a few).
 *
 * The index is an open-addressed table of positions, slotted by the hash's first three bytes
 * (keccak outputs: uniform), not a Map: every kept block gets looked in (a lookup that misses
 * the newest goes on to the next), so each block's ~5,800 nodes are indexed, and a Map hashed
 * each 32-char key string and held an on-heap table of them for four blocks.
 */
export class ChangedPaths {
  /** Positions + 1 in `hashes` (0: empty), slotted as `slotOf` says; built on the first lookup. */
  private table: Int32Array | undefined;
  private readonly hashes: string[] = [];
  private readonly encodings: string[] = [];
  /** For StateTree.root: told each node the commit hashes. */
  readonly listen: NodeListener = (hash, enc) => {
    if (this.table !== undefined) throw new Error('ChangedPaths: a node after the first lookup');
    this.hashes.push(hash);
    this.encodings.push(enc);
  };

  /** The encoding (binary string) of the node with this hash (binary string), if the commit made it. */
  get(hash: string): string | undefined {
    const table = this.table ?? this.index();
    const mask = table.length - 1;
    for (let at = slotOf(hash) & mask; ; at = (at + 1) & mask) {
      const i = table[at]!;
      if (i === 0) return undefined;
      if (this.hashes[i - 1] === hash) return this.encodings[i - 1];
    }
  }

  private index(): Int32Array {
    const hashes = this.hashes;
    // At most half full: a miss ends within a probe or two.
    let size = 16;
    while (size < hashes.length * 2) size *= 2;
    const table = new Int32Array(size);
    const mask = size - 1;
    for (let i = 0; i < hashes.length; i++) {
      let at = slotOf(hashes[i]!) & mask;
      while (table[at] !== 0) at = (at + 1) & mask;
      table[at] = i + 1;
    }
    this.table = table;
    return table;
  }
}

/** A slot for a 32-byte hash (binary string): its first three bytes. */
function slotOf(hash: string): number {
  return hash.charCodeAt(0) | (hash.charCodeAt(1) << 8) | (hash.charCodeAt(2) << 16);
}

export interface MinerCounters {
  accepted: number;
  invalid: number;
  stale: number;
  /** Answered stale unexecuted: they waited longer than `maxQueueWaitMs` (not counted in `stale`). */
  overloaded: number;
  /**
   * Answered accepted unexecuted: already in the pending block or in a block of the head's chain
   * (a client resubmitting a call whose answer it never got; counted in `accepted` once only).
   */
  known: number;
  blocks: number;
  peerBlocksAdopted: number;
  peerBlocksRefused: number;
  requeued: number;
  dropped: number;
}

interface Pending {
  executor: BlockExecutor;
  state: StateTree;
  raws: Uint8Array[];
  bytes: number;
  /** Its transactions' hashes as {@link txKey}s. */
  hashes: Set<string>;
}

export class Miner {
  readonly counters: MinerCounters = {
    accepted: 0,
    invalid: 0,
    stale: 0,
    overloaded: 0,
    known: 0,
    blocks: 0,
    peerBlocksAdopted: 0,
    peerBlocksRefused: 0,
    requeued: 0,
    dropped: 0,
  };
  private readonly blocks = new Map<string, ChainBlock>();
  /**
   * The held blocks each transaction (by {@link txKey}) is in, and each block's transaction keys:
   * a resubmitted transaction already on the head's chain is answered accepted, not executed
   * again (its nonce would refuse it as invalid, and its client would then reuse the nonce).
   */
  private readonly txBlocks = new Map<string, ChainBlock[]>();
  private readonly txKeys = new WeakMap<ChainBlock, readonly string[]>();
  /** Each held block's transaction and witness bytes (what `keepBytes` counts). */
  private readonly sizes = new WeakMap<ChainBlock, number>();
  private headBlock: ChainBlock;
  private pending!: Pending;
  /** Where stubs resolve from right now: the bag of the submission (or peer block) executing. */
  private source: NodeBag | undefined;
  /** The paths the last RECENT_BLOCKS blocks changed, newest first (see rememberChanges). */
  private recent: ChangedPaths[] = [];
  /** Every node the resolver served while the pending block executed: the block's witness. */
  private served = new NodeBag();
  private readonly layout: ShardLayout;
  private readonly common;
  /** What every state's stubs resolve from (the executing bag, see resolve). */
  private nodeSource!: VerifiedNodeSource;
  /**
   * Hears every block this miner seals: on `seal()` and when a submission finds the pending
   * block full (count, bytes or gas) and seals it to make room. A node sends them on from here.
   */
  onSealed: ((sealed: SealedBlock) => void) | undefined;
  /** Submissions run one at a time: the pending block is one sequence of states. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly opts: MinerOptions,
    genesis: ChainBlock,
    private readonly keccak: Keccak,
  ) {
    this.headBlock = genesis;
    this.blocks.set(toHex(genesis.hash), genesis);
    this.layout = new ShardLayout(opts.shardCount);
    this.common = makeCommon(opts.rules, { ecrecover: nativeEcrecover, keccak256: keccak.keccak256 });
  }

  /**
   * A miner at the genesis block: the whole genesis state is built once, then pruned to r. Or,
   * given `from` (a compacted chain log's checkpoint, {@link readChainCheckpoint}), a miner at
   * that block, its top layer checked against its header: the genesis' state is never built, so
   * a restart costs the checkpoint and the log after it, not the genesis' size.
   */
  static async create(
    genesis: Genesis,
    opts: Partial<MinerOptions> & { rules: ChainRules },
    keccak: Keccak = defaultKeccak,
    from?: MinerCheckpoint,
  ): Promise<Miner> {
    const o: MinerOptions = { ...defaultMinerOptions, ...opts };
    if (o.difficulty < o.rules.minDifficulty) {
      throw new ExecutionError(
        ExecutionErrorCode.BadBlock,
        `difficulty ${o.difficulty}: the chain's rule asks at least ${o.rules.minDifficulty} of every block (genesis config.monsoon.minDifficulty)`,
        { difficulty: o.difficulty, minDifficulty: o.rules.minDifficulty },
      );
    }
    let self: Miner | undefined;
    // Stubs resolve from the bag of what is executing; bag nodes are hashed once, on arrival.
    const source: VerifiedNodeSource = { getBin: (h) => self?.resolve(h) };
    if (from !== undefined) {
      self = new Miner(o, Miner.checkpointBlock(from, keccak, source), keccak);
      self.nodeSource = source;
      await self.startPending();
      return self;
    }
    const st = genesisState(genesis, { hash: keccak, source });
    const header = genesisHeader(genesis, st.root());
    const g: ChainBlock = {
      hash: headerHash(header, keccak),
      header,
      state: st,
      td: header.difficulty,
      transactions: [],
      witness: [],
      receipts: [],
      parent: undefined,
    };
    self = new Miner(o, g, keccak);
    self.nodeSource = source;
    self.pruneKeepingCoinbase(st);
    await self.startPending();
    return self;
  }

  /** A checkpoint's block, its top layer checked against its header's state root. */
  private static checkpointBlock(
    cp: MinerCheckpoint,
    keccak: Keccak,
    source: VerifiedNodeSource,
  ): ChainBlock {
    const header = decodeHeader(cp.headerRlp);
    const opts = { hash: keccak, source };
    const state = StateTree.restore(decodeTree(cp.accounts, opts), { storage: [], code: cp.code }, opts);
    if (!bytesEqual(state.root(), header.stateRoot)) {
      throw new ExecutionError(
        ExecutionErrorCode.BadBlock,
        `checkpoint of block #${header.number}: its top layer has root ${toHex(state.root())}, its header ${toHex(header.stateRoot)}`,
        { number: header.number },
      );
    }
    return {
      hash: headerHash(header, keccak),
      header,
      state,
      td: cp.td,
      transactions: [],
      witness: [],
      receipts: [],
      parent: undefined,
    };
  }

  get head(): ChainBlock {
    return this.headBlock;
  }

  /** `b`'s header and top layer, to restart from (see {@link resetTo}). */
  checkpointOf(b: ChainBlock): MinerCheckpoint {
    return {
      headerRlp: encodeHeader(b.header),
      td: b.td,
      accounts: encodeTree(b.state.accounts),
      code: b.state.exportParts().code,
    };
  }

  /**
   * The blocks held, parents before children (by number): with {@link oldestHeld}'s checkpoint,
   * what a compacted chain log keeps.
   */
  heldBlocks(): ChainBlock[] {
    return [...this.blocks.values()].sort((a, b) => (a.header.number < b.header.number ? -1 : 1));
  }

  /** The oldest block of the head's chain still held (genesis while the window reaches it). */
  get oldestHeld(): ChainBlock {
    let b = this.headBlock;
    while (b.parent !== undefined) b = b.parent;
    return b;
  }

  /**
   * Starts again from a checkpoint (a restart on a compacted chain log): every held block and
   * the pending block are dropped, and the checkpoint's block, its top layer checked against
   * its header's state root, becomes the head the log's later blocks re-execute on.
   */
  resetTo(cp: MinerCheckpoint): Promise<void> {
    return this.serial(async () => {
      const b = Miner.checkpointBlock(cp, this.keccak, this.nodeSource);
      this.blocks.clear();
      this.txBlocks.clear();
      this.recent = [];
      this.headBlock = b;
      this.blocks.set(toHex(b.hash), b);
      await this.startPending();
    });
  }

  block(hash: Uint8Array): ChainBlock | undefined {
    return this.blocks.get(toHex(hash));
  }

  /** The environment (number, timestamp, coinbase, gas limit) the pending block executes in. */
  get pendingEnv(): BlockEnv {
    return this.pending.executor.env;
  }

  /** Transactions waiting in the pending block. */
  get pendingCount(): number {
    return this.pending.raws.length;
  }

  /** The node with hash `h` (latin1) from the current bag, noted in the block's witness. */
  private resolve(h: string): Uint8Array | undefined {
    if (this.source === undefined) return undefined;
    const n = this.served.takeFrom(this.source, h);
    if (n !== undefined) return n;
    for (const r of this.recent) {
      const enc = r.get(h);
      if (enc === undefined) continue;
      // Hashed by the commit that wrote it (ChangedPaths): the bag's promise holds unhashed, and
      // `h` is already the bag's key.
      const node = Buffer.from(enc, 'latin1');
      this.served.addHeld(h, node);
      return node;
    }
    return undefined;
  }

  /**
   * Keeps the paths a block changed (its accounts, and the slots it wrote, as they are after
   * it) for the next few blocks. Pruning back to r forgets them, yet they are exactly what a
   * client's witness from a root a block or two old has wrong: with them the miner revises such
   * a witness itself instead of answering stale (hot accounts change in nearly every block).
   */
  private rememberChanges(changed: ChangedPaths): void {
    this.recent.unshift(changed);
    if (this.recent.length > RECENT_BLOCKS) this.recent.pop();
  }

  private serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f, f);
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Prunes a state to the top layer but keeps the path to this miner's coinbase account: every
   * transaction pays it, so no client's witness for it could ever be current.
   */
  private pruneKeepingCoinbase(state: StateTree): void {
    const proof = state.proveAccount(this.opts.coinbase);
    state.prune(this.opts.retention);
    state.accounts.fill(NodeBag.fromProofs([proof], { hash: this.keccak }), [
      this.keccak.keccak256(this.opts.coinbase),
    ]);
  }

  private async startPending(): Promise<void> {
    const parent = this.headBlock;
    const state = parent.state.snapshot();
    const executor = await BlockExecutor.create(
      state,
      {
        number: parent.header.number + 1n,
        timestamp: nextTimestamp(parent.header.timestamp),
        coinbase: this.opts.coinbase,
        gasLimit: this.opts.rules.gasLimit,
      },
      this.opts.rules,
      {
        common: this.common,
        fastTransfers: this.opts.fastTransfers,
        recordAccesses: false,
        encodeReceipts: true,
        ...(this.opts.engine !== undefined ? { engine: this.opts.engine } : {}),
      },
    );
    this.pending = { executor, state, raws: [], bytes: 0, hashes: new Set() };
    // Peers have the parent's top layer, not this miner's coinbase path: it goes in the witness.
    this.served = new NodeBag({ hash: this.keccak });
    this.served.addNodes(parent.state.proveAccount(this.opts.coinbase));
  }

  // ------------------------------------------------------------ submissions

  /**
   * Executes each transaction into the pending block, in order, against the top layer plus the
   * bag. One result per transaction: accepted (it is in the pending block), invalid (it never
   * will be, as it stands), or stale (its witness no longer covers it: refetch `staleKeys`).
   */
  async submit(req: SubmitRequest): Promise<SubmitResponse> {
    return this.submitPrepared(await this.prepare(req));
  }

  /**
   * Decodes a submission, checks its bag (every node hashed: it is only ever used where a stub
   * with that hash is met) and recovers its senders. Needs no miner state: runs concurrently
   * with the execution of earlier submissions.
   */
  async prepare(req: SubmitRequest): Promise<PreparedSubmission> {
    if (req.bag.length > this.opts.maxBagNodes) {
      throw new ExecutionError(
        ExecutionErrorCode.BadBag,
        `bag of ${req.bag.length} nodes is over the limit of ${this.opts.maxBagNodes}`,
      );
    }
    const bag = new NodeBag({ hash: this.keccak });
    bag.addNodes(req.bag);
    const items: PreparedTx[] = new Array(req.transactions.length);
    const txs: SignedTx[] = [];
    const at: number[] = [];
    req.transactions.forEach((raw, i) => {
      try {
        txs.push(decodeSignedTx(raw, this.common));
        at.push(i);
      } catch (e) {
        items[i] = { refused: result(this.keccak.keccak256(raw), TxStatus.Invalid, (e as Error).message) };
      }
    });
    const senders = await this.opts.recovery.recoverSenders(txs, claimedKeysOf(req, at));
    senders.forEach((sender, k) => {
      const tx = txs[k]!;
      const i = at[k]!;
      items[i] =
        sender instanceof Error
          ? { refused: result(tx.hash, TxStatus.Invalid, sender.message) }
          : { tx, sender };
    });
    return { bag, prefetchedRoot: req.prefetchedRoot, items };
  }

  /** Executes a prepared submission into the pending block, in order: one result per transaction. */
  submitPrepared(p: PreparedSubmission): Promise<SubmitResponse> {
    const queuedAt = this.opts.now();
    return this.serial(async () => {
      const waited = this.opts.now() - queuedAt;
      if (waited > this.opts.maxQueueWaitMs) return this.overloaded(p, waited);
      const results: TxResult[] = [];
      const items = p.items;
      let i = 0;
      while (i < items.length) {
        const item = items[i]!;
        if ('refused' in item) {
          this.counters.invalid++;
          results.push(item.refused);
          i++;
          continue;
        }
        const run = this.batchFrom(items, i);
        if (run.length < 2) {
          results.push(await this.include(item.tx, item.sender, p.bag, p.prefetchedRoot));
          i++;
          continue;
        }
        // One executor batch (revm runs them in one call): the same outcomes as one by one.
        this.source = p.bag;
        try {
          const outcomes = await this.pending.executor.executeBatch(run);
          for (const [k, o] of outcomes.entries())
            results.push(this.settle(run[k]!.tx, o, p.prefetchedRoot, run[k]!.key));
        } finally {
          this.source = undefined;
        }
        i += run.length;
      }
      return { results };
    });
  }

  /**
   * The items from `i` on that can run as one batch: prepared, new to the pending block and to
   * each other, and all fitting in it (count, bytes, and their gas limits summed), so none
   * would have made include() seal the block first.
   */
  private batchFrom(
    items: PreparedSubmission['items'],
    i: number,
  ): { tx: SignedTx; sender: Uint8Array; key: string }[] {
    const p = this.pending;
    const run: { tx: SignedTx; sender: Uint8Array; key: string }[] = [];
    const seen = new Set<string>();
    let bytes = p.bytes;
    let gas = p.executor.blockGasUsed;
    for (let j = i; j < items.length; j++) {
      const item = items[j]!;
      if ('refused' in item) break;
      const k = txKey(item.tx.hash);
      if (p.hashes.has(k) || seen.has(k) || this.txBlocks.has(k)) break;
      bytes += item.tx.raw.length;
      gas += item.tx.gasLimit;
      if (
        p.raws.length + run.length + 1 > this.opts.maxBlockTransactions ||
        bytes > this.opts.maxBlockBytes ||
        gas > p.executor.env.gasLimit
      )
        break;
      seen.add(k);
      run.push({ tx: item.tx, sender: item.sender, key: k });
    }
    return run;
  }

  /** Every transaction of `p` answered stale, unexecuted: it waited `waited` ms for its turn. */
  private overloaded(p: PreparedSubmission, waited: number): SubmitResponse {
    const reason = `waited ${Math.round(waited)} ms behind earlier submissions (over ${this.opts.maxQueueWaitMs}): not executed, submit it again`;
    return {
      results: p.items.map((item) => {
        if ('refused' in item) {
          this.counters.invalid++;
          return item.refused;
        }
        this.counters.overloaded++;
        return { txHash: item.tx.hash, status: TxStatus.Stale, reason, staleKeys: [] };
      }),
    };
  }

  private async include(
    tx: SignedTx,
    sender: Uint8Array,
    bag: NodeBag,
    prefetchedRoot: Uint8Array,
  ): Promise<TxResult> {
    const k = txKey(tx.hash);
    if (this.pending.hashes.has(k) || this.onHeadChain(k)) {
      this.counters.known++;
      return result(tx.hash, TxStatus.Accepted, '');
    }
    if (this.blockFull(tx)) await this.sealNow();
    this.source = bag;
    try {
      return this.settle(tx, await this.pending.executor.execute(tx, sender), prefetchedRoot, k);
    } finally {
      this.source = undefined;
    }
  }

  /**
   * The pending block takes an executed transaction's outcome: its result for the submitter.
   * `key`: its {@link txKey} (the pending block's index), made once per transaction by the caller.
   */
  private settle(tx: SignedTx, o: TxOutcome, prefetchedRoot: Uint8Array, key: string): TxResult {
    const hash = tx.hash;
    if (o.status === 'included') {
      this.pending.raws.push(tx.raw);
      this.pending.bytes += tx.raw.length;
      this.pending.hashes.add(key);
      this.counters.accepted++;
      return result(hash, TxStatus.Accepted, '');
    }
    if (o.status === 'missing' && !bytesEqual(prefetchedRoot, this.headBlock.header.stateRoot)) {
      this.counters.stale++;
      const address = o.error.meta.address as Uint8Array | undefined;
      const slot = o.error.meta.slot as Uint8Array | undefined;
      const keys = address === undefined ? [] : [this.keccak.keccak256(address)];
      if (slot !== undefined) keys.push(this.keccak.keccak256(slot));
      return { txHash: hash, status: TxStatus.Stale, reason: o.error.message, staleKeys: keys };
    }
    this.counters.invalid++;
    return result(hash, TxStatus.Invalid, o.error.message);
  }

  /** Whether `tx` must go in the next block: this one is at its count, bytes or gas limit. */
  private blockFull(tx: SignedTx): boolean {
    const p = this.pending;
    if (p.raws.length === 0) return false;
    return (
      p.raws.length >= this.opts.maxBlockTransactions ||
      p.bytes + tx.raw.length > this.opts.maxBlockBytes ||
      p.executor.blockGasUsed + tx.gasLimit > p.executor.env.gasLimit
    );
  }

  // ------------------------------------------------------------ blocks

  /** Seals the pending block (even an empty one) into the new head. */
  seal(): Promise<SealedBlock> {
    return this.serial(() => this.sealNow());
  }

  private async sealNow(): Promise<SealedBlock> {
    const p = this.pending;
    const parent = this.headBlock;
    const changed = new ChangedPaths();
    const done = await p.executor.finish(changed.listen);
    const receipts = done.encodedReceipts!;
    const env = p.executor.env;
    let header: BlockHeader = {
      parentHash: parent.hash,
      miner: this.opts.coinbase,
      stateRoot: done.stateRoot,
      transactionsRoot: transactionsRoot(p.raws),
      receiptsRoot: orderedTrieRoot(receipts),
      difficulty: this.opts.difficulty,
      number: env.number,
      gasLimit: env.gasLimit,
      gasUsed: done.gasUsed,
      timestamp: env.timestamp,
      extraData: new Uint8Array(0),
      nonce: new Uint8Array(8),
    };
    if (header.difficulty > 0n) header = sealPow(header, { keccak: this.keccak })!;
    const sealed = this.adopt(
      header,
      p.state,
      p.raws,
      [...p.hashes],
      done,
      receipts,
      this.served.values(),
      changed,
    );
    this.counters.blocks++;
    await this.startPending();
    this.onSealed?.(sealed);
    return sealed;
  }

  private adopt(
    header: BlockHeader,
    state: StateTree,
    raws: Uint8Array[],
    txKeys: readonly string[],
    done: ExecutedBlock,
    receipts: readonly Uint8Array[],
    witness: Uint8Array[],
    changed: ChangedPaths,
  ): SealedBlock {
    const parent = this.blocks.get(toHex(header.parentHash))!;
    const expectedRoots = this.layout.all().map((shard) => ({
      shard,
      root: state.accounts.refAt(this.layout.path(shard)) ?? new Uint8Array(0),
    }));
    this.rememberChanges(changed);
    this.pruneKeepingCoinbase(state);
    // Transactions and bag nodes are views into the messages they came in (a client's whole
    // submission, bag included): a block kept for `keepBlocks` must not keep those alive.
    raws = detachAll(raws);
    witness = detachAll(witness);
    const block: ChainBlock = {
      hash: headerHash(header, this.keccak),
      header,
      state,
      td: parent.td + header.difficulty,
      transactions: raws,
      witness,
      receipts,
      parent,
    };
    this.blocks.set(toHex(block.hash), block);
    this.txKeys.set(block, txKeys);
    let size = 0;
    for (const x of raws) size += x.length;
    for (const x of witness) size += x.length;
    this.sizes.set(block, size);
    for (const k of txKeys) {
      const list = this.txBlocks.get(k);
      if (list === undefined) this.txBlocks.set(k, [block]);
      else list.push(block);
    }
    if (heavier(block, this.headBlock)) {
      this.headBlock = block;
      this.forgetOldBlocks();
    }
    return {
      block,
      peer: { headerRlp: encodeHeader(header), transactions: raws, bag: witness },
      shards: this.shardUpdates(done.updates, done.updateKeys),
      expectedRoots,
    };
  }

  /** Hears of the head chain's blocks as they are forgotten, oldest first (the node's header archive). */
  onForgotten: ((blocks: readonly ChainBlock[]) => void) | undefined;

  /**
   * Forgets the blocks more than `keepBlocks` below the head (or below where the head chain's
   * blocks hold `keepBytes`, KEEP_BLOCKS_FLOOR blocks kept), and the parent links into them, so
   * nothing (not even a chain of parents) keeps them alive.
   */
  private forgetOldBlocks(): void {
    // The walk stops one block past the window (windowLength reads the weight that overflows it):
    // that block, when it is there, is the newest of the head chain's forgotten ones.
    let past: ChainBlock | undefined;
    const kept = windowLength(
      this.headChainSizes((b) => (past = b)),
      {
        most: this.opts.keepBlocks + 1,
        cap: this.opts.keepBytes,
        floor: KEEP_BLOCKS_FLOOR,
      },
    );
    const floor = this.headBlock.header.number - BigInt(kept - 1);
    if (floor <= 0n) return;
    if (this.onForgotten !== undefined && past !== undefined && past.header.number < floor) {
      // Links into blocks forgotten before were cut, so its parents are the newly forgotten ones.
      const canonical: ChainBlock[] = [];
      for (let b: ChainBlock | undefined = past; b !== undefined; b = b.parent) canonical.push(b);
      this.onForgotten(canonical.reverse());
    }
    for (const [k, b] of this.blocks) {
      if (b.header.number < floor) {
        this.blocks.delete(k);
        this.unindex(b);
      } else if (b.parent !== undefined && b.parent.header.number < floor) b.parent = undefined;
    }
  }

  /** What each block held on the head's chain costs (`keepBytes`), the head first. */
  private *headChainSizes(walked?: (b: ChainBlock) => void): Generator<number> {
    for (let b: ChainBlock | undefined = this.headBlock; b !== undefined; b = b.parent) {
      walked?.(b);
      yield this.sizes.get(b) ?? 0;
    }
  }

  /** Drops a forgotten block from the transaction index. */
  private unindex(b: ChainBlock): void {
    for (const k of this.txKeys.get(b) ?? []) {
      const list = this.txBlocks.get(k)?.filter((x) => x !== b);
      if (list === undefined || list.length === 0) this.txBlocks.delete(k);
      else this.txBlocks.set(k, list);
    }
  }

  /** Whether the transaction with {@link txKey} `k` is in a held block of the head's chain. */
  private onHeadChain(k: string): boolean {
    for (const b of this.txBlocks.get(k) ?? []) {
      let at: ChainBlock | undefined = this.headBlock;
      while (at !== undefined && at.header.number > b.header.number) at = at.parent;
      if (at === b) return true;
    }
    return false;
  }

  /** Transactions indexed by the blocks that hold them (bounded by the window, like `blockCount`). */
  get indexedTransactions(): number {
    return this.txBlocks.size;
  }

  /** Blocks held (the head's window, forks included). */
  get blockCount(): number {
    return this.blocks.size;
  }

  private shardUpdates(updates: readonly AccountUpdate[], keys: readonly Uint8Array[]): ShardUpdate[] {
    // Kept for storage catch-ups: as plain updates over one buffer of their own, since the
    // execution's are views into transactions and bags (whole client submissions) and carry
    // its account objects.
    const bytes: Uint8Array[] = [];
    for (const u of updates) {
      bytes.push(u.address);
      if (u.deleted) continue;
      if (u.code !== undefined) bytes.push(u.code);
      for (const w of u.storage) bytes.push(w.slot, w.value);
    }
    const copies = detachAll(bytes);
    let at = 0;
    const next = () => copies[at++]!;
    const by = new Map<number, AccountUpdate[]>();
    for (let i = 0; i < updates.length; i++) {
      const o = updates[i]!;
      const address = next();
      const u: AccountUpdate = o.deleted
        ? { deleted: true, address }
        : {
            deleted: false,
            address,
            nonce: o.nonce,
            balance: o.balance,
            code: o.code === undefined ? undefined : next(),
            clearStorage: o.clearStorage,
            storage: o.storage.map(() => ({ slot: next(), value: next() })),
          };
      const shard = this.layout.shardOfKey(keys[i]!);
      const list = by.get(shard);
      if (list === undefined) by.set(shard, [u]);
      else list.push(u);
    }
    return this.layout.all().map((shard) => ({ shard, accounts: by.get(shard) ?? [] }));
  }

  /**
   * A block from a peer: re-executed from its parent's top layer plus the block's bag; adopted
   * (and made head if heavier) only when every transaction is included and the header's roots,
   * gas and proof of work all match. Throws ExecutionError BAD_BLOCK saying what did not.
   */
  receiveBlock(pb: PeerBlock): Promise<SealedBlock | undefined> {
    return this.serial(async () => {
      const header = decodeHeader(pb.headerRlp);
      const hash = headerHash(header, this.keccak);
      if (this.blocks.has(toHex(hash))) return undefined;
      const bad = (why: string): never => {
        this.counters.peerBlocksRefused++;
        throw new ExecutionError(
          ExecutionErrorCode.BadBlock,
          `block ${toHex(hash)} (#${header.number}): ${why}`,
          { hash },
        );
      };
      const parent = this.blocks.get(toHex(header.parentHash));
      if (parent === undefined) return bad(`unknown parent ${toHex(header.parentHash)}`);
      if (header.number !== parent.header.number + 1n)
        bad(`number ${header.number} after parent #${parent.header.number}`);
      if (header.difficulty < this.opts.rules.minDifficulty)
        bad(`difficulty ${header.difficulty} below the chain's minimum ${this.opts.rules.minDifficulty}`);
      if (!checkPow(header, this.keccak)) bad('proof of work does not meet its difficulty');
      if (header.gasLimit > this.opts.rules.gasLimit)
        bad(`gas limit ${header.gasLimit} over ${this.opts.rules.gasLimit}`);
      const state = parent.state.snapshot();
      const executor = await BlockExecutor.create(
        state,
        {
          number: header.number,
          timestamp: header.timestamp,
          coinbase: header.miner,
          gasLimit: header.gasLimit,
        },
        this.opts.rules,
        {
          common: this.common,
          fastTransfers: this.opts.fastTransfers,
          recordAccesses: false,
          encodeReceipts: true,
          ...(this.opts.engine !== undefined ? { engine: this.opts.engine } : {}),
        },
      );
      const bag = new NodeBag({ hash: this.keccak });
      bag.addNodes(pb.bag);
      const txs = pb.transactions.map((raw, i) => {
        try {
          return decodeSignedTx(raw, this.common);
        } catch (e) {
          return bad(`transaction ${i}: ${(e as Error).message}`);
        }
      });
      const senders = await this.opts.recovery.recoverSenders(txs);
      const saved = this.source;
      this.source = bag;
      let done: Awaited<ReturnType<BlockExecutor['finish']>>;
      const changed = new ChangedPaths();
      try {
        const items = txs.map((tx, i) => {
          const s = senders[i]!;
          return s instanceof Error ? bad(`transaction ${i}: ${s.message}`) : { tx, sender: s };
        });
        const outcomes = await executor.executeBatch(items);
        for (const [i, o] of outcomes.entries())
          if (o.status !== 'included') bad(`transaction ${i} not executable: ${o.error.message}`);
        // The block reward is written in finish(): the peer's coinbase path is in the bag too.
        done = await executor.finish(changed.listen);
      } finally {
        this.source = saved;
      }
      if (!bytesEqual(done.stateRoot, header.stateRoot))
        bad(`state root ${toHex(header.stateRoot)}, re-execution gives ${toHex(done.stateRoot)}`);
      if (done.gasUsed !== header.gasUsed)
        bad(`gas used ${header.gasUsed}, re-execution gives ${done.gasUsed}`);
      if (!bytesEqual(transactionsRoot(pb.transactions), header.transactionsRoot))
        bad('transactions root does not match its transactions');
      const receipts = done.encodedReceipts!;
      if (!bytesEqual(orderedTrieRoot(receipts), header.receiptsRoot))
        bad('receipts root does not match re-execution');
      const oldHead = this.headBlock;
      const sealed = this.adopt(
        header,
        state,
        [...pb.transactions],
        txs.map((tx) => txKey(tx.hash)),
        done,
        receipts,
        [...pb.bag],
        changed,
      );
      this.counters.peerBlocksAdopted++;
      if (this.headBlock !== oldHead) await this.reorg(oldHead);
      return sealed;
    });
  }

  /** After the head moved to another branch: a fresh pending block; what only the old branch had is re-submitted. */
  private async reorg(oldHead: ChainBlock): Promise<void> {
    const orphaned = new Map<string, Uint8Array>();
    for (const raw of this.pending.raws) orphaned.set(txKey(this.keccak.keccak256(raw)), raw);
    // Content-addressed, so the old branch's witnesses are safe to offer: only nodes whose
    // hashes the new head's tree still has are ever used.
    const bag = new NodeBag({ hash: this.keccak });
    bag.addNodes(this.served.values());
    const onNew = new Set<string>();
    let a: ChainBlock | undefined = oldHead;
    let b: ChainBlock | undefined = this.headBlock;
    while (a !== undefined && b !== undefined && !bytesEqual(a.hash, b.hash)) {
      if (a.header.number >= b.header.number) {
        for (const raw of a.transactions) orphaned.set(txKey(this.keccak.keccak256(raw)), raw);
        bag.addNodes(a.witness);
        a = a.parent;
      } else {
        for (const raw of b.transactions) onNew.add(txKey(this.keccak.keccak256(raw)));
        b = b.parent;
      }
    }
    await this.startPending();
    // What the new state no longer lets those witnesses cover is dropped (counted); its client
    // sees no receipt and resubmits.
    for (const [h, raw] of orphaned) {
      if (onNew.has(h)) continue;
      const tx = decodeSignedTx(raw, this.common);
      const sender = recoverSenders([tx])[0]!;
      if (sender instanceof Error) continue;
      const r = await this.include(tx, sender, bag, this.headBlock.header.stateRoot);
      if (r.status === TxStatus.Accepted) this.counters.requeued++;
      else this.counters.dropped++;
    }
  }
}

/**
 * A transaction's key in the miner's indexes (the pending block's, the held blocks'): its 32-byte
 * hash as a binary string. Not hex: one is made and looked up per transaction submitted, and a
 * 66-char hex string cost a conversion and twice the hashing of a 32-char one.
 */
function txKey(hash: Uint8Array): string {
  return byteKey(hash);
}

/**
 * The keys a submission claims for its decoded transactions (`at[k]` is transaction k's index in
 * the request), 64 bytes each, packed; undefined where it claims none.
 */
function claimedKeysOf(req: SubmitRequest, at: readonly number[]): Uint8Array | undefined {
  const keys = req.senderKeys;
  return keys === undefined || at.length === req.transactions.length ? keys : keysAt(keys, at);
}

function result(txHash: Uint8Array, status: TxStatus, reason: string): TxResult {
  return { txHash, status, reason, staleKeys: [] };
}

/** Heavier: more total difficulty, then higher; a tie keeps the block seen first. */
function heavier(a: ChainBlock, b: ChainBlock): boolean {
  return a.td > b.td || (a.td === b.td && a.header.number > b.header.number);
}

/** A child's timestamp: now, but always after its parent's. */
function nextTimestamp(parent: bigint): bigint {
  const now = BigInt(Math.floor(Date.now() / 1000));
  return now > parent ? now : parent + 1n;
}
