/**
 * State read from the storage shards and trusted only as far as it is proven. Every node and
 * code blob a storage node sends goes into one content-addressed cache; a state at a root is a
 * StateTree known only by that root whose stubs resolve from the cache, so a node is used only
 * where a hash the root commits to points at it (a forged node is never used). Answers are
 * checked against what the proofs say before anything is cached: a storage node that claims a
 * wrong value, or sends a proof that does not reach the key, is refused (BAD_PROOF) and the
 * read goes to another replica.
 *
 * The cache is bounded in two generations: when the newer one holds half of `maxCachedNodes` it
 * becomes the older one and the oldest is dropped; a node found in the older one moves to the
 * newer. Every block replaces the upper nodes of the paths it touched, so most cached nodes are
 * dead within a few blocks: what is still used stays, the rest goes (a client cached ~46,000
 * nodes a minute under the soak's load, ~1 KiB each).
 */
import {
  type Account,
  byteKey,
  bytesEqual,
  DsmError,
  DsmErrorCode,
  decodeAccount,
  EMPTY_CODE_HASH,
  EMPTY_ROOT,
  hashedChildren,
  hashOne,
  isDsmError,
  NodeBag,
  readWhole,
  type SharedNodes,
  StateTree,
  toHex,
  type WalkedPath,
  walkPath,
} from '@monsoon/dsm-tree';
import { ExecutionErrorCode, isExecutionError } from '@monsoon/execution';
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { type AccountQuery, atHash, type BatchGetResponse } from '@monsoon/protocol';
import { ClientError, ClientErrorCode } from './clientError.js';
import type { ShardedStorage, StorageReplica } from './shardedStorage.js';
import type { OneSidedAnswer, OneSidedReads } from './storageTransport.js';

/** A block whose state can be read: its hash (what storage nodes are asked at) and state root. */
export interface StateRef {
  readonly blockHash: Uint8Array;
  readonly stateRoot: Uint8Array;
}

/**
 * A tree at a state root, with every node and code blob it was handed: what a read-only run of
 * {@link RemoteState.withState} leaves, for the next run at the same root to start from (the
 * nodes it decoded, all proven against that root, are not looked up and decoded again).
 */
export interface ReadTree {
  readonly stateRoot: Uint8Array;
  readonly tree: StateTree;
  readonly served: NodeBag;
}

/**
 * Accounts read by walking cached paths at a state root (RemoteState.readAccounts), handed on
 * like a ReadTree: a plain transfer's admission reads its three accounts, and its pre-execution
 * at the same root takes those reads (their paths are its witness) instead of walking again.
 */
export interface AccountReads {
  readonly stateRoot: Uint8Array;
  readonly reads: readonly AccountRead[];
}

/** What a read at a state root leaves for a next run there: its tree, or its accounts' paths. */
export type PriorRead = ReadTree | AccountReads;

/** An account read from cached nodes at a state root (see RemoteState.readAccounts). */
export interface AccountRead {
  readonly address: Uint8Array;
  readonly account: Account | undefined;
  /** The nodes the read was handed, root first: its witness. */
  readonly path: WalkedPath;
}

/**
 * The witness of accounts read by walking cached paths (RemoteState.readAccounts): the union of
 * their paths' nodes, which is what a tree reading the same accounts would have been handed.
 * Kept as the paths themselves: no bag per transaction.
 */
export class PathWitness {
  constructor(readonly reads: readonly AccountRead[]) {}

  /** The nodes, each once. */
  values(): Uint8Array[] {
    const out: Uint8Array[] = [];
    this.forEachOnce((_, n) => void out.push(n));
    return out;
  }

  /** Bytes of the nodes, each once (what NodeBag.byteSize says of a bag of them). */
  get byteSize(): number {
    let bytes = 0;
    this.forEachOnce((_, n) => {
      bytes += n.length;
    });
    return bytes;
  }

  /**
   * Each node once. Paths from one root share their upper nodes: a node is skipped where an
   * earlier path holds the same hash at the same depth (paths that part never meet again).
   */
  forEachOnce(f: (hash: string, node: Uint8Array) => void): void {
    const rs = this.reads;
    for (let k = 0; k < rs.length; k++) {
      const { hashes, nodes } = rs[k]!.path;
      for (let i = 0; i < hashes.length; i++) {
        const h = hashes[i]!;
        let dup = false;
        for (let m = 0; m < k && !dup; m++) dup = rs[m]!.path.hashes[i] === h;
        if (!dup) f(h, nodes[i]!);
      }
    }
  }
}

