/**
 * The tiered backend (`--backend tiered`): a storage node whose shards can be larger than its
 * memory. Every trie node lives in a LevelDB (content-addressed: hash → RLP encoding, so the
 * copy-on-write versions share their nodes there as they do in memory). In memory each held
 * version keeps its account trie's top `residentLevels` levels as objects; below them are hash
 * stubs that fault in through a verified node cache (CLOCK, accounted in bytes) and, on a miss,
 * from LevelDB.
 *
 * Reads stay synchronous over the trees: `run` executes a read, collects the stubs it reached
 * that the cache does not hold (the trees' `source` records each miss, even where a caller
 * catches the MissingNode), fetches them in one batched LevelDB round trip (concurrent faults
 * of one node share one fetch), and runs the read again; one round trip per cold trie level.
 * Answers are the memory mode's byte for byte: the same trees answer, only later.
 *
 * Writes: a block's new nodes (children before parents) go to LevelDB in one batch before the
 * block is acknowledged; a node not found in LevelDB while a read needs it is what memory mode
 * would say of a stub (a foreign shard), and a node that does not hash to its key is refused
 * (CORRUPT_NODE) and reported. Garbage: an epoch mark-and-sweep (see `sweep`).
 */
import { EMPTY_ROOT, type EvictRule, type VerifiedNodeSource } from '@monsoon/dsm-tree';
import { type Logger, silentLogger } from '@monsoon/edge';
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { byteKeyAt, type RlpValue, rlpDecode, toHex } from '@monsoon/util';
import { StorageError, StorageErrorCode } from '../storageError.js';
import type { GenesisSink, PlacedNode } from '../streamGenesis.js';
import type { Version } from '../versionStore.js';
import { FrequencySketch } from './frequencySketch.js';
import type { NodeDb } from './levelNodeStore.js';
import { defaultMemoryGovernorOptions, MemoryGovernor, rssAnonBytes } from './memoryGovernor.js';
import { NodeCache } from './nodeCache.js';
import type { NodeFaults } from './nodeFaults.js';
import {
  binOf,
  forEachChildOnPath,
  nextOnPath,
  PATH_INDEX_KEY,
  pathKey,
  pathValue,
  placeNodes,
} from './pathRecords.js';
import type { FreshNode, VersionObserver } from './versionObserver.js';

/**
 * Bytes a node faulted into a tree is counted as until the next eviction pass counts exactly
 * (residentNodeBytes in @monsoon/dsm-tree): its encoding plus about this much.
 */
export const FAULTED_NODE_OVERHEAD = 150;

/** Bytes a full branch held as an object costs (its encoding and FAULTED_NODE_OVERHEAD): see keepLevels. */
const LEVEL_NODE_BYTES = 700;

/**
 * The default part of the budget for the cache of encodings (TieredStoreOptions.cacheShare); the
 * trees' resident nodes get the rest.
 */
export const CACHE_SHARE = 0.8;

/**
 * An eviction pass that leaves the trees above this share of their budget passes again with a
 * higher bar (at most MAX_PASSES in all); one that leaves them under LOW_WATER lowers the bar.
 */
const HIGH_WATER = 0.9;
const LOW_WATER = 0.7;
const MAX_PASSES = 3;
/** Trees this far over their budget evict without waiting for reads' round trips (see tripsFirst). */
const OVERSHOOT = 1.1;

/**
 * An eviction pass goes over the account tries a part at a time (16^EVICT_PART_DEPTH parts, the
 * subtrees below the top levels; fewer when residentLevels is below 3) and gives the event loop a
 * turn whenever its parts took `evictSliceMs` (TieredStoreOptions): a pass over millions of nodes took 0.4-3.7 s,
 * every request waiting behind it.
 */
const EVICT_PART_DEPTH = 2;

/**
 * A node faulted in with its place on a key's path brings, in the same round trip, the path
 * records (pathRecords.ts) of the next PATH_AHEAD depths of that path: at 1M-10M accounts a cold
 * path below the resident levels is 2-4 nodes (a leaf, sometimes an extension, under branches).
 */
const PATH_AHEAD = 4;

/**
 * Which of those records a fault asks for is learnt (see TieredStore.askAhead): the record k
 * depths below a fault at depth d is asked while at least 1/AHEAD_MIN_RATE of the records asked
 * there were used (the path went through them), always for its first AHEAD_LEARN askings, and
 * otherwise once in AHEAD_EXPLORE times (so a changed trie is seen). A key asked costs a LevelDB
 * Get on the thread pool, found or not (block seeks and reads: 15% of the process' CPU in perf at
 * 1M, 10%), besides its Buffers on the JS thread; and at 1M accounts most faults are
 * at depths 4-5 with a leaf at 5-6: asking all PATH_AHEAD took 5,212 record keys a 90/10 batch
 * for the 1,108 used. With 1/16 a 90/10 batch asks ~2,000 keys in all (was ~6,500) and costs
 * 39-44 against 46-49 ms of CPU (bench/tiered.ts, session 14). A bar of 1/4 also skipped records
 * that small tries' paths use: tieredStore.test's hot paths then took more round trips and fell
 * out of the trees.
 */
const AHEAD_MIN_RATE = 16;
/**
 * A trip of fewer placed faults than this asks every record (and counts them): a single read's
 * cold path in one round trip whatever the rates say (a skipped record that was needed put the
 * read's second round trip in the cold p99), and the tail of a batch in one more. Only a
 * batch's first trips, hundreds of faults, ask what was learnt.
 */
const AHEAD_ALL_BELOW = 128;
const AHEAD_LEARN = 64;
const AHEAD_EXPLORE = 16;
/** Counts are halved once this many were asked at one (depth, k): the rates follow the trie. */
const AHEAD_HALVE = 4096;
/** Fault depths counted apart (a 32-byte key's path has 64 nibbles; deeper ones share the last). */
const AHEAD_DEPTHS = 65;

/**
 * How far below its budget a trim takes the cache (see TieredStore.evictCache), so the next
 * trim waits for that much: a part of the budget (0 under 64 bytes: the tests' one-byte budgets),
 * at most TRIM_SLACK_MAX. At 1M accounts and 10% (33.7 MiB) ~530 KiB.
 */
const TRIM_SLACK = 1 / 64;
const TRIM_SLACK_MAX = 1024 * 1024;
const trimSlack = (budget: number): number =>
  Math.min(TRIM_SLACK_MAX, Math.floor(Math.max(0, budget) * TRIM_SLACK));

/** A fault batch is split into at most this many parallel getMany calls of at least GET_MANY_MIN_PART keys. */
const GET_MANY_PARTS = 4;
const GET_MANY_MIN_PART = 64;

