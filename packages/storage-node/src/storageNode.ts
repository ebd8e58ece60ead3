/**
 * The storage node's core, without the network: it holds the versions of its shards, applies
 * blocks (checks, then the write-ahead log, then the new version), and answers reads with
 * proofs at any version it holds. The gRPC server is a thin edge over this.
 */

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bytesEqual, DsmError, type DsmTree, decodeAccount, toHex } from '@monsoon/dsm-tree';
import { type Logger, silentLogger } from '@monsoon/edge';
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import {
  type ApplyBlockRequest,
  type ApplyBlockResponse,
  applyBlockRequestFromBytes,
  applyBlockRequestToProto,
  type BatchGetRequest,
  type BatchGetResponse,
  type BlockHeader,
  type BlockRef,
  checkPow,
  DEFAULT_MIN_DIFFICULTY,
  decodeHeader,
  encodeHeader,
  type Genesis,
  type GetAccountRequest,
  type GetAccountResponse,
  type GetNodesRequest,
  type GetNodesResponse,
  type GetStorageRequest,
  type GetStorageResponse,
  genesisHeader,
  headerHash,
  minDifficultyOf,
  type ShardCount,
  ShardLayout,
  type ShardRoot,
  storagePb,
  withPackedBag,
} from '@monsoon/protocol';
import { CheckpointStore } from './checkpointStore.js';
import type { NodeFaults } from './nodeStore/nodeFaults.js';
import type { FreshNode, VersionObserver } from './nodeStore/versionObserver.js';
import { ShardState } from './shardState.js';
import { decodeCheckpoint, encodeCheckpoint } from './stateCheckpoint.js';
import { StorageError, StorageErrorCode } from './storageError.js';
import { type GenesisAccounts, type GenesisSink, streamGenesis } from './streamGenesis.js';
import { defaultVersionStoreOptions, type Version, VersionStore } from './versionStore.js';
import { type FsyncPolicy, WriteAheadLog } from './writeAheadLog.js';

/**
 * Default {@link DurabilityOptions.checkpointDepth}: the depth past which forks are not expected
 * (a client's late start anchors as deep).
 */
export const DEFAULT_CHECKPOINT_DEPTH = 16;

/** Where and how a durable node keeps its log. */
export interface DurabilityOptions {
  /** Data directory: `wal/` (the log) and `node.json` (what the data belongs to). */
  dataDir: string;
  /** fsync policy of the log; default 'always' (an acknowledged block is on disk). */
  fsync?: FsyncPolicy;
  /** A checkpoint every this many blocks (by number); 0 for never. Default 1024. */
  checkpointEvery?: number;
  /**
   * How far below the head a block is checkpointed, and how far below a peer's head a joining
   * replica takes its checkpoint. A restart lands on its checkpoint's chain for good, so a
   * checkpoint of a block a reorg later abandons strands the node (the fault campaign saw one at a
   * depth of 2). Default {@link DEFAULT_CHECKPOINT_DEPTH}.
   */
  checkpointDepth?: number;
}

/** A digest of a genesis' content, to pin a data directory to it without building its state. */
function genesisFingerprint(g: Genesis, keccak: Keccak): string {
  const h = toHex;
  const canon = JSON.stringify({
    chain: [g.chainId, g.difficulty, g.gasLimit, g.timestamp].map(String),
    header: [h(g.extraData), h(g.coinbase), h(g.nonce)],
    alloc: g.alloc.map((a) => [
      h(a.address),
      String(a.nonce),
      String(a.balance),
      h(a.code),
      a.storage.map(([k, v]) => [h(k), h(v)]),
    ]),
  });
  return h(keccak.keccak256(Buffer.from(canon, 'utf8')));
}

/** The log record of a block: its ApplyBlockRequest as protobuf. */
function encodeRecord(req: ApplyBlockRequest, shardCount: number): Uint8Array {
  return storagePb.ApplyBlockRequest.encode(applyBlockRequestToProto(req, { shardCount })).finish();
}

function decodeRecord(payload: Uint8Array, shardCount: number): ApplyBlockRequest {
  return applyBlockRequestFromBytes(payload, { shardCount });
}

export interface StorageNodeOptions {
  /** 16 or 256. */
  shardCount: ShardCount;
  /** The shards this node holds. */
  shards: readonly number[];
  /** Blocks of history kept on the head's chain. */
  window: number;
  /** Blocks a losing fork is kept below the head. */
  forkWindow: number;
  /** Account updates the head chain's versions hold at most (VersionStoreOptions.maxUpdates). */
  maxVersionUpdates: number;
}

export const defaultStorageNodeOptions: StorageNodeOptions = {
  shardCount: 16,
  shards: Array.from({ length: 16 }, (_, i) => i),
  window: 256,
  forkWindow: 64,
  maxVersionUpdates: defaultVersionStoreOptions.maxUpdates,
};