/**
 * What a view keeps of an account it read (RemoteState.readCached): the account and its hashed
 * key, and the read with its path only once it was read HOT_READ_USES times at the root (the
 * coinbase, which every transaction reads). Kept per root for a few blocks, a path's strings,
 * views and arrays (~20 objects an account) outlived two scavenges and were promoted, for a walk
 * that costs a few lookups in the cache; an account read once or twice (a sender, a recipient)
 * walks it again and hands it to its transaction alone.
 */
interface KnownAccount {
  readonly account: Account | undefined;
  readonly key: Uint8Array;
  uses: number;
  read: AccountRead | undefined;
  /**
   * The path the answer's check walked when readAccounts fetched the account, for the read that
   * follows the fetch (taken once): that read walked the same nodes again, from the same root.
   */
  fresh: WalkedPath | undefined;
}

/** Reads of an account at a root after which a view keeps its path (see KnownAccount). */
const HOT_READ_USES = 3;

/**
 * Hashed keys of addresses kept, per generation (see RemoteState.addressKey): the accounts
 * transactions read at one root are mostly read again at the next (a hot set sends and receives
 * most transactions), and a view per root hashed each of them again, every block.
 */
const MAX_ADDRESS_KEYS = 32_768;

/** What a run used, to be bagged for a miner: a tree's served nodes, or the paths of accounts read. */
export type Witness = NodeBag | PathWitness;

/** State roots whose account reads are kept (the state head and the few before it that reads still name). */
const MAX_READ_VIEWS = 6;

export interface WithStateOptions {
  /** Fetch rounds at most (default 8). */
  maxRounds?: number;
  /**
   * A tree read before and left unchanged, to run on: used only where its root is the state's
   * (a tree proven under another root is never read from), else a fresh tree is.
   */
  from?: ReadTree;
}

export interface RemoteStateOptions {
  /** Levels of the account trie the miners retain: proof nodes above them are never sent in bags. */
  compactLevels: number;
  /** Cached nodes kept at most, in two generations (everything is refetchable). */
  maxCachedNodes: number;
  /**
   * How long reads wait for more reads to join their BatchGet, ms (0: only those of the same
   * event-loop turn). A gRPC call costs the client ~0.1–0.2 ms of CPU whatever it carries: at a
   * few hundred transactions/s, one call per turn was one or two calls per transaction.
   */
  batchWindowMs?: number;
}

/** Reads' default batching window, ms (see RemoteStateOptions.batchWindowMs). */
export const DEFAULT_READ_BATCH_WINDOW_MS = 1;

/** ~200 MiB of nodes at most: a few minutes of blocks at the main job's load. */
export const DEFAULT_MAX_CACHED_NODES = 200_000;

export interface FetchCounters {
  /** BatchGet calls made. */
  calls: number;
  /** Bytes of nodes and code received. */
  bytes: number;
  /** Answers refused as wrong. */
  refused: number;
  /** Batches answered by one-sided walks (no BatchGet). */
  oneSided: number;
}

/** A BatchGet answer as `check` proved it: its nodes under the hashes computed, and the tree that read them. */
/** A decoded node as a SharedNodes store holds it. */
type SharedNode = NonNullable<ReturnType<SharedNodes['get']>>;

/** Decoded branches shared between trees, per generation (see SharedDecoded). */
const MAX_SHARED_DECODED = 16_384;

/**
 * A query with its account's hashed key, once computed: a query goes from the probe of what is
 * lacking to the batch's routing and on to the answer's check, and each hashed the address again.
 */
type KeyedQuery = AccountQuery & {
  key?: Uint8Array;
  /** readAccounts' own query: the answer's check keeps the path it walked for the read after (KnownAccount.fresh). */
  keepPath?: boolean;
};

/** The query's hashed key, computed at most once. */
function keyOf(keccak: Keccak, q: KeyedQuery): Uint8Array {
  return q.key ?? hashOne(keccak, q.address);
}

/** Most account queries in one BatchGet. */
const MAX_BATCH = 1000;

interface PendingBatch {
  readonly at: StateRef;
  /** A shard of the batch's route (its queries may be in any shard of the route). */
  readonly shard: number;
  readonly queries: KeyedQuery[];
  readonly waiters: Waiter[];
}