export interface TieredStoreOptions {
  /**
   * Bytes for trie nodes in memory: the resident top levels of every held version, the nodes
   * faulted into the trees since they were last pruned, and the node cache.
   */
  memoryBudget: number;
  /**
   * Levels of each version's account trie kept as objects (storage tries are all faulted in);
   * at least the shard layout's depth (1 for 16 shards, 2 for 256).
   */
  residentLevels: number;
  /** A mark-and-sweep of LevelDB once this many nodes were written since the last; 0 = never. */
  gcEveryNodes: number;
  /**
   * The node's checkpoint interval: the versions of the last three checkpoint numbers stay
   * reachable in LevelDB (a restart may restore one of them) after they leave the window.
   */
  checkpointEvery: number;
  /**
   * The part of the budget for the cache of encodings: nodes just fetched (pinned until their
   * request re-runs) and the warm nodes the trees do not hold decoded, packed in an arena at
   * about 60% of what a decoded node costs (NodeCache), kept by the same frequency sketch as the
   * trees. A node a tree holds that is in the cache stays there while the tree still uses it, so
   * a pass that evicts it from the tree does not send it back to LevelDB; the trees get the rest
   * of the budget (the top levels and the most wanted nodes, decoded once). A larger share
   * fetches fewer nodes but decodes more of them again on every read. In session 10 that
   * decoding made 0.7 no faster than 0.1; since nodes decode straight from their bytes and the
   * arena hands out views, 0.8 fetches ~20% fewer nodes a 90/10 batch than 0.1 and spends less
   * CPU a batch (1M accounts at 10%, same turns: bench/tiered.ts, session 13), hence 0.8.
   */
  cacheShare: number;
  /** Nodes per LevelDB batch while the starting state is written. */
  startBatch: number;
  /**
   * Bytes of the budget an in-process LevelDB's block cache takes (it was opened with this
   * much: openLocalNodeDb's cacheBytes); 0 for a LevelDB in its own process.
   */
  leveldbCacheBytes: number;
  /**
   * Read a cold node from a LevelDB in this process on the JS thread, when the read meets it,
   * instead of in a batched round trip through the thread pool: no round trip, no re-run of the
   * read (a node in the OS page cache takes microseconds), but a node that must come from disk
   * blocks every request meanwhile. Off by default (the issue asks for asynchronous faults);
   * ignored for a remote LevelDB.
   */
  syncReads: boolean;
  /**
   * Hold the whole process to the budget (MemoryGovernor): sample its anonymous RSS every
   * `rssSampleMs` and shrink the nodes' share of the budget while it grows past budget ×
   * (1 + rssOverhead) + rssFixedBytes over `baseRssBytes` (default: its RSS when the store was made, before any
   * state). Off: only the accounted bytes (nodes, cache, sketch, LevelDB's block cache) are held.
   * `rssSampleMs` 0: no timer (the caller samples, through `govern`).
   */
  processBudget: boolean;
  /** An eviction pass yields the event loop once its parts took this long, ms (0: after every part). */
  evictSliceMs: number;
  rssSampleMs: number;
  rssOverhead: number;
  /** Growth allowed besides (V8's young generation, LevelDB's memtables: see MemoryGovernor). */
  rssFixedBytes: number;
  baseRssBytes?: number;
}

export const defaultTieredStoreOptions: TieredStoreOptions = {
  memoryBudget: 2 * 1024 ** 3,
  residentLevels: 3,
  gcEveryNodes: 1_000_000,
  checkpointEvery: 1024,
  cacheShare: CACHE_SHARE,
  startBatch: 20_000,
  leveldbCacheBytes: 0,
  syncReads: false,
  processBudget: false,
  evictSliceMs: 4,
  rssSampleMs: 1000,
  rssOverhead: 0.2,
  rssFixedBytes: defaultMemoryGovernorOptions.fixedBytes,
};

export interface TieredStoreModules {
  db: NodeDb;
  hash?: Keccak;
  logger?: Logger;
}

/** The counters a tiered store keeps as it goes (TieredStore.counters). */
export type TieredCounters = Pick<
  TieredStats,
  'roundTrips' | 'roundTripMs' | 'nodesFetched' | 'recordsAsked' | 'hashesAsked' | 'evictMs'
>;

/** What a tiered store has done, for metrics, tests and the benchmark. */
export interface TieredStats {
  /** LevelDB read round trips (getMany calls), the time they took (ms, summed) and the nodes they returned. */
  roundTrips: number;
  roundTripMs: number;
  nodesFetched: number;
  /** Faults that found a fetch of the same node already on the way. */
  coalesced: number;
  /**
   * Executions of whole reads (a read that meets no cold node runs once) and of probes (one
   * key's path each): what re-running a read after each round trip costs.
   */
  readRuns: number;
  probeRuns: number;
  /** Nodes read on the JS thread (syncReads), counted in nodesFetched too. */
  syncReads: number;
  /** Nodes a round trip took from path records, besides those asked for by hash (see PATH_AHEAD). */
  pathNodes: number;
  /** Path record keys round trips asked for (see askAhead), and node keys (by hash). */
  recordsAsked: number;
  hashesAsked: number;
  cacheHits: number;
  /** Entries the cache's trims copied to keep them (NodeCache.moved): their work besides what they drop. */
  cacheMoved: number;
  cacheBytes: number;
  cacheNodes: number;
  /** Bytes of the cache's arena slabs as allocated (cacheBytes counts the live entries and the index). */
  cacheSlabBytes: number;
  /** Bytes of nodes held as objects in the trees: counted at each eviction pass, estimated between. */
  residentBytes: number;
  /** Eviction passes over the held versions (CLOCK), and those that had to evict every node below the top levels. */
  prunes: number;
  fullPrunes: number;
  /** The longest the event loop was held by eviction (one slice of a pass, or a forced pass), ms. */
  evictMsMax: number;
  /** The longest eviction from its first slice to its last, ms, and the slices of all passes. */
  evictPassMsMax: number;
  evictSlices: number;
  /** The time eviction held the event loop in all (every slice, forced passes, the cache's trims), ms. */
  evictMs: number;
  /** The nodes' share of the budget (MemoryGovernor; 1 without processBudget) and its cuts. */
  budgetShare: number;
  governorCuts: number;
  /** Wants (see FrequencySketch) a node below the top levels needs to stay resident, as of the last pass. */
  keepWants: number;
  /** Wants a cached encoding needs to stay, as of the cache's last trim. */
  cacheKeepWants: number;
  /** Bytes of the frequency sketch (inside the budget). */
  sketchBytes: number;
  nodesWritten: number;
  /** Nodes read back from LevelDB to write their path records (a start over a LevelDB without them). */
  recordsReadBack: number;
  corrupt: number;
  sweeps: number;
  nodesSwept: number;
}

const keyOf = (hash: string): Buffer => Buffer.from(hash, 'latin1');
const EMPTY_ROOT_BIN = binOf(EMPTY_ROOT);

/** Where a missed node sits: at nibble `depth` on `key`'s path (see VerifiedNodeSource.getBin). */
interface Place {
  readonly key: Uint8Array;
  readonly depth: number;
}

/** Missed nodes, with their place where the tree told it. */
type Wants = Map<string, Place | undefined>;

/** One LevelDB round trip: the hashes it asks for, settled (rejected: unreachable, or a node refused) when it is back. */
interface Trip {
  readonly hashes: string[];
  /** Per hash, its place on a key's path, if known: the trip asks for the path's next records. */
  readonly places: (Place | undefined)[];
  readonly done: Promise<void>;
  settle(e?: unknown): void;
  /** Nodes LevelDB returned that do not hash to their keys, and the error each read needing one gets. */
  refused: Map<string, StorageError> | undefined;
}