export interface StorageNodeModules {
  logger?: Logger;
  hash?: Keccak;
  /**
   * Called with each block that passed every check, before its version exists; the block is
   * acknowledged only when this resolves (the write-ahead log goes here).
   */
  beforeInstall?: (req: ApplyBlockRequest) => Promise<void>;
  /**
   * Node stores that follow the versions (a tiered backend, a one-sided export): told of the
   * starting state, of each block's new nodes before it is acknowledged, and of pruned versions.
   */
  observers?: readonly VersionObserver[];
  /**
   * Where the trees' cold nodes fault in from (the tiered backend, which is also one of the
   * observers): reads and blocks run through it. Absent: every node is in memory.
   */
  faults?: NodeFaults;
  /**
   * Where a genesis larger than memory streams its nodes (the tiered backend): `open` then
   * builds the genesis subtree by subtree into it and keeps only the levels above (see
   * streamGenesis), instead of building the whole trie in memory.
   */
  genesisSink?: GenesisSink;
}

export class StorageNode {
  readonly layout: ShardLayout;
  readonly versions: VersionStore;
  private readonly keccak: Keccak;
  /** Hashed account and slot keys of batches being read (see batchKeys). */
  private readonly hashedBatches = new WeakMap<BatchGetRequest, BatchKeys>();
  private readonly log: Logger;
  private readonly beforeInstall: ((req: ApplyBlockRequest) => Promise<void>) | undefined;
  /** Blocks are applied one at a time, in arrival order. */
  private queue: Promise<unknown> = Promise.resolve();
  private wal: WriteAheadLog | undefined;
  private checkpoints: CheckpointStore | undefined;
  private checkpointEvery = 0;
  private settledDepth = BigInt(DEFAULT_CHECKPOINT_DEPTH);
  /** The checkpoint being written, if any (one at a time). */
  private checkpointing: Promise<void> = Promise.resolve();
  /** Set while the log is replayed: its blocks are already in it. */
  private replaying = false;
  private readonly observers: readonly VersionObserver[];
  /** The nodes the block being applied created (collected only when there are observers). */
  private fresh: FreshNode[] = [];
  private started = false;
  private readonly faults: NodeFaults | undefined;
  /** The chain's difficulty rule: the least difficulty of a block (the genesis'). */
  private minDifficulty = DEFAULT_MIN_DIFFICULTY;

  private constructor(
    readonly opts: StorageNodeOptions,
    genesis: Version,
    modules: StorageNodeModules,
  ) {
    this.layout = new ShardLayout(opts.shardCount);
    this.keccak = modules.hash ?? defaultKeccak;
    this.log = modules.logger ?? silentLogger;
    this.beforeInstall = modules.beforeInstall;
    this.versions = new VersionStore(genesis, {
      window: opts.window,
      forkWindow: opts.forkWindow,
      maxUpdates: opts.maxVersionUpdates,
    });
    this.observers = modules.observers ?? [];
    this.faults = modules.faults;
    if (this.observers.length > 0) {
      // Every later version is a snapshot of this one and inherits the listener.
      genesis.state.state.listen((hash, enc) => this.fresh.push({ hash, enc }));
    }
  }