/** A fetch call waiting for the batches it joined: resolved when the last of them (`left`) is answered, rejected at the first failure. */
interface Waiter {
  left: number;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

export class RemoteState {
  private readonly batches = new Map<string, PendingBatch>();
  /** Cached nodes, the newer generation and the older one (see the file's comment). */
  private cache: NodeBag;
  private older: NodeBag;
  /** Hashes (binary strings) of account-trie nodes above the compaction level (the miners hold them), per generation. */
  private top = new Set<string>();
  private olderTop = new Set<string>();
  /**
   * Branches decoded from cached nodes, shared by every tree read here (see
   * VerifiedNodeSource.decoded), in two generations like the cache: a BatchGet's check and
   * every pre-execution at the same root decoded the same upper nodes each again.
   */
  private readonly decoded = new SharedDecoded();
  /**
   * Accounts read by walking cached paths, per state root (binary string), by address: one
   * verified read per account and root, shared by every transaction reading it (the coinbase,
   * a sender at its admission and again at its pre-execution). A view keeps the account and its
   * hashed key, not the path (see KnownAccount).
   */
  private readonly views = new Map<string, Map<string, KnownAccount>>();
  /** The state root rootBin saw last, and its binary string. */
  private lastRoot: Uint8Array | undefined;
  private lastRootBin = '';
  readonly counters: FetchCounters = { calls: 0, bytes: 0, refused: 0, oneSided: 0 };
  /** The block of the last batch key made, and its hex (see batchKey). */
  private keyBlock: Uint8Array | undefined;
  private keyBlockHex = '';
  /** Batch keys at keyBlock, by route. */
  private readonly routeKeys = new Map<string, string>();
  /** Hashed keys of addresses by their binary strings, the newer generation and the older one (see addressKey). */
  private keys = new Map<string, Uint8Array>();
  private olderKeys = new Map<string, Uint8Array>();

  constructor(
    readonly storage: ShardedStorage,
    readonly opts: RemoteStateOptions,
    private readonly keccak: Keccak = defaultKeccak,
    /** A one-sided transport tried before BatchGet (shm, rdma); see storageTransport.ts. */
    readonly oneSided?: OneSidedReads,
  ) {
    this.cache = new NodeBag({ hash: keccak });
    this.older = new NodeBag({ hash: keccak });
  }

  /** Nodes cached now, both generations. */
  get cachedNodes(): number {
    return this.cache.size + this.older.size;
  }

  /** The cached node with hash `h` (binary string), moved to the newer generation; noted in `served` when given. */
  private cached(h: string, served?: NodeBag): Uint8Array | undefined {
    const n = served === undefined ? this.cache.getBin(h) : served.takeFrom(this.cache, h);
    if (n !== undefined || this.older.size === 0) return n;
    const o = this.cache.takeFrom(this.older, h);
    if (o !== undefined) served?.takeFrom(this.cache, h);
    return o;
  }

  /**
   * A tree at `root` resolving from the cache. `served`, when given, collects every node and
   * code blob the tree was handed (an execution's witness). The cache holds each node under the
   * hash it computed when the node arrived, so the tree takes nodes from it without hashing
   * them again (a node is used only where a hash the root commits to names it).
   */
  tree(root: Uint8Array, served?: NodeBag): StateTree {
    return StateTree.fromRootHash(root, {
      hash: this.keccak,
      source: {
        getBin: (h) => this.cached(h, served),
        decoded: this.decoded,
      },
      // Code blobs (looked up by code hash, not through the trie).
      // Noted in `served` under the hash it is cached by, not hashed again (a contract's code
      // at every call).
      resolver: (h) => this.cached(byteKey(h), served),
    });
  }

  /**
   * The hashed key (keccak-256) of `address`, whose binary string is `a`: kept across roots in
   * two generations of MAX_ADDRESS_KEYS (one found in the older moves to the newer), computed
   * where neither holds it.
   */
  private addressKey(a: string, address: Uint8Array): Uint8Array {
    let k = this.keys.get(a);
    if (k !== undefined) return k;
    k = this.olderKeys.get(a) ?? hashOne(this.keccak, address);
    if (this.keys.size >= MAX_ADDRESS_KEYS) {
      this.olderKeys = this.keys;
      this.keys = new Map();
    }
    this.keys.set(a, k);
    return k;
  }

  /** A fresh tree at `stateRoot` that collects what it is handed. */
  private readTree(stateRoot: Uint8Array): ReadTree {
    const served = new NodeBag({ hash: this.keccak });
    return { stateRoot, tree: this.tree(stateRoot, served), served };
  }

  /** Whether the node with this hash (a binary string) sits in the account trie above the compaction level. */
  private isTop(hash: string): boolean {
    return this.top.has(hash) || this.olderTop.has(hash);
  }

  /** The nodes of `served` a miner needs (those above the compaction level left out), without hashing any. */
  bagOf(served: Witness): NodeBag {
    const bag = new NodeBag({ hash: this.keccak });
    this.addToBag(bag, served);
    return bag;
  }