export class TieredStore implements VersionObserver, VerifiedNodeSource, NodeFaults, GenesisSink {
  /** Faulted nodes go into the trees where their stubs were, shared by every version (see VerifiedNodeSource). */
  readonly inPlace = true;
  readonly opts: TieredStoreOptions;
  readonly db: NodeDb;
  private readonly keccak: Keccak;
  private readonly log: Logger;
  readonly cache = new NodeCache();
  /** How often each node was wanted lately: what eviction keeps by (see evict). */
  private sketch: FrequencySketch;
  /** Wants a node needs to stay (adjusted by each pass to what the budget holds). */
  private keepWants = 2;
  /** Held versions (by id) and the checkpoint versions kept reachable besides them. */
  private readonly versions = new Map<string, Version>();
  private readonly checkpointVersions: Version[] = [];
  /** Set while a read runs: the stubs it reached that the cache lacked, and where. */
  private misses: Wants | undefined;
  /** What `misses` is while a probe runs: one map for all (~2,000 probes a 1,000-key batch). */
  private readonly probeMisses: Wants = new Map();
  /** Whether the last read given its parts (probes) had to fetch: the next runs its parts first. */
  private probeFirst = false;
  /** Set while a read runs: the nodes it has faulted in or fetched, pinned until it ends. */
  private pinning: Set<string> | undefined;
  /**
   * Whether the nodes reads find cached are pinned too (see readBin): while a read's parts
   * (probes) run, and a read without parts.
   */
  private pinHits = false;
  /** Fetches on the way, by hash, and those waiting for the next batch. */
  private readonly inflight = new Map<string, Trip>();
  private queued: Trip | undefined;
  /** Bytes of tree nodes: exact after an eviction pass, grown by faults and blocks since. */
  private residentBytes = 0;
  private writtenSinceSweep = 0;
  /** The eviction under way (a pass in slices), if any, and whether another was asked for meanwhile. */
  private evicting: Promise<void> | undefined;
  private evictAgain = false;
  /** Bytes faults and blocks added since the store started: a sliced pass adds those of its time. */
  private grownBytes = 0;
  /** Holds the process to the budget (processBudget), and its sampling timer. */
  private readonly governor: MemoryGovernor | undefined;
  private governorTimer: NodeJS.Timeout | undefined;
  private baseRss = 0;
  /** During a sweep: every node written since it began (they are kept whatever the mark says). */
  private sweepWritten: Set<string> | undefined;
  private sweeping: Promise<void> | undefined;
  /**
   * Set once a streamed genesis gave this store its nodes with their places (writeNodes): the
   * subtrees below the state's resident levels then have their path records, and `start`
   * writes only those of the resident levels. In memory only: a node that stops before its
   * start wrote PATH_INDEX_KEY streams its genesis again when it restarts (no checkpoint yet).
   */
  private streamedRecords = false;
  /**
   * Per (fault depth, depth ahead): path records asked for and used (see AHEAD_MIN_RATE); and
   * the asks skipped so far (every AHEAD_EXPLORE-th is asked anyway).
   */
  private readonly aheadAsked = new Uint32Array(AHEAD_DEPTHS * PATH_AHEAD);
  private readonly aheadUsed = new Uint32Array(AHEAD_DEPTHS * PATH_AHEAD);
  private aheadSkipped = 0;
  private readonly stats = {
    roundTrips: 0,
    roundTripMs: 0,
    nodesFetched: 0,
    coalesced: 0,
    readRuns: 0,
    probeRuns: 0,
    syncReads: 0,
    pathNodes: 0,
    recordsAsked: 0,
    hashesAsked: 0,
    prunes: 0,
    fullPrunes: 0,
    evictMsMax: 0,
    evictPassMsMax: 0,
    evictSlices: 0,
    evictMs: 0,
    nodesWritten: 0,
    recordsReadBack: 0,
    corrupt: 0,
    sweeps: 0,
    nodesSwept: 0,
  };