  /**
   * Tells the observers the state the node starts from; once, and before the first block at
   * the latest (a durable node does it while opening; call it to have a new node's observers
   * ready before any block arrives).
   */
  async startObservers(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const o of this.observers) await o.start(this.versions.head);
  }

  /** A node at the genesis state of its shards. */
  static fromGenesis(
    genesis: Genesis,
    opts: Partial<StorageNodeOptions> = {},
    modules: StorageNodeModules = {},
  ): StorageNode {
    const o = StorageNode.checkOptions({ ...defaultStorageNodeOptions, ...opts }, opts);
    const layout = new ShardLayout(o.shardCount);
    const state = ShardState.fromGenesis(
      genesis.alloc,
      layout,
      o.shards,
      modules.hash ? { hash: modules.hash } : {},
    );
    return StorageNode.atGenesis(genesis, o, state, modules);
  }

  /**
   * fromGenesis for a genesis larger than memory: its nodes stream into `modules.genesisSink`
   * subtree by subtree and the node keeps the levels above them as objects (see streamGenesis).
   * A genesis too small to stream is built in memory.
   */
  static async fromGenesisStreamed(
    genesis: Omit<Genesis, 'alloc'> & { alloc: GenesisAccounts },
    opts: Partial<StorageNodeOptions> = {},
    modules: StorageNodeModules & { genesisSink: GenesisSink },
  ): Promise<StorageNode> {
    const o = StorageNode.checkOptions({ ...defaultStorageNodeOptions, ...opts }, opts);
    const layout = new ShardLayout(o.shardCount);
    const { alloc } = genesis;
    const state = await streamGenesis(
      alloc,
      layout,
      o.shards,
      modules.genesisSink,
      modules.hash ? { hash: modules.hash } : {},
    );
    if (state !== undefined)
      return StorageNode.atGenesis({ ...genesis, alloc: [] }, o, state, modules, alloc.length);
    if (!Array.isArray(alloc)) {
      throw new StorageError(
        StorageErrorCode.BadGenesis,
        `a genesis of ${alloc.length} accounts is too small to stream; give its accounts as an array`,
      );
    }
    return StorageNode.fromGenesis({ ...genesis, alloc }, opts, modules);
  }

  /**
   * A node at a checkpoint's version (stateCheckpoint's bytes) of the chain `genesis` began
   * (its difficulty rule), without a log: how a benchmark
   * builds a large state once and starts every run from it. A checkpoint of a tiered node's
   * state holds hash stubs where its nodes are in LevelDB: start it with a tiered store over
   * that same LevelDB (`modules`), whose nodes content-address the stubs.
   */
  static fromCheckpoint(
    data: Uint8Array,
    genesis: Pick<Genesis, 'minDifficulty'>,
    opts: Partial<StorageNodeOptions> = {},
    modules: StorageNodeModules = {},
  ): StorageNode {
    const o = StorageNode.checkOptions({ ...defaultStorageNodeOptions, ...opts }, opts);
    const node = new StorageNode(o, decodeCheckpoint(data, modules.hash), modules);
    node.minDifficulty = genesis.minDifficulty ?? DEFAULT_MIN_DIFFICULTY;
    return node;
  }

  private static atGenesis(
    genesis: Genesis,
    o: StorageNodeOptions,
    state: ShardState,
    modules: StorageNodeModules,
    accounts = genesis.alloc.length,
  ): StorageNode {
    const header = genesisHeader(genesis, state.root());
    const headerRlp = encodeHeader(header);
    const hash = headerHash(header, modules.hash);
    const v: Version = {
      hash,
      id: VersionStore.idOf(hash),
      header,
      headerRlp,
      totalDifficulty: header.difficulty,
      state,
    };
    const node = new StorageNode(o, v, modules);
    node.minDifficulty = minDifficultyOf(genesis);
    node.log.info('genesis loaded', {
      shards: o.shards.length,
      accounts,
      stateRoot: toHex(header.stateRoot),
      hash: v.id,
    });
    return node;
  }

  private static checkOptions(o: StorageNodeOptions, given: Partial<StorageNodeOptions>): StorageNodeOptions {
    const shards = given.shards ?? Array.from({ length: o.shardCount }, (_, i) => i);
    const layout = new ShardLayout(o.shardCount);
    for (const s of shards) {
      if (!Number.isInteger(s) || s < 0 || s >= layout.count) {
        throw new StorageError(
          StorageErrorCode.BadArgument,
          `shard ${s} is not within 0-${layout.count - 1}`,
        );
      }
    }
    return { ...o, shards: [...new Set(shards)].sort((a, b) => a - b) };
  }

  /**
   * A durable node: the genesis state, then every block in `dataDir`'s write-ahead log replayed,
   * so it ends where the last acknowledged block left it. From then on a block is acknowledged
   * only once its record is in the log (fsynced, by default). Refuses a data directory written
   * for another genesis or shard selection.
   */
  static async open(
    genesis: Genesis,
    opts: Partial<StorageNodeOptions> & DurabilityOptions,
    modules: StorageNodeModules = {},
  ): Promise<StorageNode> {
    const keccak = modules.hash ?? defaultKeccak;
    const log = modules.logger ?? silentLogger;
    const o = StorageNode.checkOptions({ ...defaultStorageNodeOptions, ...opts }, opts);
    await mkdir(opts.dataDir, { recursive: true });
    const metaFile = join(opts.dataDir, 'node.json');
    const meta = { genesis: genesisFingerprint(genesis, keccak), shardCount: o.shardCount, shards: o.shards };
    let existing: typeof meta | undefined;
    try {
      existing = JSON.parse(await readFile(metaFile, 'utf8')) as typeof meta;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(meta)) {
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `data directory ${opts.dataDir} was written for genesis ${existing.genesis.slice(0, 16)}… with shards ${existing.shards.join(',')} of ${existing.shardCount}; this node has genesis ${meta.genesis.slice(0, 16)}… with shards ${meta.shards.join(',')} of ${meta.shardCount}`,
      );
    }
    if (existing === undefined) await writeFile(metaFile, `${JSON.stringify(meta)}\n`);
    const checkpoints = await CheckpointStore.create(
      { dir: join(opts.dataDir, 'checkpoints'), keep: 2 },
      modules.logger ? { logger: modules.logger } : {},
    );
    const latest = await checkpoints.latest();
    let node: StorageNode;
    if (latest !== undefined) {
      const base = { ...decodeCheckpoint(latest.data, modules.hash), seq: latest.seq };
      node = new StorageNode(o, base, modules);
      node.minDifficulty = minDifficultyOf(genesis);
      log.info('checkpoint loaded', {
        number: Number(base.header.number),
        seq: String(latest.seq),
        hash: base.id,
      });
    } else if (modules.genesisSink !== undefined) {
      node = await StorageNode.fromGenesisStreamed(genesis, o, {
        ...modules,
        genesisSink: modules.genesisSink,
      });
    } else {
      node = StorageNode.fromGenesis(genesis, o, modules);
    }
    const wal = await WriteAheadLog.create(
      { dir: join(opts.dataDir, 'wal'), ...(opts.fsync ? { fsync: opts.fsync } : {}) },
      modules.logger ? { logger: modules.logger } : {},
    );
    if (latest !== undefined && wal.lastSeq < latest.seq) {
      // The log lost a tail the checkpoint covers (an unsynced tail cut): numbering on from
      // there would give new blocks seqs the checkpoint already covers, and replay skip them.
      log.warn('wal ends before the newest checkpoint; restarting it after the checkpoint', {
        walLastSeq: String(wal.lastSeq),
        checkpointSeq: String(latest.seq),
      });
      await wal.restartAt(latest.seq + 1n);
    }
    node.wal = wal;
    node.checkpoints = checkpoints;
    node.checkpointEvery = opts.checkpointEvery ?? 1024;
    node.settledDepth = BigInt(opts.checkpointDepth ?? DEFAULT_CHECKPOINT_DEPTH);
    await node.startObservers();
    node.replaying = true;
    let replayed = 0;
    let skipped = 0;
    try {
      const from = latest === undefined ? undefined : latest.seq + 1n;
      for await (const rec of wal.replay(from !== undefined && from <= wal.lastSeq ? from : undefined)) {
        if (latest !== undefined && rec.seq <= latest.seq) continue;
        try {
          await node.applyNow(decodeRecord(rec.payload, o.shardCount), {
            seq: rec.seq,
            record: new Uint8Array(rec.payload),
          });
          replayed++;
        } catch (e) {
          // A block on a fork that branched off before the checkpoint: its parent is gone.
          if (!(e instanceof StorageError && e.code === StorageErrorCode.UnknownParent)) throw e;
          skipped++;
        }
      }
    } finally {
      node.replaying = false;
    }
    log.info('log replayed', {
      blocks: replayed,
      skipped,
      head: Number(node.head.header.number),
      hash: node.head.id,
    });
    return node;
  }

  /** Closes the log (a durable node); later blocks are refused. */
  async close(): Promise<void> {
    await this.queue;
    await this.checkpointing;
    await this.wal?.close();
    for (const o of this.observers) await o.close();
  }

  /** How far below the head blocks are checkpointed, and a replica joins (checkpointDepth). */
  get checkpointDepth(): bigint {
    return this.settledDepth;
  }

  get head(): Version {
    return this.versions.head;
  }

  /** The write-ahead log's counters (a durable node), for metrics. */
  walStats(): { bytes: number; records: number; fsyncs: number; lastSeq: bigint } | undefined {
    const w = this.wal;
    return w === undefined
      ? undefined
      : { bytes: w.bytesWritten, records: w.recordsWritten, fsyncs: w.fsyncCount, lastSeq: w.lastSeq };
  }

  /**
   * Applies a block: the header must extend a version held here with a valid proof of work,
   * the updates must be for this node's shards, and the roots must come out as the block says.
   * A block that fails leaves no version and nothing in the log. Blocks are applied one at a
   * time; a block already held is acknowledged again without being re-applied. `record`: the
   * request's protobuf encoding, when it came as one (the log keeps it as it is; it is encoded
   * here otherwise).
   */
  applyBlock(req: ApplyBlockRequest, record?: Uint8Array): Promise<ApplyBlockResponse> {
    return this.inQueue(() => this.applyNow(req, record === undefined ? undefined : { record }));
  }

  /** Runs `f` after the blocks queued before it (blocks and joins change the versions one at a time). */
  private inQueue<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * `given`: the block's log record when it came encoded, with its seq when it is being replayed
   * from the log.
   */
  private async applyNow(
    req: ApplyBlockRequest,
    given: { seq?: bigint; record: Uint8Array } | undefined,
  ): Promise<ApplyBlockResponse> {
    const started = performance.now();
    const header = decodeHeader(req.headerRlp);
    const hash = headerHash(header, this.keccak);
    const known = this.versions.byHash(hash);
    if (known !== undefined) return this.response(known);
    const parent = this.versions.byHash(header.parentHash);
    if (parent === undefined) {
      throw new StorageError(
        StorageErrorCode.UnknownParent,
        `block ${toHex(hash)} extends ${toHex(header.parentHash)}, which this node does not hold`,
        {
          block: toHex(hash),
          parent: toHex(header.parentHash),
        },
      );
    }
    if (header.number !== parent.header.number + 1n) {
      throw new StorageError(
        StorageErrorCode.BadBlock,
        `block number ${header.number} after parent number ${parent.header.number}`,
        {
          block: toHex(hash),
        },
      );
    }
    this.checkHeader(header, hash);
    const expected = this.expectedRoots(req.expectedRoots);
    await this.startObservers();
    const apply = () => {
      this.fresh = [];
      return parent.state.apply(req.shards, expected, header.stateRoot);
    };
    const state =
      this.faults === undefined ? apply() : await this.faults.run(apply, () => applyProbes(parent, req));
    const fresh = this.fresh;
    this.fresh = [];
    // Kept with the version too: a replica behind asks for it (GetBlockUpdates).
    const record = given?.record ?? encodeRecord(req, this.layout.count);
    let seq = given?.seq;
    if (this.wal !== undefined && !this.replaying) seq = await this.wal.append(record);
    if (this.beforeInstall !== undefined) await this.beforeInstall(req);
    const v: Version = {
      ...(seq !== undefined ? { seq } : {}),
      record,
      updates: req.shards.reduce((n, s) => n + s.accounts.length, 0),
      hash,
      id: VersionStore.idOf(hash),
      header,
      headerRlp: req.headerRlp,
      totalDifficulty: parent.totalDifficulty + header.difficulty,
      state,
    };
    for (const o of this.observers) await o.adding(v, fresh);
    this.versions.add(v);
    const gone = this.versions.prune();
    if (gone.length > 0 && this.observers.length > 0) {
      const held = this.versions.all();
      for (const o of this.observers) o.dropped(gone, held);
    }
    // The checkpoint of block n·every is written once the head is checkpointDepth blocks past
    // it, and of the head's chain: a checkpoint of a fork block (a losing miner's block at that
    // height, which may even be the head for a moment) would restart the node on that fork,
    // with the blocks of the real chain skipped in the replay as orphans.
    const every = BigInt(this.checkpointEvery);
    const settled = header.number - this.settledDepth;
    if (every > 0n && !this.replaying && this.versions.head === v && settled > 0n && settled % every === 0n) {
      const c = this.versions.get({ kind: 'number', number: settled });
      if (c !== undefined) this.scheduleCheckpoint(c);
    }
    this.log.info('block applied', {
      number: Number(header.number),
      hash: v.id,
      head: this.versions.head === v,
      accounts: v.updates,
      freed: gone.length,
      ms: Math.round((performance.now() - started) * 100) / 100,
    });
    return this.response(v);
  }

  /**
   * Writes `v`'s checkpoint in the background (versions never change, so this needs no pause),
   * then drops the log records the oldest kept checkpoint covers.
   */
  private scheduleCheckpoint(v: Version): void {
    const store = this.checkpoints;
    const wal = this.wal;
    if (store === undefined || wal === undefined || v.seq === undefined) return;
    const seq = v.seq;
    this.checkpointing = this.checkpointing.then(async () => {
      const started = performance.now();
      try {
        await store.write(seq, encodeCheckpoint(v));
        const oldest = (await store.list()).at(-1) ?? seq; // list() is newest first
        const dropped = await wal.truncateBefore(oldest + 1n);
        this.log.info('checkpoint written', {
          number: Number(v.header.number),
          seq: String(seq),
          ms: Math.round(performance.now() - started),
          walSegmentsDropped: dropped,
        });
      } catch (e) {
        this.log.warn('checkpoint failed', { number: Number(v.header.number), error: (e as Error).message });
      }
    });
  }

  /**
   * The blocks on the head's chain numbered after `afterNumber`, oldest first, at most `count`,
   * each as the ApplyBlockRequest (protobuf) that applied it here: what a replica of these shards
   * that is behind applies to catch up. Starts later than asked where the blocks after
   * `afterNumber` are no longer held (pruned, or before the checkpoint this node started from).
   */
  blockUpdates(afterNumber: bigint, count: number): Uint8Array[] {
    const chain: Uint8Array[] = [];
    for (let v: Version | undefined = this.head; v !== undefined && v.header.number > afterNumber; ) {
      if (v.record === undefined) break;
      chain.push(v.record);
      v = this.versions.byHash(v.header.parentHash);
    }
    return chain.reverse().slice(0, count);
  }

  /** The state at `at` as a checkpoint's chunks (see stateCheckpoint.ts): what a new replica joins from. */
  checkpointOf(at: BlockRef): AsyncGenerator<Uint8Array> {
    if (this.faults !== undefined) {
      // Its trees hold hash stubs where nodes live in its LevelDB: a joiner would get holes.
      throw new StorageError(
        StorageErrorCode.BadArgument,
        'a node with a tiered backend does not serve checkpoints (its trees are partly in LevelDB); join from a memory-backend replica',
      );
    }
    return encodeCheckpoint(this.version(at));
  }

  /**
   * Joins from a replica's checkpoint (a node that is new, or behind further than its peers and
   * the miners keep blocks): checks it (its trie's root is its header's state root, the header
   * meets the chain's difficulty rule and its proof of work, the same shards as this node), makes
   * it this node's checkpoint (a durable node: the log's records so far are superseded) and its
   * only version, from which blocks then apply. A checkpoint no further on than the head is
   * ignored. Not for a node with observers (a tiered backend, a one-sided export): their stores
   * follow the versions from the start.
   */
  join(checkpoint: Uint8Array): Promise<Version> {
    return this.inQueue(async () => {
      if (this.observers.length > 0) {
        throw new StorageError(
          StorageErrorCode.BadArgument,
          'a node with a tiered backend or a one-sided export cannot join from a checkpoint while it runs; start it from an empty data directory with the memory backend, or let the miners catch it up',
        );
      }
      const v = decodeCheckpoint(checkpoint, this.keccak);
      const own = this.opts.shards.join(',');
      if (v.state.layout.count !== this.layout.count || v.state.owned.join(',') !== own) {
        throw new StorageError(
          StorageErrorCode.WrongShard,
          `checkpoint of shards ${v.state.owned.join(',')} of ${v.state.layout.count}; this node holds shards ${own} of ${this.layout.count}`,
        );
      }
      this.checkHeader(v.header, v.hash);
      if (v.header.number <= this.head.header.number) return this.head;
      let installed = v;
      if (this.wal !== undefined && this.checkpoints !== undefined) {
        // Every record so far is superseded: recovery starts from this checkpoint and replays
        // only the blocks applied after it. A scheduled checkpoint must not land after it.
        await this.checkpointing;
        const seq = this.wal.lastSeq;
        await this.checkpoints.write(seq, checkpoint);
        installed = { ...v, seq };
      }
      const from = this.head;
      this.versions.reset(installed);
      this.log.info('joined from a checkpoint', {
        number: Number(v.header.number),
        hash: v.id,
        from: Number(from.header.number),
        bytes: checkpoint.length,
      });
      return installed;
    });
  }

  /** The chain's difficulty rule and the proof of work of a header. */
  private checkHeader(header: BlockHeader, hash: Uint8Array): void {
    if (header.difficulty < this.minDifficulty) {
      throw new StorageError(
        StorageErrorCode.BadBlock,
        `block ${toHex(hash)} has difficulty ${header.difficulty}, below the chain's minimum ${this.minDifficulty}`,
        { block: toHex(hash) },
      );
    }
    if (!checkPow(header, this.keccak)) {
      throw new StorageError(
        StorageErrorCode.BadBlock,
        `block ${toHex(hash)} does not meet its difficulty ${header.difficulty}`,
        {
          block: toHex(hash),
        },
      );
    }
  }

  private expectedRoots(roots: readonly ShardRoot[]): (Uint8Array | undefined)[] {
    const out: (Uint8Array | undefined)[] = new Array(this.layout.count).fill(undefined);
    const seen = new Set<number>();
    for (const r of roots) {
      if (r.shard >= this.layout.count || seen.has(r.shard)) {
        throw new StorageError(
          StorageErrorCode.WrongShard,
          `expected roots list shard ${r.shard} twice or out of range`,
          {
            shard: r.shard,
          },
        );
      }
      seen.add(r.shard);
      out[r.shard] = r.root.length === 0 ? undefined : r.root;
    }
    if (seen.size !== this.layout.count) {
      throw new StorageError(
        StorageErrorCode.WrongShard,
        `expected roots name ${seen.size} of ${this.layout.count} shards`,
      );
    }
    return out;
  }

  private response(v: Version): ApplyBlockResponse {
    const roots = v.state.shardRoots();
    return {
      blockHash: v.hash,
      number: v.header.number,
      roots: v.state.owned.map((s) => ({ shard: s, root: roots[s] ?? new Uint8Array(0) })),
    };
  }

  /**
   * Runs a read (any of the methods below): at once when every node is in memory; with a tiered
   * backend, once the nodes it reaches are faulted in (see NodeFaults). `probes`: the read split
   * into independent parts, so that one round trip fetches every part's next missing node.
   */
  read<T>(run: () => T, probes?: () => readonly (() => unknown)[]): T | Promise<T> {
    return this.faults === undefined ? run() : this.faults.run(run, probes);
  }

  /** The version a read names, or UnknownVersion. */
  version(at: BlockRef): Version {
    const v = this.versions.get(at);
    if (v === undefined) {
      const what =
        at.kind === 'hash'
          ? `block ${toHex(at.hash)}`
          : at.kind === 'number'
            ? `block number ${at.number}`
            : 'head';
      throw new StorageError(
        StorageErrorCode.UnknownVersion,
        `${what} is not held here (pruned, unknown, or on no chain)`,
      );
    }
    return v;
  }

  private checkHeld(v: Version, address: Uint8Array): Uint8Array {
    return this.checkHeldKey(v, address, this.keccak.keccak256(address));
  }

  /** checkHeld with the address' key already hashed. */
  private checkHeldKey(v: Version, address: Uint8Array, key: Uint8Array): Uint8Array {
    if (!v.state.holdsKey(key)) {
      throw new StorageError(
        StorageErrorCode.WrongShard,
        `account 0x${toHex(address)} is in shard ${this.layout.shardOfKey(key)}, not held by this node`,
        { shard: this.layout.shardOfKey(key) },
      );
    }
    return key;
  }

  /** An account and its proof at a version. */
  getAccount(req: GetAccountRequest): GetAccountResponse {
    const v = this.version(req.at);
    const key = this.checkHeld(v, req.address);
    const st = v.state.state;
    st.rootBin();
    return {
      blockHash: v.hash,
      number: v.header.number,
      accountRlp: st.accounts.get(key),
      proof: st.accounts.prove(key, req.omitLevels),
    };
  }

  /** A storage slot with the account's and the slot's proofs. */
  getStorage(req: GetStorageRequest): GetStorageResponse {
    const v = this.version(req.at);
    this.checkHeld(v, req.address);
    const st = v.state.state;
    return {
      blockHash: v.hash,
      number: v.header.number,
      value: st.getStorage(req.address, req.slot) ?? new Uint8Array(0),
      accountProof: st.proveAccount(req.address, req.omitLevels),
      storageProof: st.proveStorage(req.address, req.slot),
    };
  }

  /**
   * Code by hash, from any version held. A version's code includes all of its ancestors' (code
   * is only ever added), so the head answers for its whole chain; the other versions are asked
   * only for code that exists on another fork.
   */
  getCode(codeHash: Uint8Array): Uint8Array | undefined {
    const head = this.head;
    const c = head.state.state.getCode(codeHash);
    if (c !== undefined) return c;
    for (const v of this.versions.all()) {
      if (v === head) continue;
      const f = v.state.state.getCode(codeHash);
      if (f !== undefined) return f;
    }
    return undefined;
  }

  /**
   * Trie nodes by hash, each looked for where its path says (see GetNodesRequest), in the head
   * first and then in every other version held. Without a path only the tries' roots match.
   * The node keeps no index by hash: a hint-less search of the whole state would cost a walk
   * of every version, and whoever asks for a node learned its hash from its parent, on a path.
   */
  getNodes(req: GetNodesRequest): GetNodesResponse {
    const head = this.head;
    const versions = [head, ...this.versions.all().filter((v) => v !== head)];
    const nodes = req.hashes.map((hash, i) => {
      const path = req.paths?.[i] ?? new Uint8Array(0);
      for (const v of versions) {
        const n = this.nodeOnPath(v, hash, path);
        if (n !== undefined) return n;
      }
      return undefined;
    });
    return { nodes };
  }

  /**
   * The node with `hash` on the proof path through `path` in version `v`, if any: the node at
   * the path or one above it. An account trie node sits at most 63 nibbles deep, so a path of
   * 64 or more names the storage trie of the account whose hashed key is its first 64.
   */
  private nodeOnPath(v: Version, hash: Uint8Array, path: Uint8Array): Uint8Array | undefined {
    const st = v.state.state;
    let trie: DsmTree | undefined = st.accounts;
    let inner = path;
    if (path.length >= 64) {
      const accountKey = nibblesToKey(path.subarray(0, 64));
      if (!v.state.holdsKey(accountKey)) return undefined;
      trie = st.storageTrieAt(accountKey);
      inner = path.subarray(64);
    }
    if (trie === undefined) return undefined;
    let proof: Uint8Array[];
    try {
      proof = trie.prove(nibblesToKey(inner));
    } catch (e) {
      if (e instanceof DsmError) return undefined; // the path runs into a foreign shard's stub
      throw e;
    }
    // A proof holds at most one node per depth: the one at the path's end is near its end.
    for (let k = proof.length - 1; k >= 0; k--) {
      const n = proof[k]!;
      if (n.length >= 32 && bytesEqual(this.keccak.keccak256(n), hash)) return n;
    }
    return undefined;
  }

  /**
   * The hashed keys of a batch's accounts and of their slots, in one keccak call (one call per key
   * costs several times more across the N-API boundary), kept for the request: a tiered read runs
   * the batch and its probes again after each round trip.
   */
  private batchKeys(req: BatchGetRequest): BatchKeys {
    let keys = this.hashedBatches.get(req);
    if (keys === undefined) {
      const inputs: Uint8Array[] = req.queries.map((q) => q.address);
      for (const q of req.queries) for (const slot of q.slots) inputs.push(slot);
      const packed = this.keccak.keccak256Batch(inputs);
      const at = (k: number) => packed.subarray(32 * k, 32 * k + 32);
      let k = req.queries.length;
      keys = {
        accounts: req.queries.map((_, i) => at(i)),
        slots: req.queries.map((q) => q.slots.map(() => at(k++))),
      };
      this.hashedBatches.set(req, keys);
    }
    return keys;
  }

  /** Many accounts, slots and codes at one version, all proofs in one node bag. */
  batchGet(req: BatchGetRequest): BatchGetResponse {
    const v = this.version(req.at);
    const st = v.state.state;
    st.rootBin();
    const hashed = this.batchKeys(req);
    const keys = req.queries.map((q, i) => this.checkHeldKey(v, q.address, hashed.accounts[i]!));
    // One bag: the account proofs' union (shared upper nodes once), then each storage trie's.
    // Each account's value is read on its proof's walk (one walk per key, not two).
    const values: (Uint8Array | undefined)[] = new Array(keys.length);
    const packed = st.accounts.getProvePacked(keys, req.omitLevels, values);
    const results = req.queries.map((q, i) => {
      const accountRlp = values[i];
      const slotKeys = hashed.slots[i]!;
      const slotValues =
        slotKeys.length === 0 ? [] : slotKeys.map((k) => st.getStorageAtKey(keys[i]!, k) ?? NO_BYTES);
      const code =
        q.code && accountRlp !== undefined ? (st.getCode(codeHashOf(accountRlp)) ?? NO_BYTES) : NO_BYTES;
      return { address: q.address, accountRlp, slotValues, code };
    });
    const rest: Uint8Array[] = [];
    for (let i = 0; i < keys.length; i++) {
      const slotKeys = hashed.slots[i]!;
      if (slotKeys.length > 0) rest.push(...(st.storageTrieAt(keys[i]!)?.proveMany(slotKeys) ?? []));
    }
    // The account proofs stay one buffer to the answer's bytes (no object per node).
    return withPackedBag(
      { blockHash: v.hash, number: v.header.number, results },
      { bytes: packed.bytes, ends: packed.ends, rest },
    );
  }

  /**
   * A BatchGet split into its keys' paths, for `read`'s probes: one per account (by its hashed
   * key, hashed once) and one per slot; each only walks the path its proof will take, faulting
   * in what is at hand and stopping at the first node that is not (DsmTree.faultPath).
   */
  batchProbes(req: BatchGetRequest): (() => unknown)[] {
    const st = this.version(req.at).state.state;
    const probes: (() => unknown)[] = [];
    const hashed = this.batchKeys(req);
    for (let i = 0; i < req.queries.length; i++) {
      const key = hashed.accounts[i]!;
      probes.push(() => st.accounts.faultPath(key));
      for (const slotKey of hashed.slots[i]!) probes.push(() => st.storageTrieAt(key)?.faultPath(slotKey));
    }
    return probes;
  }

  /** Every shard's root at a version (empty bytes for an empty shard). */
  shardRoots(at: BlockRef): { version: Version; roots: ShardRoot[] } {
    const v = this.version(at);
    const roots = v.state.shardRoots();
    return { version: v, roots: roots.map((r, shard) => ({ shard, root: r ?? new Uint8Array(0) })) };
  }
}