  /**
   * Adds to `bag` the nodes of `served` a miner needs (as bagOf picks them), with no bag in
   * between; returns their bytes (what the transaction alone would have shipped).
   */
  addToBag(bag: NodeBag, served: Witness): number {
    if (served instanceof NodeBag) return bag.mergeWhere(served, (h) => !this.isTop(h));
    let bytes = 0;
    served.forEachOnce((h, n) => {
      if (this.isTop(h)) return;
      bytes += n.length;
      bag.addHeld(h, n);
    });
    return bytes;
  }

  /**
   * The account at `address` under the root `root` (binary string) from cached nodes, kept in
   * `view`; where a node is not cached, the account's hashed key (`key`, or hashed here).
   */
  private readCached(
    view: Map<string, KnownAccount>,
    root: string,
    address: Uint8Array,
    key?: Uint8Array,
  ): AccountRead | Uint8Array {
    const a = byteKey(address);
    const known = view.get(a);
    if (known?.read !== undefined) return known.read;
    let path = known?.fresh;
    let k = known?.key;
    if (path !== undefined) known!.fresh = undefined;
    else {
      k ??= key ?? this.addressKey(a, address);
      // Walked at each use until it is hot: the path is this read's witness (and a node let go
      // since is fetched again).
      path = walkPath(root, k, (h) => this.cached(h));
      if (path === undefined) return k;
    }
    if (known !== undefined) {
      const read = { address, account: known.account, path };
      if (++known.uses >= HOT_READ_USES) known.read = read;
      return read;
    }
    const account = path.value === undefined ? undefined : decodeAccount(path.value);
    view.set(a, { account, key: k!, uses: 1, read: undefined, fresh: undefined });
    return { address, account, path };
  }

  /** A state root as a binary string, the last one's kept (reads at one state come in runs, each naming the block's same root). */
  private rootBin(root: Uint8Array): string {
    if (root !== this.lastRoot) {
      this.lastRoot = root;
      this.lastRootBin = byteKey(root);
    }
    return this.lastRootBin;
  }

  /** The reads remembered at `stateRoot` (a new view, the oldest dropped past MAX_READ_VIEWS). */
  private viewAt(root: string): Map<string, KnownAccount> {
    let view = this.views.get(root);
    if (view === undefined) {
      view = new Map();
      this.views.set(root, view);
      if (this.views.size > MAX_READ_VIEWS) this.views.delete(this.views.keys().next().value!);
    }
    return view;
  }

  /**
   * The accounts `queries` name at `at`, each read by walking cached nodes from the state root
   * (no tree), what is not cached fetched first in one round. Undefined where a tree is needed
   * instead (withState): a query of slots, or of the code of an account that has code, or a
   * read still missing a node after its fetch (withState then says why).
   */
  async readAccounts(at: StateRef, queries: readonly AccountQuery[]): Promise<AccountRead[] | undefined> {
    for (const q of queries) if (q.slots.length > 0) return undefined;
    const root = this.rootBin(at.stateRoot);
    const view = this.viewAt(root);
    const reads: AccountRead[] = [];
    // What a read lacked, with the key it hashed (fetched with it, and walked again after).
    let wanted: KeyedQuery[] | undefined;
    let missed: number[] | undefined;
    for (let i = 0; i < queries.length; i++) {
      const q = queries[i]!;
      const r = this.readCached(view, root, q.address);
      if (r instanceof Uint8Array) {
        wanted ??= [];
        missed ??= [];
        wanted.push({ address: q.address, slots: q.slots, code: q.code, key: r, keepPath: true });
        missed.push(i);
      } else reads.push(r);
    }
    if (wanted !== undefined) {
      await this.fetch(at, wanted);
      // The answer's check kept what it proved in the view; else the walk is made again.
      for (let j = 0; j < wanted.length; j++) {
        const w = wanted[j]!;
        const r = this.readCached(view, root, w.address, w.key);
        if (r instanceof Uint8Array) return undefined;
        reads.splice(missed![j]!, 0, r);
      }
    }
    for (let i = 0; i < queries.length; i++) {
      const a = reads[i]!.account;
      if (queries[i]!.code && a !== undefined && !bytesEqual(a.codeHash, EMPTY_CODE_HASH)) return undefined;
    }
    return reads;
  }