  constructor(opts: Partial<TieredStoreOptions>, modules: TieredStoreModules) {
    this.opts = { ...defaultTieredStoreOptions, ...opts };
    if (
      !(this.opts.memoryBudget > 0) ||
      !Number.isInteger(this.opts.residentLevels) ||
      this.opts.residentLevels < 1 ||
      !(this.opts.cacheShare >= 0 && this.opts.cacheShare < 1)
    ) {
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `tiered store: expected a positive memory budget, residentLevels ≥ 1 and a cache share in [0, 1), found ${this.opts.memoryBudget}, ${this.opts.residentLevels} and ${this.opts.cacheShare}`,
      );
    }
    this.db = modules.db;
    this.sketch = FrequencySketch.forBudget(this.opts.memoryBudget);
    this.keccak = modules.hash ?? defaultKeccak;
    this.log = modules.logger ?? silentLogger;
    if (this.opts.processBudget) {
      this.governor = new MemoryGovernor({
        budget: this.opts.memoryBudget,
        overhead: this.opts.rssOverhead,
        fixedBytes: this.opts.rssFixedBytes,
      });
      this.baseRss = this.opts.baseRssBytes ?? rssAnonBytes();
      if (this.opts.rssSampleMs > 0) {
        this.governorTimer = setInterval(() => this.govern(rssAnonBytes()), this.opts.rssSampleMs);
        this.governorTimer.unref();
      }
    }
  }

  /**
   * One sample of the process' RSS (processBudget): the governor sets the nodes' share of the
   * budget, and a pass evicts to it. Public for tests, which give it the numbers.
   */
  govern(rssBytes: number): void {
    const g = this.governor;
    if (g === undefined) return;
    const before = g.state().share;
    const share = g.decide({ rssBytes, baseRssBytes: this.baseRss });
    if (share !== before)
      this.log.info('tiered budget share', { share, growth: g.state().growthBytes, limit: g.limitBytes });
    if (share < before) this.evictSoon();
  }

  /** Resolves once no eviction is under way (one asked for meanwhile included): for tests and benchmarks. */
  async evicted(): Promise<void> {
    while (this.evicting !== undefined) await this.evicting;
  }

  /** The nodes' share of the budget: the governor's, or all of it. */
  private get share(): number {
    return this.governor?.state().share ?? 1;
  }

  /**
   * The store's own counters as they are (not a copy, so nothing is allocated): for a caller
   * that reads a few of them around every request. tieredStats' object, made four times a read
   * by the benchmark's single-read loop, was a third of that loop's allocation and promoted
   * into the major GCs the loop then measured as cold-read latency.
   */
  get counters(): Readonly<TieredCounters> {
    return this.stats;
  }

  tieredStats(): TieredStats {
    return {
      ...this.stats,
      cacheHits: this.cache.hits,
      cacheMoved: this.cache.moved,
      cacheBytes: this.cache.bytes,
      cacheNodes: this.cache.size,
      cacheSlabBytes: this.cache.slabBytes,
      residentBytes: this.residentBytes,
      keepWants: this.keepWants,
      cacheKeepWants: this.cache.keepWants,
      sketchBytes: this.sketch.bytes,
      budgetShare: this.share,
      governorCuts: this.governor?.state().cuts ?? 0,
    };
  }

  /** Changes the memory budget (a benchmark's sweep, an operator's resize) and evicts to it now. */
  setMemoryBudget(bytes: number): void {
    this.opts.memoryBudget = bytes;
    if (this.governor !== undefined) this.governor.opts.budget = bytes;
    this.sketch = FrequencySketch.forBudget(bytes);
    if (this.givenLevels !== undefined) {
      this.opts.residentLevels = this.givenLevels;
      this.keepLevels();
    }
    this.evict(true);
  }

  /** VerifiedNodeSource: reads fault in what they meet above this depth (the kept levels), and walk packed below. */
  packedFrom = 0;
  /** residentLevels as given (and raised to the shard layout's depth) before keepLevels. */
  private givenLevels: number | undefined;

  /**
   * Keeps as objects, besides the levels asked for, every further whole level that fits in half
   * the trees' share of the budget (LEVEL_NODE_BYTES a node, 16^level nodes at most), and has
   * reads fault those in (packedFrom): a level held as objects is a pointer a read follows where
   * a packed one is a lookup in the cache and a scan of the node (~1.1 against ~0.45 µs a node
   * on a loaded box). At 1M and 10M accounts with a 10% budget: levels 0-3 (4,096 branches,
   * ~2.9 MB at the 3rd); level 4 (65K branches, ~46 MB) would not fit at either.
   */
  private keepLevels(): void {
    this.givenLevels ??= this.opts.residentLevels;
    let levels = this.opts.residentLevels;
    while (levels < 16 && 16 ** levels * LEVEL_NODE_BYTES <= this.treeBudget() / 2) levels++;
    this.opts.residentLevels = levels;
    this.packedFrom = levels;
  }

  // ------------------------------------------------------------ the trees' source

  /**
   * VerifiedNodeSource: a resident node for a tree to fault in (a block's writes), or undefined
   * (recorded as a miss of the read in progress).
   */
  getBin(hash: string, key?: Uint8Array, depth?: number): Uint8Array | undefined {
    const enc = this.cache.get(hash) ?? this.readCold(hash, key, depth);
    if (enc === undefined) return undefined;
    this.sketch.add(hash);
    this.grow(enc.length + FAULTED_NODE_OVERHEAD); // the tree now holds it as an object
    // Pinned for the run in progress, so no pass evicts it from the tree before the run ends.
    this.pin(hash);
    return enc;
  }

  /** Pins `hash` for the read in progress, if one is (see pinning). */
  private pin(hash: string): void {
    const p = this.pinning;
    if (p !== undefined && !p.has(hash)) {
      p.add(hash);
      this.cache.pin(hash);
    }
  }

  /** Where the encoding readBin found starts in the array it returned (VerifiedNodeSource). */
  readAt = 0;

  /**
   * VerifiedNodeSource: a resident node for a read that walks its encoding in place (reads and
   * proofs: the trees stay as they are, no node object is made), found by the hash's bytes in
   * its parent (no string or view made for a hit), or undefined (recorded as a miss of the read
   * in progress). Pinned (so no trim drops it before the read is answered) only while a read's
   * parts run or a read without parts does (pinHits): a batch read runs once its parts found
   * every node, and a run that misses nothing needs no pins (trims run between round trips,
   * never inside a run), so the batch's own run, two walks of every key's path, makes no
   * string and no pin for its hits; what a read fetched stays pinned until it ends (see fetch).
   */
  readBin(hashIn: Uint8Array, at: number, key: Uint8Array, depth: number): Uint8Array | undefined {
    const slab = this.cache.getAt(hashIn, at);
    if (slab !== undefined) {
      this.sketch.addAt(hashIn, at);
      if (this.pinHits) this.pin(byteKeyAt(hashIn, at, at + 32));
      this.readAt = this.cache.foundAt;
      return slab;
    }
    const hash = byteKeyAt(hashIn, at, at + 32);
    const enc = this.readCold(hash, key, depth);
    if (enc === undefined) return undefined;
    this.sketch.add(hash);
    this.readAt = 0;
    return enc;
  }

  /**
   * A node the cache lacks: read on the JS thread (syncReads), or undefined, recorded as a miss
   * of the read in progress (at its place when known).
   */
  private readCold(
    hash: string,
    key: Uint8Array | undefined,
    depth: number | undefined,
  ): Uint8Array | undefined {
    if (this.opts.syncReads && this.db.getSync !== undefined) {
      const got = this.db.getSync(keyOf(hash));
      // A node not there, or not hashing to its key, is left to the batched path (it refuses it).
      if (got !== undefined && binOf(this.keccak.keccak256(got)) === hash) {
        this.stats.syncReads++;
        this.stats.nodesFetched++;
        this.cache.set(hash, got, true);
        return got;
      }
    }
    const m = this.misses;
    if (m !== undefined && (key !== undefined || !m.has(hash)))
      m.set(hash, key === undefined ? undefined : { key, depth: depth ?? 0 });
    return undefined;
  }

  // ------------------------------------------------------------ VersionObserver

  /**
   * Writes every node of the starting state to LevelDB (idempotent: a restart writes them
   * again) with the path records it lacks, makes the store its trees' source and prunes it to
   * its top levels.
   */
  async start(v: Version): Promise<void> {
    const st = v.state.state;
    st.useSource(this);
    // Shard roots are read from the branches above the shards outside any fault-in (a block's
    // answer): those levels stay resident whatever was asked for.
    this.opts.residentLevels = Math.max(this.opts.residentLevels, v.state.layout.depth);
    this.keepLevels();
    const indexed = (await this.db.getMany([PATH_INDEX_KEY]))[0] !== undefined;
    // The resident account-trie nodes, for their path records (see writePathRecords).
    const resident = new Map<string, string>();
    let batch: (readonly [Buffer, Buffer])[] = [];
    const flushes: Promise<void>[] = [];
    const put = (hash: string, enc: string): void => {
      batch.push([keyOf(hash), Buffer.from(enc, 'latin1')]);
      if (batch.length >= this.opts.startBatch) {
        flushes.push(this.db.write(batch));
        batch = [];
      }
    };
    const seen = new Set<object>();
    if (!indexed) {
      st.rootBin();
      st.accounts.forEachNode((hash, enc) => {
        resident.set(hash, enc);
        put(hash, enc);
      }, seen);
    }
    st.forEachNode(put, seen);
    flushes.push(this.db.write(batch));
    await Promise.all(flushes);
    if (!indexed) await this.writePathRecords(v, resident);
    this.versions.set(v.id, v);
    this.pinCheckpoint(v, true);
    this.evict(true);
    this.log.info('tiered store started', {
      leveldb: this.db.where,
      number: Number(v.header.number),
      budget: this.opts.memoryBudget,
      residentBytes: this.residentBytes,
    });
  }

  /**
   * GenesisSink: a streamed genesis' nodes, straight to LevelDB, with the path records of its
   * account-trie nodes (one batch).
   */
  async writeNodes(nodes: readonly FreshNode[], placed: readonly PlacedNode[] = []): Promise<void> {
    const puts: (readonly [Buffer, Buffer])[] = new Array(nodes.length + placed.length);
    let i = 0;
    for (const n of nodes) puts[i++] = [keyOf(n.hash), Buffer.from(n.enc, 'latin1')];
    for (const n of placed) puts[i++] = [pathKey(n.path, n.depth), pathValue(n.hash, n.enc)];
    await this.db.write(puts);
    if (placed.length > 0) this.streamedRecords = true;
    this.stats.nodesWritten += nodes.length;
  }

  /**
   * The block's new nodes go to LevelDB (one batch, with the path records of its account-trie
   * nodes) before it is acknowledged; then eviction.
   */
  async adding(v: Version, fresh: readonly FreshNode[]): Promise<void> {
    const puts: (readonly [Buffer, Buffer])[] = new Array(fresh.length);
    const encs = new Map<string, string>();
    for (let i = 0; i < fresh.length; i++) {
      const n = fresh[i]!;
      puts[i] = [keyOf(n.hash), Buffer.from(n.enc, 'latin1')];
      encs.set(n.hash, n.enc);
      this.sweepWritten?.add(n.hash);
    }
    // The new nodes hang from the new root: the walk from it down through new nodes finds each
    // new account-trie node at its path (an unchanged node has no new node below it).
    const path = new Uint8Array(32);
    placeNodes(encs, v.state.state.accounts.rootBin(), 0, path, (hash, enc, depth) =>
      puts.push([pathKey(path, depth), pathValue(hash, enc)]),
    );
    await this.db.write(puts);
    this.stats.nodesWritten += fresh.length;
    this.writtenSinceSweep += fresh.length;
    for (const n of fresh) this.grow(n.enc.length + FAULTED_NODE_OVERHEAD);
    // The nodes a block wrote are the likeliest to be read next: they enter the cache.
    for (const n of fresh) this.cache.set(n.hash, n.enc, false);
    this.versions.set(v.id, v);
    this.pinCheckpoint(v, false);
    this.evictSoon();
  }

  /**
   * The path record (pathRecords.ts) of every account-trie node under `root`, then
   * PATH_INDEX_KEY (blocks write their own records; start calls this only while the key is
   * absent). A walk from the root: the `resident` nodes (hash → encoding) are placed from
   * memory; below them, a streamed genesis wrote its subtrees' records with their nodes
   * (streamedRecords), and otherwise (a checkpoint over a LevelDB of an older build) the nodes
   * are read back from LevelDB, a batch at a time, depth first (few held at once): 219 s for
   * the 1M-account benchmark state at load 15, once. Foreign shards are not walked (only their
   * roots are the node's).
   */
  private async writePathRecords(v: Version, resident: ReadonlyMap<string, string>): Promise<void> {
    const started = performance.now();
    const todo: { hash: string; depth: number; path: Uint8Array }[] = [
      { hash: v.state.state.accounts.rootBin(), depth: 0, path: new Uint8Array(0) },
    ];
    const shardDepth = v.state.layout.depth;
    const scratch = new Uint8Array(32);
    let puts: (readonly [Buffer, Buffer])[] = [];
    let records = 0;
    const place = (e: (typeof todo)[number], enc: Uint8Array | string): void => {
      scratch.fill(0).set(e.path);
      puts.push([pathKey(scratch, e.depth), pathValue(e.hash, enc)]);
      forEachChildOnPath(
        typeof enc === 'string' ? Buffer.from(enc, 'latin1') : enc,
        e.depth,
        scratch,
        (hash, depth) => {
          if (depth < shardDepth || v.state.holdsKey(scratch))
            todo.push({ hash, depth, path: scratch.slice(0, (depth + 1) >> 1) });
        },
      );
    };
    while (todo.length > 0) {
      const part = todo.splice(Math.max(0, todo.length - 10_000));
      const cold: typeof part = [];
      for (const e of part) {
        const enc = resident.get(e.hash);
        if (enc !== undefined) place(e, enc);
        else if (!this.streamedRecords) cold.push(e);
      }
      if (cold.length > 0) {
        const got = await this.db.getMany(cold.map((e) => keyOf(e.hash)));
        const present = got.filter((v): v is Buffer => v !== undefined);
        this.stats.recordsReadBack += present.length;
        const packed = present.length === 0 ? undefined : this.keccak.keccak256Batch(present);
        const digests = packed && Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
        let k = 0;
        cold.forEach((e, i) => {
          const enc = got[i];
          if (enc === undefined) return; // a foreign shard's subtree
          // A corrupt node has no record (a read needing it refuses it: see flush).
          if (digests!.toString('latin1', 32 * k, 32 * ++k) === e.hash) place(e, enc);
        });
      }
      if (puts.length >= this.opts.startBatch) {
        records += puts.length;
        await this.db.write(puts);
        puts = [];
      }
    }
    records += puts.length;
    puts.push([PATH_INDEX_KEY, Buffer.from([1])]);
    await this.db.write(puts);
    this.log.info('tiered path records written', {
      records,
      readBack: this.stats.recordsReadBack,
      ms: Math.round(performance.now() - started),
    });
  }

  dropped(gone: readonly Version[]): void {
    for (const v of gone) this.versions.delete(v.id);
    if (
      this.opts.gcEveryNodes > 0 &&
      this.writtenSinceSweep >= this.opts.gcEveryNodes &&
      this.sweeping === undefined
    ) {
      void this.sweep().catch((e: unknown) =>
        this.log.warn('tiered sweep failed', { error: e instanceof Error ? e.message : String(e) }),
      );
    }
  }

  async close(): Promise<void> {
    clearInterval(this.governorTimer);
    await this.evicting;
    await this.sweeping?.catch(() => undefined);
    await this.db.close();
  }

  private pinCheckpoint(v: Version, always: boolean): void {
    const every = BigInt(this.opts.checkpointEvery);
    if (!always && (every === 0n || v.header.number % every !== 0n)) return;
    this.checkpointVersions.push(v);
    if (this.checkpointVersions.length > 3) this.checkpointVersions.shift();
  }

  /** Every version whose nodes LevelDB must keep: the held ones and the last checkpoints'. */
  private retained(): Version[] {
    const all = new Map(this.versions);
    for (const v of this.checkpointVersions) all.set(v.id, v);
    return [...all.values()];
  }

  // ------------------------------------------------------------ eviction

  /**
   * Keeps memory within the budget (its share of it, with processBudget: see MemoryGovernor).
   * The trees get all of it but the cache's share, the sketch
   * and LevelDB's block cache. Since faults grow the trees in place (`inPlace` source), a pass over
   * every retained version turns the nodes below the top levels that were not wanted often
   * enough lately into stubs, in place (one copy of each node serves every version), and counts
   * what stays exactly. "Often enough":
   * at least `keepWants` wants in the frequency sketch, where a want is a fault of the node and
   * a pass finding it used since the last (its CLOCK bit). The bar rises while a pass leaves the
   * trees above HIGH_WATER of their budget (and a last pass evicts everything below the top
   * levels if MAX_PASSES did not do: `fullPrunes`) and falls when one leaves them under LOW_WATER.
   * Why frequency and not recency alone: see FrequencySketch. A node's wants are at least its
   * descendants' (every read of a node passes its ancestors), so what stays is a tree hanging
   * from the top levels, its most wanted paths. A pass goes a part of the account tries at a
   * time, yielding between slices (see EVICT_PART_DEPTH); reads and blocks run between them,
   * which is safe because each part is evicted in one go and a node a read in progress faulted
   * in is pinned. The cache then gives up its coldest unpinned entries until all fits.
   */
  private async evictInSlices(): Promise<void> {
    const treeBudget = this.treeBudget();
    if (this.residentBytes > treeBudget) {
      const started = performance.now();
      if (treeBudget <= 0) this.residentBytes = await this.evictPass(true);
      else {
        this.residentBytes = await this.evictPass(this.rule);
        for (let passes = 1; this.residentBytes > treeBudget * HIGH_WATER && passes < MAX_PASSES; passes++) {
          this.keepWants = Math.min(255, this.keepWants + Math.max(1, this.keepWants >> 2));
          this.residentBytes = await this.evictPass(this.rule);
        }
        if (this.residentBytes > treeBudget) {
          this.residentBytes = await this.evictPass(true);
          this.stats.fullPrunes++;
        } else if (this.residentBytes < treeBudget * LOW_WATER && this.keepWants > 1) this.keepWants--;
      }
      this.stats.prunes++;
      this.stats.evictPassMsMax = Math.max(this.stats.evictPassMsMax, performance.now() - started);
    }
    this.evictCache();
  }

  /**
   * Every node below the top levels goes, in one pass that does not yield (a budget changed, the
   * store started): what the tests' one-byte budgets and an operator's resize want at once.
   */
  private evict(force: true): void {
    const started = performance.now();
    const seen = new Set<object>();
    let bytes = 0;
    for (const v of this.retained()) bytes += v.state.state.evictCold(this.opts.residentLevels, seen, force);
    this.residentBytes = bytes;
    this.stats.prunes++;
    const ms = performance.now() - started;
    this.stats.evictMs += ms;
    this.stats.evictMsMax = Math.max(this.stats.evictMsMax, ms);
    this.stats.evictPassMsMax = Math.max(this.stats.evictPassMsMax, ms);
    this.evictCache();
  }

  /** What the trees and the cache share: the budget (its share) less the sketch and LevelDB's block cache. */
  private budgetNow(): number {
    return this.opts.memoryBudget * this.share - this.opts.leveldbCacheBytes;
  }

  private treeBudget(): number {
    return this.budgetNow() * (1 - this.opts.cacheShare) - this.sketch.bytes;
  }

  /**
   * Once the cache is over its budget, trims it to TRIM_SLACK of the budget below (the budget
   * still holds). A trim to the budget itself after every cold read (a few entries over) moved
   * at least 64 entries to drop those few, into new arena slabs: Buffers whose memory V8 counts
   * against the old generation's limit, so under single reads mark-compacts ran back to back
   * (17-31 in 3 s at 1M, 10%, against 6-11 with trims batched; bench/tiered.ts, session 16), a
   * pause or a long marking step inside the slowest cold reads.
   */
  private evictCache(): void {
    const budget = this.budgetNow();
    if (this.residentBytes + this.cache.bytes + this.sketch.bytes > budget) {
      const started = performance.now();
      const to = budget - trimSlack(budget) - this.residentBytes - this.sketch.bytes;
      this.cache.evictTo(Math.max(0, to), this.wantsOf);
      this.stats.evictMs += performance.now() - started;
    }
  }

  private grow(bytes: number): void {
    this.residentBytes += bytes;
    this.grownBytes += bytes;
  }

  /** How often a node was wanted lately: what the cache keeps by (see NodeCache.evictTo). */
  private readonly wantsOf = (bytes: Uint8Array, at: number): number => this.sketch.estimateAt(bytes, at);

  /** What a pass evicts (see evict): a node not wanted `keepWants` times lately. */
  private readonly rule: EvictRule = (hash, n) => {
    if (n.used) {
      this.sketch.add(hash);
      this.cache.touch(hash); // still used: its encoding stays cached for when the tree lets it go
    }
    // A node a read in progress faulted in stays until that read is answered.
    return this.sketch.estimate(hash) < this.keepWants && !this.cache.isPinned(hash);
  };

  /**
   * Evicts once the current request has answered (a pass walks every resident node: not on
   * any request's path); requests that end meanwhile share it, and one that ends during a pass
   * has the budget checked again after it.
   */
  private evictSoon(): void {
    if (this.evicting !== undefined) {
      this.evictAgain = true;
      return;
    }
    const run = async (): Promise<void> => {
      try {
        do {
          this.evictAgain = false;
          await new Promise<void>((resolve) => setImmediate(resolve));
          await this.evictInSlices();
        } while (this.evictAgain && this.residentBytes > this.treeBudget());
      } catch (e) {
        this.log.warn('tiered eviction failed', { error: e instanceof Error ? e.message : String(e) });
      } finally {
        this.evicting = undefined;
      }
    };
    this.evicting = run();
  }

  /**
   * One pass over every retained version (see evictInSlices), a part at a time; the bytes left
   * resident: those it counted, and those faults and blocks added while it yielded (some of them
   * counted twice: an over-estimate the next pass corrects).
   */
  private async evictPass(rule: EvictRule): Promise<number> {
    const depth = Math.max(0, Math.min(EVICT_PART_DEPTH, this.opts.residentLevels - 1));
    const parts = 16 ** depth;
    const part: number[] = new Array<number>(depth).fill(0);
    const seen = new Set<object>();
    const grownBefore = this.grownBytes;
    let bytes = 0;
    await this.tripsFirst();
    let slice = performance.now();
    for (let p = 0; p < parts; p++) {
      for (let d = 0, x = p; d < depth; d++, x >>= 4) part[depth - 1 - d] = x & 15;
      for (const v of this.retained())
        bytes += v.state.state.evictColdPart(part, this.opts.residentLevels, seen, rule);
      const now = performance.now();
      if (now - slice >= this.opts.evictSliceMs || p === parts - 1) {
        this.stats.evictSlices++;
        this.stats.evictMs += now - slice;
        this.stats.evictMsMax = Math.max(this.stats.evictMsMax, now - slice);
        if (p < parts - 1) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          await this.tripsFirst();
          slice = performance.now();
        }
      }
    }
    return bytes + (this.grownBytes - grownBefore);
  }

  /**
   * Waits for the LevelDB round trips out now and for the reads they resume: a slice of a pass
   * that ran while a cold read's round trip was out held that read for the slice (on a loaded
   * box, a 4 ms slice took 40-145 ms) and took the CPU LevelDB's thread needed. A cold read
   * makes one round trip (path records), so it then waits for no slice but one already running
   * when it came. A pass waits at most one round trip a slice, so reads in a row slow it, never stop it.
   */
  private async tripsFirst(): Promise<void> {
    // Memory first once the trees are well over their budget (under a stream of batches a pass
    // that waited every slice took 24 s and the trees went 23% over): then slices go on.
    const limit = this.treeBudget() * OVERSHOOT;
    if (limit > 0 && this.residentBytes > limit) return;
    const out = new Set(this.inflight.values());
    if (this.queued !== undefined) out.add(this.queued);
    if (out.size === 0) return;
    await Promise.allSettled([...out].map((t) => t.done));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  // ------------------------------------------------------------ faulting in

  async run<T>(read: () => T, probes?: () => readonly (() => unknown)[]): Promise<T> {
    const pinned = new Set<string>();
    const absent = new Set<string>();
    /** Parts of the read that still reach nodes not resident (all of them, until the read misses once). */
    let pending: (() => unknown)[] | undefined;
    let fetched = false;
    try {
      // The last read with parts had to fetch: this one likely does too, so its parts find what
      // it misses before the read runs (a read that misses is run again once all is resident:
      // its first run would be wasted, and it costs more than its parts' paths).
      try {
        if (probes !== undefined && this.probeFirst) pending = [...probes()];
      } catch {
        // a request its parts cannot even name (an unknown version): the read says why
      }
      for (;;) {
        if (pending !== undefined && pending.length > 0) {
          // Only the parts that missed last time, until none does: then the read itself.
          const want: Wants = new Map();
          this.pinning = pinned;
          this.pinHits = true;
          pending = pending.filter((p) => this.probe(p, absent, want));
          this.pinHits = false;
          this.pinning = undefined;
          if (want.size > 0) {
            fetched = true;
            const found = await this.fetch(want, pinned);
            for (const h of want.keys()) if (!found.has(h)) absent.add(h);
            continue;
          }
        }
        this.misses = new Map();
        this.pinning = pinned;
        // A read with parts pins nothing it reads in place: when it misses, its parts run (and pin).
        this.pinHits = probes === undefined;
        let result: T | undefined;
        let error: unknown;
        let threw = false;
        this.stats.readRuns++;
        try {
          result = read();
        } catch (e) {
          error = e;
          threw = true;
        }
        this.pinning = undefined;
        this.pinHits = false;
        const want: Wants = new Map();
        for (const [h, place] of this.misses) if (!absent.has(h)) want.set(h, place);
        if (want.size === 0) {
          this.misses = undefined;
          if (threw) throw error;
          return result as T;
        }
        // The read missed: every part is probed again (all of them the first time, and again if
        // a pass evicted a part already faulted in), so one round trip serves every key's miss.
        if (probes !== undefined && (pending === undefined || pending.length === 0)) {
          this.pinning = pinned;
          this.pinHits = true;
          pending = probes().filter((p) => this.probe(p, absent, want));
          this.pinHits = false;
          this.pinning = undefined;
        }
        this.misses = undefined;
        fetched = true;
        const found = await this.fetch(want, pinned);
        for (const h of want.keys()) if (!found.has(h)) absent.add(h);
      }
    } finally {
      this.misses = undefined;
      this.pinning = undefined;
      this.pinHits = false;
      for (const h of pinned) this.cache.unpin(h);
      if (probes !== undefined) this.probeFirst = fetched;
      this.evictSoon();
    }
  }

  /** Runs one part of a read; adds what it missed to `want`; true when it missed something. */
  private probe(p: () => unknown, absent: ReadonlySet<string>, want: Wants): boolean {
    const misses = this.probeMisses;
    this.misses = misses;
    this.stats.probeRuns++;
    // A probe's MissingNode is thrown away: no stack trace to capture (most of its cost).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      p();
    } catch {
      // a probe only finds misses; the read itself says what fails
    } finally {
      Error.stackTraceLimit = limit;
    }
    let missed = false;
    for (const [h, place] of misses) {
      if (absent.has(h)) continue;
      if (place !== undefined || !want.has(h)) want.set(h, place);
      missed = true;
    }
    misses.clear();
    this.misses = undefined;
    return missed;
  }

  /**
   * Brings `hashes` into the cache (pinned for the caller until it ends): one getMany for all
   * that are neither cached nor on the way; those on the way are waited for. Resolves with the
   * hashes that are now cached (the others are not in LevelDB either). One promise per round
   * trip, not per node: a batch faults thousands of nodes a round trip.
   */
  private async fetch(wants: Wants, pinned: Set<string>): Promise<Set<string>> {
    const waits = new Map<Trip, string[]>();
    for (const [h, place] of wants) {
      if (!pinned.has(h)) {
        pinned.add(h);
        this.cache.pin(h);
      }
      if (this.cache.has(h)) continue;
      let trip = this.inflight.get(h);
      if (trip !== undefined) this.stats.coalesced++;
      else {
        trip = this.nextTrip();
        trip.hashes.push(h);
        trip.places.push(place);
        this.inflight.set(h, trip);
      }
      const mine = waits.get(trip);
      if (mine === undefined) waits.set(trip, [h]);
      else mine.push(h);
    }
    await Promise.all([...waits.keys()].map((t) => t.done));
    // A node LevelDB returned corrupt fails the reads that need it, not the others of its trip.
    for (const [trip, mine] of waits) {
      for (const h of mine) {
        const refused = trip.refused?.get(h);
        if (refused !== undefined) throw refused;
      }
    }
    const found = new Set<string>();
    for (const h of wants.keys()) if (this.cache.has(h)) found.add(h);
    return found;
  }

  /** The round trip faults join until it leaves (at the end of this microtask queue). */
  private nextTrip(): Trip {
    if (this.queued !== undefined) return this.queued;
    let settle!: (e?: unknown) => void;
    const done = new Promise<void>((resolve, reject) => {
      settle = (e) => (e === undefined ? resolve() : reject(e));
    });
    const trip: Trip = { hashes: [], places: [], done, settle, refused: undefined };
    this.queued = trip;
    queueMicrotask(() => void this.flush(trip));
    return trip;
  }

  /**
   * One LevelDB round trip for every fault queued since the last, with the path records of the
   * faults that know their place (see PATH_AHEAD); each value checked against its key in one
   * batched keccak call before it enters the cache.
   */
  private async flush(trip: Trip): Promise<void> {
    this.queued = undefined;
    const hashes = trip.hashes;
    // The keys: the hashes, then the path records (see askAhead). recordOf[i * PATH_AHEAD + a - 1]:
    // where in `keys` the record `a` depths below place i is, or -1. Two places rarely share a
    // record (their stubs differ and the records are deeper), so none is looked for: a duplicate
    // key costs less than a string and a map entry for every key.
    const keys: Buffer[] = hashes.map(keyOf);
    const recordOf = new Int32Array(trip.places.length * PATH_AHEAD).fill(-1);
    let placed = 0;
    for (const place of trip.places) if (place !== undefined) placed++;
    const all = placed < AHEAD_ALL_BELOW;
    for (let i = 0; i < trip.places.length; i++) {
      const place = trip.places[i];
      if (place === undefined) continue;
      const end = Math.min(place.depth + PATH_AHEAD, place.key.length * 2);
      for (let d = place.depth + 1; d <= end; d++) {
        if (!this.askAhead(place.depth, d - place.depth, all)) continue;
        recordOf[i * PATH_AHEAD + d - place.depth - 1] = keys.length;
        keys.push(pathKey(place.key, d));
      }
    }
    let got: (Buffer | undefined)[];
    this.stats.recordsAsked += keys.length - hashes.length;
    this.stats.hashesAsked += hashes.length;
    try {
      this.stats.roundTrips++;
      const started = performance.now();
      got = await this.getMany(keys);
      this.stats.roundTripMs += performance.now() - started;
    } catch (e) {
      for (const h of hashes) this.inflight.delete(h);
      trip.settle(e);
      return;
    }
    const present: Uint8Array[] = [];
    for (let i = 0; i < got.length; i++) {
      const v = got[i];
      if (v === undefined) continue;
      if (i < hashes.length) present.push(v);
      else if (v.length > 32) present.push(v.subarray(32));
    }
    const packed = present.length === 0 ? undefined : this.keccak.keccak256Batch(present);
    const digests = packed && Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
    let k = 0;
    const nodes: (Uint8Array | undefined)[] = new Array(hashes.length);
    hashes.forEach((h, i) => {
      this.inflight.delete(h);
      const enc = got[i];
      if (enc === undefined) return;
      const found = digests!.toString('latin1', 32 * k, 32 * k + 32);
      k++;
      if (found !== h) {
        const e = this.refuse('a node', h, found);
        trip.refused ??= new Map();
        trip.refused.set(h, e);
        return;
      }
      this.stats.nodesFetched++;
      nodes[i] = enc;
      this.cache.set(h, enc, false); // pinned until its read ends (see NodeCache.get)
    });
    if (keys.length > hashes.length) this.takePaths(trip, got, hashes.length, nodes, digests, k, recordOf);
    trip.settle();
  }

  /**
   * The path records a trip brought (got[first...]): each placed fault's path followed down from
   * its node through the records that hash to what their parent names there, into the cache; a
   * record that does not hash to its stored hash is refused and reported (the read goes on by
   * hash), one of another version is left out.
   */
  private takePaths(
    trip: Trip,
    got: readonly (Buffer | undefined)[],
    first: number,
    nodes: readonly (Uint8Array | undefined)[],
    digests: Buffer | undefined,
    k: number,
    recordOf: Int32Array,
  ): void {
    // By key index: each record's hash, if it hashes to it (its encoding is got[i] past 32 bytes).
    const hashOf: (string | undefined)[] = new Array(got.length);
    for (let i = first; i < got.length; i++) {
      const v = got[i];
      if (v === undefined || v.length <= 32) continue;
      const hash = v.toString('latin1', 0, 32);
      const found = digests!.toString('latin1', 32 * k, 32 * k + 32);
      k++;
      if (found !== hash) this.refuse('a path record', hash, found);
      else hashOf[i] = hash;
    }
    for (let i = 0; i < trip.places.length; i++) {
      const place = trip.places[i];
      let enc = nodes[i];
      if (place === undefined || enc === undefined) continue;
      let depth = place.depth;
      for (;;) {
        const next = nextOnPath(enc, place.key, depth);
        if (next === undefined || next.depth > place.depth + PATH_AHEAD) break;
        const r = recordOf[i * PATH_AHEAD + next.depth - place.depth - 1]!;
        if (r < 0 || hashOf[r] !== next.hash) break;
        this.aheadUsed[aheadAt(place.depth, next.depth - place.depth)]!++;
        const rec = got[r]!.subarray(32);
        if (!this.cache.has(next.hash)) {
          this.cache.set(next.hash, rec, false);
          this.stats.nodesFetched++;
          this.stats.pathNodes++;
        }
        enc = rec;
        depth = next.depth;
      }
    }
  }

  /**
   * Whether a fault at `depth` asks for the path record `ahead` depths below it (see
   * AHEAD_MIN_RATE; `all`: yes, see AHEAD_ALL_BELOW), counted as asked if so.
   */
  private askAhead(depth: number, ahead: number, all: boolean): boolean {
    const i = aheadAt(depth, ahead);
    const asked = this.aheadAsked[i]!;
    if (
      !all &&
      asked >= AHEAD_LEARN &&
      this.aheadUsed[i]! * AHEAD_MIN_RATE < asked &&
      ++this.aheadSkipped % AHEAD_EXPLORE !== 0
    )
      return false;
    if (asked >= AHEAD_HALVE) {
      this.aheadAsked[i] = asked >> 1;
      this.aheadUsed[i]! >>= 1;
    }
    this.aheadAsked[i]!++;
    return true;
  }

  /** Counts and logs a value from LevelDB that does not hash to `expected`; the error a read needing it gets. */
  private refuse(what: string, expected: string, found: string): StorageError {
    this.stats.corrupt++;
    this.log.error(`corrupt ${what === 'a node' ? 'node' : 'path record'} from LevelDB`, {
      leveldb: this.db.where,
      expected: toHex(keyOf(expected)),
      found: toHex(keyOf(found)),
    });
    return new StorageError(
      StorageErrorCode.CorruptNode,
      `LevelDB at ${this.db.where} returned ${what} for ${toHex(keyOf(expected))} that hashes to ${toHex(keyOf(found))}; refused`,
      { expected: toHex(keyOf(expected)), found: toHex(keyOf(found)) },
    );
  }

  /**
   * One round trip for `keys`: a large one split into up to GET_MANY_PARTS getMany calls sent
   * together (a LevelDB in process reads each on its own thread-pool thread; a remote one
   * pipelines them on its socket).
   */
  private async getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]> {
    const parts = Math.min(GET_MANY_PARTS, Math.ceil(keys.length / GET_MANY_MIN_PART));
    if (parts <= 1) return this.db.getMany(keys);
    const size = Math.ceil(keys.length / parts);
    const got = await Promise.all(
      Array.from({ length: parts }, (_, i) => this.db.getMany(keys.slice(i * size, (i + 1) * size))),
    );
    return got.flat();
  }

  // ------------------------------------------------------------ garbage

  /**
   * An epoch mark-and-sweep of LevelDB. Mark: every node reachable from the retained versions'
   * roots (account trie, and every storage trie an account names), read level by level in
   * batched round trips. Sweep: delete every node key not marked, except the nodes written since
   * the mark began (a block applied meanwhile may share nodes only with versions retained at
   * the start, which are marked, or write them anew, which records them). Runs in the
   * background; one at a time.
   */
  sweep(): Promise<void> {
    if (this.sweeping !== undefined) return this.sweeping;
    const run = async (): Promise<void> => {
      const started = performance.now();
      this.writtenSinceSweep = 0;
      this.sweepWritten = new Set();
      try {
        const marked = await this.mark(this.retained());
        let deleted = 0;
        for await (const keys of this.db.keys(10_000)) {
          const dels = keys.filter((k) => {
            if (k.length !== 32) return false;
            const h = binOf(k);
            return !marked.has(h) && !this.sweepWritten!.has(h);
          });
          if (dels.length > 0) await this.db.write([], dels);
          deleted += dels.length;
        }
        this.stats.sweeps++;
        this.stats.nodesSwept += deleted;
        this.log.info('tiered sweep done', {
          live: marked.size,
          deleted,
          ms: Math.round(performance.now() - started),
        });
      } finally {
        this.sweepWritten = undefined;
        this.sweeping = undefined;
      }
    };
    this.sweeping = run();
    return this.sweeping;
  }

  /** The hashes of every node reachable from `versions` (see sweep). */
  private async mark(versions: readonly Version[]): Promise<Set<string>> {
    const marked = new Set<string>();
    // [hash, is an account trie node]
    let frontier: [string, boolean][] = [];
    for (const v of versions) frontier.push([v.state.state.accounts.rootBin(), true]);
    while (frontier.length > 0) {
      const todo = frontier.filter(([h]) => {
        if (marked.has(h) || h === EMPTY_ROOT_BIN) return false;
        marked.add(h);
        return true;
      });
      frontier = [];
      const encs: (Uint8Array | undefined)[] = todo.map(([h]) => this.cache.peek(h));
      const cold = todo.map((_, i) => i).filter((i) => encs[i] === undefined);
      for (let s = 0; s < cold.length; s += 10_000) {
        const part = cold.slice(s, s + 10_000);
        const got = await this.db.getMany(part.map((i) => keyOf(todo[i]![0])));
        part.forEach((i, k) => {
          encs[i] = got[k];
        });
      }
      todo.forEach(([, accountTrie], i) => {
        const enc = encs[i];
        if (enc === undefined) return; // a foreign shard's subtree: not ours to keep
        childRefs(rlpDecode(enc), accountTrie, frontier);
      });
    }
    return marked;
  }
}