/** A batch's hashed keys: each query's account, and each of its slots. */
interface BatchKeys {
  accounts: Uint8Array[];
  slots: Uint8Array[][];
}

/** An empty answer (no code, an unset slot), one for all: nothing writes into a zero-length array. */
const NO_BYTES = new Uint8Array(0);

/** A block's reads of its parent, one per account and slot it updates (see StorageNode.read). */
function applyProbes(parent: Version, req: ApplyBlockRequest): (() => unknown)[] {
  const st = parent.state.state;
  const probes: (() => unknown)[] = [];
  for (const u of req.shards) {
    for (const a of u.accounts) {
      probes.push(() => st.getAccount(a.address));
      if (!a.deleted) for (const s of a.storage) probes.push(() => st.getStorage(a.address, s.slot));
    }
  }
  return probes;
}

/**
 * An account encoding's code hash without decoding the account: a canonical account is a list
 * of 68 to 108 payload bytes (0xf8 and one length byte) ending with the hash (0xa0 and 32
 * bytes), as every account a tree holds is; anything else is decoded (and refused if no account).
 */
export function codeHashOf(accountRlp: Uint8Array): Uint8Array {
  const n = accountRlp.length;
  if (accountRlp[0] === 0xf8 && accountRlp[1] === n - 2 && accountRlp[n - 33] === 0xa0) {
    return accountRlp.subarray(n - 32);
  }
  return decodeAccount(accountRlp).codeHash;
}

/** A 32-byte key whose first nibbles are `nibbles` (at most 64), zero-filled after. */
function nibblesToKey(nibbles: Uint8Array): Uint8Array {
  const key = new Uint8Array(32);
  for (let i = 0; i < nibbles.length; i++) key[i >> 1]! |= (nibbles[i]! & 15) << (i & 1 ? 0 : 4);
  return key;
}