  /**
   * Fetches and verifies what `queries` name at `at`: one BatchGet per route (the shards one
   * set of nodes holds), all in parallel. Afterwards every queried account, slot and code resolves from the cache.
   */
  fetch(at: StateRef, queries: readonly KeyedQuery[]): Promise<void> {
    if (queries.length === 0) return Promise.resolve();
    // Grouped by route (what one BatchGet can ask), not by shard: one batch joined per route,
    // and one waiter for the call however many batches it joined (no promise per batch).
    return new Promise((resolve, reject) => {
      const w: Waiter = { left: 0, resolve, reject };
      for (const query of queries) {
        const key = keyOf(this.keccak, query);
        const shard = this.storage.shardOfKey(key);
        const batch = this.batchFor(at, this.storage.routeOf(shard), shard);
        batch.queries.push(query.key === undefined ? { ...query, key } : query);
        // A call's queries are pushed in one go: a batch it joined has it as its last waiter.
        if (batch.waiters[batch.waiters.length - 1] !== w) {
          batch.waiters.push(w);
          w.left++;
        }
      }
    });
  }

  /** The batch key of reads at `at` on `route` (the block's keys kept for the next read at it). */
  private batchKey(at: StateRef, route: string): string {
    if (at.blockHash !== this.keyBlock) {
      this.keyBlock = at.blockHash;
      this.keyBlockHex = toHex(at.blockHash);
      this.routeKeys.clear();
    }
    let k = this.routeKeys.get(route);
    if (k === undefined) {
      k = `${this.keyBlockHex}/${route}`;
      this.routeKeys.set(route, k);
    }
    return k;
  }

  /**
   * The batch going to `shard`'s nodes at `at` once the batching window ends, made if there is
   * none: every pre-execution running meanwhile shares one BatchGet per route (the shards the
   * same nodes hold) instead of one each.
   */
  private batchFor(at: StateRef, route: string, shard: number): PendingBatch {
    const k = this.batchKey(at, route);
    let batch = this.batches.get(k);
    if (batch === undefined) {
      const b: PendingBatch = { at, shard, queries: [], waiters: [] };
      this.batches.set(k, b);
      const go = () => {
        this.batches.delete(k);
        void this.send(b);
      };
      const windowMs = this.opts.batchWindowMs ?? DEFAULT_READ_BATCH_WINDOW_MS;
      if (windowMs > 0) setTimeout(go, windowMs);
      else setImmediate(go);
      batch = b;
    }
    return batch;
  }

  /** One BatchGet per MAX_BATCH queries (an account's queries merged), its waiters told how it went. */
  private async send(batch: PendingBatch): Promise<void> {
    // An account's queries merged (most ask for the account alone: no map of slots for them).
    const merged = new Map<
      string,
      {
        address: Uint8Array;
        key: Uint8Array | undefined;
        slots: Map<string, Uint8Array> | undefined;
        code: boolean;
        keepPath: boolean;
      }
    >();
    for (const q of batch.queries) {
      const k = byteKey(q.address);
      let m = merged.get(k);
      if (m === undefined) {
        m = { address: q.address, key: q.key, slots: undefined, code: false, keepPath: false };
        merged.set(k, m);
      }
      if (q.slots.length > 0) {
        m.slots ??= new Map();
        for (const slot of q.slots) m.slots.set(byteKey(slot), slot);
      }
      m.code ||= q.code;
      m.keepPath ||= q.keepPath === true;
    }
    const all: KeyedQuery[] = [];
    for (const m of merged.values())
      all.push({
        address: m.address,
        slots: m.slots === undefined ? [] : [...m.slots.values()],
        code: m.code,
        ...(m.key === undefined ? {} : { key: m.key }),
        ...(m.keepPath ? { keepPath: true } : {}),
      });
    try {
      for (let i = 0; i < all.length; i += MAX_BATCH) {
        const qs = all.slice(i, i + MAX_BATCH);
        const walked = await this.oneSided?.read(batch.at, batch.shard, qs);
        if (walked !== undefined) {
          // Every node was checked against the hash its parent named, from the state root.
          this.counters.oneSided++;
          this.remember(batch.at, walked);
          continue;
        }
        this.counters.calls++;
        const res = await this.storage.batchGet(
          batch.shard,
          { at: atHash(batch.at.blockHash), queries: qs, omitLevels: 0 },
          (r, replica) => this.check(batch.at, qs, r, replica),
        );
        this.remember(batch.at, res, true);
      }
      for (const w of batch.waiters) if (--w.left === 0) w.resolve();
    } catch (e) {
      for (const w of batch.waiters) w.reject(e);
    }
  }