/** Where the ahead counts of a fault at `depth` and a record `ahead` (1..PATH_AHEAD) below it are. */
const aheadAt = (depth: number, ahead: number): number =>
  Math.min(depth, AHEAD_DEPTHS - 1) * PATH_AHEAD + ahead - 1;

/** The hash references of a node (children, and an account leaf's storage root) onto `out`. */
function childRefs(node: RlpValue, accountTrie: boolean, out: [string, boolean][]): void {
  if (!Array.isArray(node)) return;
  if (node.length === 17) {
    for (let i = 0; i < 16; i++) {
      const c = node[i]!;
      if (!Array.isArray(c) && c.length === 32) out.push([binOf(c), accountTrie]);
    }
    return;
  }
  if (node.length !== 2) return;
  const path = node[0] as Uint8Array;
  const leaf = path.length > 0 && path[0]! >> 4 >= 2;
  const v = node[1]!;
  if (!leaf) {
    if (!Array.isArray(v) && v.length === 32) out.push([binOf(v), accountTrie]);
    return;
  }
  if (accountTrie && !Array.isArray(v)) {
    const account = rlpDecode(v);
    if (Array.isArray(account) && account.length === 4) {
      const root = account[2]!;
      if (!Array.isArray(root) && root.length === 32) out.push([binOf(root), false]);
    }
  }
}