  /**
   * Throws BAD_PROOF unless the answer proves exactly what it claims, at `at`. Its nodes go into
   * the cache first, each under the hash computed here (hashed once, in one batch, with no bag of
   * the answer's own between them and the cache), and out again if it is refused.
   */
  private check(
    at: StateRef,
    qs: readonly KeyedQuery[],
    res: BatchGetResponse,
    replica: StorageReplica,
  ): void {
    const refuse = (why: string): never => {
      this.counters.refused++;
      throw new ClientError(ClientErrorCode.BadProof, `storage node ${replica.address}: ${why}`, {
        replica: replica.address,
      });
    };
    if (!bytesEqual(res.blockHash, at.blockHash))
      refuse(`answered at block ${toHex(res.blockHash)}, asked ${toHex(at.blockHash)}`);
    if (res.results.length !== qs.length) refuse(`${res.results.length} results for ${qs.length} queries`);
    this.makeRoom();
    const hashes = this.cache.addNodes(res.bag);
    try {
      this.prove(at, qs, res, refuse);
    } catch (e) {
      // What a refused answer brought is let go (nodes it shares with honest answers are fetched again).
      this.cache.deleteHashes(hashes);
      throw e;
    }
  }

  /** check's proof of each answer against its query, over the cache (the answer's nodes in it). */
  private prove(
    at: StateRef,
    qs: readonly KeyedQuery[],
    res: BatchGetResponse,
    refuse: (why: string) => never,
  ): void {
    // The cache keeps nodes under the hashes it computed: walks use them unhashed.
    const getBin = (h: string) => this.cached(h);
    const root = this.rootBin(at.stateRoot);
    // Reads at this root kept for transactions (readAccounts): a proven account goes there.
    const view = this.views.get(root);
    qs.forEach((q, i) => {
      const r = res.results[i]!;
      // Named only when an answer is refused: building it for every query cost more than the check.
      const where = () => `account ${toHex(q.address)}`;
      if (!bytesEqual(r.address, q.address))
        refuse(`result ${i} is for ${toHex(r.address)}, asked ${where()}`);
      // The account's leaf value as the proof gives it, compared as bytes with the claim (a
      // storage node sends the value it holds): decoded only where its slots or code are checked.
      const key = keyOf(this.keccak, q);
      let walked: WalkedPath | undefined;
      try {
        walked = walkPath(root, key, getBin);
      } catch (e) {
        if (!isDsmError(e)) throw e;
      }
      if (walked === undefined) {
        refuse(`the proof of ${where()} does not reach it from state root ${toHex(at.stateRoot)}`);
        return;
      }
      const provenRlp = walked.value;
      if (!sameBytes(provenRlp, r.accountRlp))
        refuse(`claims a value for ${where()} that its proof does not give`);
      // Decoded only where a read is kept for the view, or its slots or code are checked.
      const a = view !== undefined && q.slots.length === 0 ? byteKey(q.address) : undefined;
      const known = a === undefined ? undefined : view!.get(a);
      const keep = a !== undefined && known === undefined;
      // readAccounts reads it next, at this root: it takes this walk's path instead of walking again.
      const fresh = q.keepPath === true ? walked : undefined;
      if (known !== undefined && known.read === undefined && fresh !== undefined) known.fresh = fresh;
      if (!keep && q.slots.length === 0 && !q.code) return;
      const proven = provenRlp === undefined ? undefined : decodeAccount(provenRlp);
      if (keep) view!.set(a, { account: proven, key, uses: 0, read: undefined, fresh });
      if (q.slots.length > 0) {
        // Slots proven by walking the account's storage trie from its root, as its account is.
        const storageRoot =
          proven === undefined || bytesEqual(proven.storageRoot, EMPTY_ROOT)
            ? undefined
            : byteKey(proven.storageRoot);
        q.slots.forEach((slot, j) => {
          const proof = () => `the proof of ${where()} slot ${toHex(slot)}`;
          let value: Uint8Array | undefined;
          if (storageRoot !== undefined) {
            let w: WalkedPath | undefined;
            try {
              w = walkPath(storageRoot, hashOne(this.keccak, slot), getBin);
            } catch (e) {
              if (!isDsmError(e)) throw e;
            }
            if (w === undefined) refuse(`${proof()} does not reach it`);
            value = w!.value;
          }
          let same = false;
          try {
            same = sameSlotValue(value, r.slotValues[j]);
          } catch {
            refuse(`${proof()} ends in a value that is no RLP byte string`);
          }
          if (!same) refuse(`claims a value for ${where()} slot ${toHex(slot)} that its proof does not give`);
        });
      }
      if (
        q.code &&
        proven !== undefined &&
        r.code.length > 0 &&
        !bytesEqual(this.keccak.keccak256(r.code), proven.codeHash)
      )
        refuse(`sends code for ${where()} that does not hash to its code hash`);
    });
  }

  /**
   * Runs `f` on the state at `at`, fetching what it turns out to need: first `first` (those
   * of its accounts not already resolvable; on a tree handed on in `opts.from`, looked for only
   * once `f` stops at a miss, and fetched with it), then, each time `f` stops at a missing node,
   * the account (and slot, and code) the node belongs to. `f` reports a missing node by throwing
   * an ExecutionError MISSING_NODE naming the account (and slot), or a DsmError MISSING_NODE.
   * Returns what `f` returned, every node and code blob its last, complete run used (the
   * first run also holds what `first` read: `f` runs on the tree that looked for them, so the
   * nodes they need are decoded once, not once to look and once to run), and that run's tree
   * (`read`: for a next run at the same root, if `f` changed nothing).
   */
  async withState<T>(
    at: StateRef,
    first: readonly AccountQuery[],
    f: (tree: StateTree) => Promise<T> | T,
    opts: WithStateOptions = {},
  ): Promise<{ value: T; served: NodeBag; rounds: number; read: ReadTree }> {
    const maxRounds = opts.maxRounds ?? 8;
    // A tree handed on has read `first` already (the same keys, but for a new guess or so): it is
    // looked through again only if the run stops at a miss, not before every run on it.
    const reuse = opts.from !== undefined && bytesEqual(opts.from.stateRoot, at.stateRoot);
    let read = reuse ? opts.from! : this.readTree(at.stateRoot);
    let unprobed = reuse ? first : [];
    let rounds = 0;
    if (!reuse) {
      // Looking only faults nodes in (a miss changes nothing): the tree is as good as a fresh one.
      const wanted = this.lacking(read.tree, first);
      if (wanted.length > 0) {
        await this.fetch(at, wanted);
        rounds++;
      }
    }
    // Made at the first miss: most runs have none.
    let asked: Set<string> | undefined;
    for (;;) {
      try {
        return { value: await f(read.tree), served: read.served, rounds, read };
      } catch (e) {
        // A miss the error names, or (a tree handed on, `first` not looked for yet) any miss.
        const q = missingKey(e);
        if (q === undefined && !(unprobed.length > 0 && isMiss(e))) throw e;
        const key = q === undefined ? '' : `${toHex(q.address)}/${q.slots.map(toHex).join()}`;
        asked ??= new Set();
        if (asked.has(key)) {
          throw new ClientError(
            ClientErrorCode.BadProof,
            `fetched ${key} at ${toHex(at.stateRoot)} and it is still missing: ${(e as Error).message}`,
          );
        }
        if (rounds >= maxRounds) {
          throw new ClientError(
            ClientErrorCode.TooManyFetches,
            `still missing state after ${rounds} fetch rounds: ${(e as Error).message}`,
          );
        }
        asked.add(key);
        // `f` may have written to the tree before it stopped: the next run starts afresh.
        read = this.readTree(at.stateRoot);
        const wanted = this.lacking(read.tree, unprobed);
        unprobed = [];
        if (q !== undefined) wanted.push(q);
        else if (wanted.length === 0) throw e;
        await this.fetch(at, wanted);
        rounds++;
      }
    }
  }

  /** The queries of `first` that `tree` cannot answer from the cache (a miss faults nothing in). */
  private lacking(tree: StateTree, first: readonly AccountQuery[]): KeyedQuery[] {
    const wanted: KeyedQuery[] = [];
    for (const q of first) {
      const key = this.addressKey(byteKey(q.address), q.address);
      const found = resolvable(() => {
        // Only where slots or code are looked for is the account decoded (its roots name them).
        if (q.slots.length === 0 && !q.code) {
          tree.accounts.get(key);
          return;
        }
        const a = tree.getAccountAtKey(key);
        for (const slot of q.slots) tree.getStorageAtKey(key, hashOne(this.keccak, slot));
        if (
          q.code &&
          a !== undefined &&
          !bytesEqual(a.codeHash, EMPTY_CODE_HASH) &&
          tree.getCode(a.codeHash) === undefined &&
          this.cached(byteKey(a.codeHash)) === undefined
        )
          throw new DsmError(DsmErrorCode.MissingNode, 'code not cached');
      });
      // Fetched with its key: routing and the answer's check use it, not a hash of their own.
      if (!found) wanted.push({ ...q, key });
    }
    return wanted;
  }

  /** Starts a new generation of the cache when the newer one is full (see the file's comment). */
  private makeRoom(): void {
    if (this.cache.size >= this.opts.maxCachedNodes / 2) {
      this.older = this.cache;
      this.olderTop = this.top;
      this.cache = new NodeBag({ hash: this.keccak });
      this.top = new Set();
    }
  }

  /**
   * Caches a checked answer, marking account-trie nodes above the compaction level. `cached`:
   * its nodes are in the cache already (`check` put them there, hashed); a one-sided answer's
   * nodes are added as they are (the walk checked each against its parent's hash).
   */
  private remember(at: StateRef, res: OneSidedAnswer, cached = false): void {
    for (const n of res.bag) this.counters.bytes += n.length;
    if (!cached) {
      this.makeRoom();
      // A native walk's nodes come with the hashes it checked them against: no second keccak.
      if (res.bagHashes !== undefined) this.cache.addVerified(res.bag, res.bagHashes);
      else this.cache.addNodes(res.bag);
    }
    for (const r of res.results) {
      if (r.code.length > 0) {
        this.counters.bytes += r.code.length;
        this.cache.add(r.code);
      }
    }
    // The nodes above the compaction level (the first compactLevels of every proof): breadth
    // first from the root through what the cache holds, by the hashes parents name them by —
    // at most 16^(levels-1) nodes decoded, where proving each account decoded every level of it.
    let level = this.opts.compactLevels > 0 ? [byteKey(at.stateRoot)] : [];
    for (let d = 1; level.length > 0; d++) {
      for (const h of level) this.top.add(h);
      if (d === this.opts.compactLevels) break;
      const next: string[] = [];
      for (const h of level) {
        const n = this.cached(h);
        if (n !== undefined) for (const c of hashedChildren(n)) next.push(byteKey(c));
      }
      level = next;
    }
  }
}

/** Whether `e` says a node was missing (or did not hash to what its parent named). */
function isMiss(e: unknown): boolean {
  return (
    isExecutionError(e, ExecutionErrorCode.MissingNode) ||
    isDsmError(e, DsmErrorCode.MissingNode) ||
    isDsmError(e, DsmErrorCode.HashMismatch)
  );
}

/** The query that fetches what a missing-node error names, or undefined for another error. */
function missingKey(e: unknown): AccountQuery | undefined {
  const meta = (e as { meta?: Record<string, unknown> }).meta;
  if (!isMiss(e) || !(meta?.address instanceof Uint8Array)) return undefined;
  const slot = meta.slot;
  return { address: meta.address, slots: slot instanceof Uint8Array ? [slot] : [], code: true };
}

/** Whether `f` runs without a DsmError (a node not cached). */
function resolvable(f: () => unknown): boolean {
  // A miss is the common answer and its error is dropped here: don't pay for its stack trace.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    f();
    return true;
  } catch (e) {
    if (isDsmError(e)) return false;
    throw e;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  return a === undefined || b === undefined ? a === b : bytesEqual(a, b);
}

/**
 * Decoded nodes in two generations (see RemoteState.decoded): when the newer holds
 * MAX_SHARED_DECODED it becomes the older and the oldest is dropped; one found in the older
 * moves to the newer. Nodes of roots a few blocks old are dead, so a few thousand suffice.
 */
class SharedDecoded implements SharedNodes {
  private newer = new Map<string, SharedNode>();
  private older = new Map<string, SharedNode>();

  get(hash: string): SharedNode | undefined {
    const n = this.newer.get(hash);
    if (n !== undefined || this.older.size === 0) return n;
    const o = this.older.get(hash);
    if (o !== undefined) this.set(hash, o);
    return o;
  }

  set(hash: string, node: SharedNode): void {
    if (this.newer.size >= MAX_SHARED_DECODED) {
      this.older = this.newer;
      this.newer = new Map();
    }
    this.newer.set(hash, node);
  }
}

/**
 * Whether a slot's value as its proof gives it (`proven`: the leaf's RLP byte string, undefined
 * where the slot is absent) is the value claimed, both read as numbers (leading zeros aside),
 * with no copies made. Throws where `proven` is no RLP byte string.
 */
function sameSlotValue(proven: Uint8Array | undefined, claimed: Uint8Array | undefined): boolean {
  let p = 0;
  let pEnd = 0;
  if (proven !== undefined) {
    const s = readWhole(proven);
    if (s.list) throw new RangeError('a storage value must be an RLP byte string');
    p = s.dataStart;
    pEnd = s.end;
  }
  while (p < pEnd && proven![p] === 0) p++;
  const c = claimed ?? EMPTY_BYTES;
  let q = 0;
  while (q < c.length && c[q] === 0) q++;
  if (pEnd - p !== c.length - q) return false;
  for (; p < pEnd; p++, q++) if (proven![p] !== c[q]) return false;
  return true;
}

const EMPTY_BYTES = new Uint8Array(0);
