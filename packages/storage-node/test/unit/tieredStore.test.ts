/**
 * The tiered backend against memory mode. Two nodes get the same random blocks (two forks,
 * deletes of accounts and slots, new accounts, code); the tiered one has a budget of one byte
 * and one resident level, so every block and every read evicts everything it can and the next
 * one faults it back in from LevelDB; then again with a budget of a fraction of the state, so
 * that CLOCK passes evict some nodes of the trees in place and keep others (shared by forks
 * and old versions). Every answer at every held version — accounts, slots,
 * proofs, batches with their bags, nodes by hash, shard roots, errors — must be the memory
 * node's, byte for byte. Also: faults of one node are fetched once however many reads want it,
 * a batch's faults share round trips, a sweep keeps every retained version readable while
 * deleting garbage, and a corrupt or unreachable LevelDB is refused, never answered from.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { keccak } from '@monsoon/keccak';
import { atHash, type BatchGetRequest, type BlockRef, type GetNodesRequest, HEAD } from '@monsoon/protocol';
import {
  encodeCheckpoint,
  type FreshNode,
  type NodeDb,
  openLocalNodeDb,
  PATH_KEY_BYTES,
  pathKey,
  pathValue,
  ShardLayout,
  ShardState,
  StorageError,
  StorageErrorCode,
  StorageMetrics,
  StorageNode,
  streamGenesis,
  TieredStore,
  type TieredStoreOptions,
  type Version,
} from '@monsoon/storage-node';
import { Prng } from '@monsoon/test-utils';
import { toHex } from '@monsoon/util';
import { makeGenesis, RefChain } from '../helpers/chain.js';
import { expectStorageError } from '../helpers/errors.js';
import { RecordingLogger } from '../helpers/recordingLogger.js';

/** A NodeDb that counts and can break what passes through it. */
class ProbedDb implements NodeDb {
  readonly requested: string[] = [];
  roundTrips = 0;
  down = false;
  corrupt = false;
  constructor(private readonly inner: NodeDb) {}
  get where(): string {
    return this.inner.where;
  }
  /** While set, every round trip waits for it (a LevelDB that has not answered yet). */
  gate: Promise<void> | undefined;
  async getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]> {
    await this.gate;
    if (this.down)
      throw new StorageError(StorageErrorCode.Unavailable, `LevelDB at ${this.where} is unreachable (test)`);
    this.roundTrips++;
    for (const k of keys) this.requested.push(k.toString('hex'));
    const got = await this.inner.getMany(keys);
    if (!this.corrupt) return got;
    return got.map((v) =>
      v === undefined ? v : Buffer.concat([v.subarray(0, v.length - 1), Buffer.of(v[v.length - 1]! ^ 1)]),
    );
  }
  /** A LevelDB in this process is read on the JS thread too (TieredStoreOptions.syncReads). */
  syncReads = 0;
  getSync(key: Buffer): Buffer | undefined {
    if (this.down) throw new Error('getSync of a LevelDB that is down (test)');
    this.syncReads++;
    const v = this.inner.getSync!(key);
    if (!this.corrupt || v === undefined) return v;
    return Buffer.concat([v.subarray(0, v.length - 1), Buffer.of(v[v.length - 1]! ^ 1)]);
  }
  write(puts: readonly (readonly [Buffer, Buffer])[], dels?: readonly Buffer[]): Promise<void> {
    if (this.down)
      return Promise.reject(
        new StorageError(StorageErrorCode.Unavailable, `LevelDB at ${this.where} is unreachable (test)`),
      );
    return this.inner.write(puts, dels);
  }
  keys(page: number): AsyncIterable<Buffer[]> {
    return this.inner.keys(page);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  async count(): Promise<number> {
    let n = 0;
    for await (const page of this.inner.keys(10_000)) n += page.length;
    return n;
  }
}

/** What a client sees of a read: its value, or its error's code and message. */
async function outcome<T>(run: () => T | Promise<T>): Promise<unknown> {
  try {
    return { ok: await run() };
  } catch (e) {
    const err = e as { code?: unknown; message?: unknown };
    return { error: err.code, message: err.message };
  }
}

/** The reads the server makes, through `node.read` exactly as StorageServer runs them. */
const reads = {
  account: (n: StorageNode, at: BlockRef, address: Uint8Array, omitLevels = 0) =>
    outcome(() => n.read(() => n.getAccount({ at, address, omitLevels }))),
  storage: (n: StorageNode, at: BlockRef, address: Uint8Array, slot: Uint8Array) =>
    outcome(() => n.read(() => n.getStorage({ at, address, slot, omitLevels: 0 }))),
  batch: (n: StorageNode, r: BatchGetRequest) =>
    outcome(() =>
      n.read(
        () => n.batchGet(r),
        () => n.batchProbes(r),
      ),
    ),
  nodes: (n: StorageNode, r: GetNodesRequest) => outcome(() => n.read(() => n.getNodes(r))),
  roots: (n: StorageNode, at: BlockRef) => outcome(async () => (await n.read(() => n.shardRoots(at))).roots),
};

describe.each([
  { what: 'a one-byte budget', budget: 1, levels: 1, clock: false, sync: false },
  { what: 'a budget of part of the state (CLOCK)', budget: 120_000, levels: 1, clock: true, sync: false },
  {
    // Two resident levels: passes go over the 16 subtrees below them one at a time, yielding
    // after each, while blocks and reads run between the parts.
    what: 'a budget of part of the state, evicted a part at a time',
    budget: 120_000,
    levels: 2,
    clock: true,
    sync: false,
    slices: true,
  },
  {
    what: 'a one-byte budget, reading LevelDB on the JS thread',
    budget: 1,
    levels: 1,
    clock: false,
    sync: true,
  },
])('tiered backend vs memory mode, $what', ({ budget, levels, clock, sync, slices }) => {
  const genesis = makeGenesis(11, 500);
  const chain = new RefChain(genesis, 16);
  const mine = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
  const mineSet = new Set(mine);
  const opts = { shardCount: 16 as const, shards: mine, window: 5, forkWindow: 3 };
  let dir: string;
  let db: ProbedDb;
  let store: TieredStore;
  let tiered: StorageNode;
  let memory: StorageNode;
  /** Every address and slot any block touched, plus some that never existed. */
  const addresses: Uint8Array[] = genesis.alloc.map((a) => a.address);
  const slots = new Map<string, Uint8Array[]>();
  /** The head's block, as the reference chain has it. */
  let tip = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'monsoon-tiered-'));
    db = new ProbedDb(await openLocalNodeDb(join(dir, 'leveldb')));
    store = new TieredStore(
      {
        memoryBudget: budget,
        residentLevels: levels,
        gcEveryNodes: 0,
        syncReads: sync,
        ...(slices ? { evictSliceMs: 0 } : {}),
      },
      { db },
    );
    // The CLOCK variant starts from a streamed genesis (subtrees straight to LevelDB).
    tiered = clock
      ? await StorageNode.fromGenesisStreamed(genesis, opts, {
          observers: [store],
          faults: store,
          genesisSink: store,
        })
      : StorageNode.fromGenesis(genesis, opts, { observers: [store], faults: store });
    await tiered.startObservers();
    memory = StorageNode.fromGenesis(genesis, opts);
    for (const a of genesis.alloc)
      slots.set(
        Buffer.from(a.address).toString('hex'),
        a.storage.map(([s]) => s),
      );
    const r = new Prng(99);
    for (let i = 0; i < 20; i++) addresses.push(r.bytes(20));
  });

  afterAll(async () => {
    await tiered.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Compares every kind of answer of the two nodes at `at`, over a sample of keys. */
  async function compareAt(at: BlockRef, seed: number): Promise<number> {
    const r = new Prng(seed);
    let compared = 0;
    const sample = Array.from({ length: 12 }, () => addresses[r.int(addresses.length)]!);
    for (const address of sample) {
      const omit = r.int(3);
      expect(await reads.account(tiered, at, address, omit)).toEqual(
        await reads.account(memory, at, address, omit),
      );
      const own = slots.get(Buffer.from(address).toString('hex')) ?? [];
      for (const slot of [...own.slice(0, 2), r.bytes(32)]) {
        expect(await reads.storage(tiered, at, address, slot)).toEqual(
          await reads.storage(memory, at, address, slot),
        );
      }
      compared++;
    }
    const batch: BatchGetRequest = {
      at,
      omitLevels: 1,
      queries: sample.slice(0, 12).map((address) => ({
        address,
        slots: (slots.get(Buffer.from(address).toString('hex')) ?? []).slice(0, 3),
        code: true,
      })),
    };
    expect(await reads.batch(tiered, batch)).toEqual(await reads.batch(memory, batch));
    // Nodes by hash, on their paths: the nodes of a few proofs (memory node's), and a root.
    const held = sample.filter((a) => mineSet.has(chain.shardOf(a))).slice(0, 4);
    const hashes: Uint8Array[] = [];
    const paths: Uint8Array[] = [];
    const v = memory.versions.get(at);
    if (v === undefined) return compared; // pruned: the reads above compared the errors
    for (const address of held) {
      const key = keccak.keccak256(address);
      const nibbles = Array.from(key).flatMap((b) => [b >> 4, b & 15]);
      const proof = v.state.state.accounts.prove(key);
      proof.forEach((n, depth) => {
        hashes.push(keccak.keccak256(n));
        paths.push(Uint8Array.from(nibbles.slice(0, depth)));
      });
    }
    hashes.push(v.header.stateRoot);
    paths.push(new Uint8Array(0));
    expect(await reads.nodes(tiered, { hashes, paths })).toEqual(
      await reads.nodes(memory, { hashes, paths }),
    );
    expect(await reads.roots(tiered, at)).toEqual(await reads.roots(memory, at));
    return compared;
  }

  it('equal roots, answers, proofs, bags and nodes at every held version of two forks, evicting on every block', async () => {
    const g = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    let compared = 0;
    const seen: Uint8Array[] = [];
    let branchPoint = g;
    for (const fork of [1, 2]) {
      // The second fork leaves the first two blocks below its head and takes over.
      let parent = branchPoint;
      const end = Number(parent.number) + 6;
      for (let i = Number(parent.number) + 1; i <= end; i++) {
        const b = chain.block(parent, 1000 * fork + i, 60, { difficulty: fork === 1 ? 1n : 3n });
        for (const u of b.req.shards) {
          for (const a of u.accounts) {
            const id = Buffer.from(a.address).toString('hex');
            if (!slots.has(id)) addresses.push(a.address);
            if (!a.deleted) slots.set(id, [...(slots.get(id) ?? []), ...a.storage.map((s) => s.slot)]);
          }
        }
        const req = RefChain.forShards(b.req, mineSet);
        const [t, m] = [
          await outcome(() => tiered.applyBlock(req)),
          await outcome(() => memory.applyBlock(req)),
        ];
        expect(t).toEqual(m);
        if ((t as { ok?: unknown }).ok === undefined)
          throw new Error(`block ${i} of fork ${fork}: ${JSON.stringify(t)}`);
        seen.push(b.hash);
        // Every held version, the head and old ones, on either fork.
        for (const h of seen) compared += await compareAt(atHash(h), i * 31 + fork);
        compared += await compareAt(HEAD, i);
        parent = { hash: b.hash, state: b.state, number: BigInt(i) };
        if (fork === 1 && i === 4) branchPoint = parent;
      }
      tip = parent;
    }
    expect(compared).toBeGreaterThan(500);
    const stats = store.tieredStats();
    // It really was tiered: most of the state was faulted in from LevelDB, repeatedly.
    expect(sync ? stats.syncReads : stats.roundTrips).toBeGreaterThan(100);
    expect(stats.prunes).toBeGreaterThan(12);
    expect(stats.corrupt).toBe(0);
    if (clock) {
      // Some passes kept what reads had used, so answers were compared over a partly resident
      // state, not only over stubs below the top levels. How many passes end in a full prune
      // depends on how many reads run between a pass's slices (the box's load), so the count is
      // not asserted; what CLOCK keeps is the business of 'tiered eviction by frequency' below.
      expect(stats.fullPrunes).toBeLessThan(stats.prunes);
      expect(stats.residentBytes).toBeGreaterThan(0);
    }
    // Passes went a part at a time (16 slices each), not in one stretch.
    // (the one pass that is not sliced: the store's start).
    if (slices) expect(stats.evictSlices).toBeGreaterThanOrEqual(16 * (stats.prunes - 1));
  }, 300_000); // three versions of it run; a loaded box takes minutes

  if (sync) {
    it('reads on the JS thread are checked too: a node with a wrong hash is refused, never served', async () => {
      expect(db.syncReads).toBeGreaterThan(100); // the comparisons above read LevelDB that way
      const address = addresses.find((a) => mineSet.has(chain.shardOf(a)))!;
      store.cache.clear();
      store.setMemoryBudget(1);
      db.corrupt = true;
      const before = store.tieredStats().corrupt;
      await expectStorageError(
        Promise.resolve(tiered.read(() => tiered.getAccount({ at: HEAD, address, omitLevels: 0 }))),
        StorageErrorCode.CorruptNode,
      );
      expect(store.tieredStats().corrupt).toBeGreaterThan(before);
      db.corrupt = false;
      expect(await reads.account(tiered, HEAD, address)).toEqual(await reads.account(memory, HEAD, address));
    });
  }
  if (clock || sync) return; // the tests below need everything evicted by every run, faulted asynchronously

  it('faults of one node are fetched once, however many concurrent reads want it; a batch shares round trips', async () => {
    // Evict everything: one byte of budget, then a block-less eviction through a read.
    const cold = addresses.filter((a) => mineSet.has(chain.shardOf(a))).slice(0, 40);
    store.cache.clear();
    store.setMemoryBudget(1); // evicts now: the trees go back to one level
    db.requested.length = 0;
    const before = store.tieredStats();
    // The live counters, held across the reads (what a caller reads around every request).
    const live = store.counters;
    const readsOf = cold
      .slice(0, 10)
      .flatMap((address) => [1, 2, 3].map(() => reads.account(tiered, HEAD, address)));
    const answers = await Promise.all(readsOf);
    for (const a of answers) expect((a as { ok?: unknown }).ok).toBeDefined();
    expect(new Set(db.requested).size).toBe(db.requested.length); // no node asked for twice
    expect(store.tieredStats().coalesced).toBeGreaterThan(before.coalesced);
    // They moved with the reads and say what the stats say.
    const stats = store.tieredStats();
    expect(live.nodesFetched).toBeGreaterThan(before.nodesFetched);
    for (const k of [
      'roundTrips',
      'roundTripMs',
      'nodesFetched',
      'recordsAsked',
      'hashesAsked',
      'evictMs',
    ] as const)
      expect(live[k]).toBe(stats[k]);

    store.cache.clear();
    store.setMemoryBudget(1);
    const trips = db.roundTrips;
    const batch: BatchGetRequest = {
      at: HEAD,
      omitLevels: 0,
      queries: cold.map((address) => ({ address, slots: [], code: false })),
    };
    expect(await reads.batch(tiered, batch)).toEqual(await reads.batch(memory, batch));
    // 40 cold keys, each 3+ levels deep below the resident level: one round trip per level.
    expect(db.roundTrips - trips).toBeLessThanOrEqual(8);
  });

  it('a batch after one that fetched finds its misses through its parts first: its read runs once', async () => {
    const cold = addresses.filter((a) => mineSet.has(chain.shardOf(a)));
    const batchOf = (xs: Uint8Array[]): BatchGetRequest => ({
      at: HEAD,
      omitLevels: 0,
      queries: xs.map((address) => ({ address, slots: [], code: false })),
    });
    /** The batch's answer (checked against memory mode's) and how often its read ran. */
    const runs = async (r: BatchGetRequest) => {
      const before = store.tieredStats().readRuns;
      expect(await reads.batch(tiered, r)).toEqual(await reads.batch(memory, r));
      return store.tieredStats().readRuns - before;
    };
    store.cache.clear();
    store.setMemoryBudget(1);
    const a = batchOf(cold.slice(0, 20));
    await runs(a);
    // The same batch again before the eviction it scheduled: nothing to fetch, one run; and the
    // next batch is expected not to miss.
    expect(await runs(a)).toBe(1);
    await store.evicted();
    expect(await runs(batchOf(cold.slice(20, 40)))).toBeGreaterThan(1); // the read ran, missed, ran again
    await store.evicted();
    // That batch fetched: this one's parts are probed (and their misses fetched) before its read.
    expect(await runs(batchOf(cold.slice(0, 20)))).toBe(1);
    await store.evicted();
    expect(await runs(batchOf(cold.slice(40, 60)))).toBe(1);
    // Its parts first, at a version the node does not hold: the read's error, as memory mode's.
    await store.evicted();
    await runs(batchOf(cold.slice(60, 80)));
    const unknown = { ...batchOf(cold.slice(0, 5)), at: atHash(new Uint8Array(32).fill(7)) };
    expect(await reads.batch(tiered, unknown)).toEqual(await reads.batch(memory, unknown));
    expect(await reads.batch(memory, unknown)).toHaveProperty('error');
  });

  it('the Prometheus endpoint reports what the store counted', async () => {
    const metrics = new StorageMetrics();
    metrics.watchTiered(() => store.tieredStats(), 1);
    store.setMemoryBudget(1);
    const trips = store.tieredStats().roundTrips;
    const address = addresses.find((a) => mineSet.has(chain.shardOf(a)))!;
    await reads.account(tiered, HEAD, address);
    const s = store.tieredStats();
    expect(s.roundTrips).toBeGreaterThan(trips);
    const text = await metrics.registry.render();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('monsoon_storage_tiered_leveldb_round_trips_total')).toBe(s.roundTrips);
    expect(value('monsoon_storage_tiered_cache_misses_total')).toBe(s.nodesFetched);
    expect(value('monsoon_storage_tiered_cache_hits_total')).toBe(s.cacheHits);
    expect(value('monsoon_storage_tiered_nodes_written_total')).toBe(s.nodesWritten);
    expect(value('monsoon_storage_tiered_budget_bytes')).toBe(1);
    expect(value('monsoon_storage_tiered_budget_share_ratio')).toBe(1); // no governor here
    expect(value('monsoon_storage_tiered_evict_slice_max_seconds')).toBe(s.evictMsMax / 1000);
    expect(text).toMatch(/^monsoon_storage_tiered_memory_bytes\{part="cache"\} \d+$/m);
    expect(text).toMatch(/^monsoon_storage_tiered_memory_bytes\{part="trees"\} \d+$/m);
  });

  it('a sweep deletes what no retained version reaches and every retained version still answers the same', async () => {
    const before = await db.count();
    await store.sweep();
    const after = await db.count();
    expect(store.tieredStats().nodesSwept).toBe(before - after);
    expect(after).toBeLessThan(before);
    store.cache.clear();
    store.setMemoryBudget(1);
    for (const v of memory.versions.all() as Version[]) await compareAt(atHash(v.hash), 7);
  });

  it('a corrupt node from LevelDB is refused and counted; an unreachable LevelDB is UNAVAILABLE, then serves again', async () => {
    const address = addresses.find((a) => mineSet.has(chain.shardOf(a)))!;
    const req = { at: HEAD, address, omitLevels: 0 };
    store.cache.clear();
    store.setMemoryBudget(1);
    db.corrupt = true;
    const e = await expectStorageError(
      Promise.resolve(tiered.read(() => tiered.getAccount(req))),
      StorageErrorCode.CorruptNode,
    );
    expect(e.message).toMatch(/hashes to/);
    expect(store.tieredStats().corrupt).toBeGreaterThan(0);
    db.corrupt = false;
    db.down = true;
    await expectStorageError(
      Promise.resolve(tiered.read(() => tiered.getAccount(req))),
      StorageErrorCode.Unavailable,
    );
    // A block is not acknowledged while LevelDB is down.
    expect(tiered.head.hash).toEqual(tip.hash);
    const b = RefChain.forShards(chain.block(tip, 5, 40, { difficulty: 3n }).req, mineSet);
    await expectStorageError(tiered.applyBlock(b), StorageErrorCode.Unavailable);
    expect(tiered.head.hash).toEqual(tip.hash);
    db.down = false;
    expect(await outcome(() => tiered.applyBlock(b))).toEqual(await outcome(() => memory.applyBlock(b)));
    expect(await reads.account(tiered, HEAD, address)).toEqual(await reads.account(memory, HEAD, address));
    await compareAt(HEAD, 3);
  });
});

describe('tiered garbage collection under a steady workload', () => {
  it('background sweeps keep LevelDB bounded while every retained version answers as memory mode does', async () => {
    const genesis = makeGenesis(23, 300);
    const chain = new RefChain(genesis, 16);
    const all = new Set(chain.layout.all());
    const opts = { window: 3, forkWindow: 1 };
    const dir = await mkdtemp(join(tmpdir(), 'monsoon-tiered-gc-'));
    const db = new ProbedDb(await openLocalNodeDb(join(dir, 'leveldb')));
    const store = new TieredStore(
      { memoryBudget: 1, residentLevels: 1, gcEveryNodes: 1500, checkpointEvery: 0 },
      { db },
    );
    const tiered = StorageNode.fromGenesis(genesis, opts, { observers: [store], faults: store });
    const memory = StorageNode.fromGenesis(genesis, opts);
    try {
      await tiered.startObservers();
      const start = await db.count();
      let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
      for (let i = 1; i <= 30; i++) {
        const b = chain.block(parent, 500 + i, 50);
        const req = RefChain.forShards(b.req, all);
        expect(await outcome(() => tiered.applyBlock(req))).toEqual(
          await outcome(() => memory.applyBlock(req)),
        );
        parent = { hash: b.hash, state: b.state, number: BigInt(i) };
      }
      await store.sweep(); // joins the one in progress, if any, else runs one
      const stats = store.tieredStats();
      expect(stats.sweeps).toBeGreaterThanOrEqual(3); // most of them started by the workload itself
      // Without GC the store would hold every node ever written; it holds about one state's worth.
      expect(stats.nodesWritten).toBeGreaterThan(start);
      const held = await db.count();
      expect(stats.nodesSwept).toBeGreaterThan(stats.nodesWritten / 2);
      expect(held).toBeLessThan(start + stats.nodesWritten / 2);
      expect(held).toBeGreaterThanOrEqual(start / 2); // the live state is still there
      for (const v of memory.versions.all()) {
        for (const a of genesis.alloc.filter((_, k) => k % 7 === 0)) {
          const r = { at: atHash(v.hash), address: a.address, omitLevels: 0 };
          expect(await outcome(() => tiered.read(() => tiered.getAccount(r)))).toEqual(
            await outcome(() => memory.read(() => memory.getAccount(r))),
          );
        }
      }
    } finally {
      await tiered.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tiered eviction by frequency', () => {
  /**
   * A tiered node over a quarter of the state of 600 accounts (`extra`: more of its options), read
   * as a node serving a skewed load is: 8 hot accounts in 6 rounds, each round with 40 cold
   * accounts read once (passes run while both are in use), then every other cold account once;
   * `then` checks what stayed.
   */
  async function afterHotAndCold(
    seed: number,
    extra: Partial<TieredStoreOptions>,
    then: (t: {
      store: TieredStore;
      db: ProbedDb;
      memory: StorageNode;
      tiered: StorageNode;
      /** Nodes the tiered node's account trie held as objects once started (its kept top levels). */
      started: number;
      budget: number;
      hot: Uint8Array[];
      cold: Uint8Array[];
      readOne: (address: Uint8Array) => Promise<unknown>;
    }) => Promise<void>,
  ): Promise<void> {
    const genesis = makeGenesis(seed, 600);
    const opts = { window: 3, forkWindow: 1 };
    const dir = await mkdtemp(join(tmpdir(), 'monsoon-tiered-freq-'));
    const db = new ProbedDb(await openLocalNodeDb(join(dir, 'leveldb')));
    const memory = StorageNode.fromGenesis(genesis, opts);
    const budget = Math.floor(memory.head.state.state.residentBytes() / 4);
    const store = new TieredStore(
      { memoryBudget: budget, residentLevels: 1, gcEveryNodes: 0, ...extra },
      { db },
    );
    const tiered = StorageNode.fromGenesis(genesis, opts, { observers: [store], faults: store });
    /** One read, then the eviction it scheduled (setImmediate callbacks run in order). */
    const readOne = async (address: Uint8Array) => {
      const got = await reads.account(tiered, HEAD, address);
      await new Promise((resolve) => setImmediate(resolve));
      return got;
    };
    try {
      await tiered.startObservers();
      const started = tiered.head.state.state.accounts.residentNodes();
      const hot = genesis.alloc.slice(0, 8).map((a) => a.address);
      const cold = genesis.alloc.slice(8).map((a) => a.address);
      for (let round = 0; round < 6; round++) {
        for (const a of hot) await readOne(a);
        for (const a of cold.slice(round * 40, round * 40 + 40)) await readOne(a);
      }
      for (const a of cold.slice(240)) await readOne(a);
      await then({ store, db, memory, tiered, started, budget, hot, cold, readOne });
    } finally {
      await tiered.close();
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('reads leave the trees as they are, however much of the budget the trees get: hot paths come from the cache, one-off reads go', () =>
    // Most of the budget for the trees: reads still make no node objects below the top levels
    // (they walk the cache's encodings in place), so the trees stay at their top level and the
    // cache gets what they leave; it keeps the hot paths and lets the one-off reads go.
    afterHotAndCold(
      31,
      { cacheShare: 0.1 },
      async ({ store, db, memory, tiered, started, budget, hot, cold, readOne }) => {
        // The kept top levels alone (the root and, with this share, the level below), after every read.
        const tree = tiered.head.state.state.accounts;
        expect(started).toBeLessThanOrEqual(17);
        expect(tree.residentNodes()).toBe(started);
        const top = store.tieredStats().residentBytes;
        expect(top).toBeLessThan(budget / 2);
        const trips = db.roundTrips;
        for (const a of hot) expect(await readOne(a)).toEqual(await reads.account(memory, HEAD, a));
        expect(db.roundTrips).toBe(trips);
        for (const a of cold.slice(0, 20))
          expect(await readOne(a)).toEqual(await reads.account(memory, HEAD, a));
        expect(db.roundTrips).toBeGreaterThan(trips);
        await store.evicted();
        const s = store.tieredStats();
        expect(s.residentBytes).toBe(top);
        expect(s.cacheBytes + s.residentBytes + s.sketchBytes).toBeLessThanOrEqual(budget);
        expect(tree.residentNodes()).toBe(started);
      },
    ));

  it('the cache keeps the encodings wanted often when the trees keep nothing below their top, after many one-off reads', () =>
    // Nearly all of the budget for the cache: every pass evicts every tree node below the root,
    // so what is read again without LevelDB came from the cache. The last one-off reads are many
    // more than the cache holds (CLOCK alone drops the hot ones there: their bits were cleared
    // and not set again).
    afterHotAndCold(33, { cacheShare: 0.99 }, async ({ store, db, memory, budget, hot, readOne }) => {
      const s = store.tieredStats();
      expect(s.prunes).toBeGreaterThan(5);
      expect(s.cacheBytes).toBeLessThanOrEqual(budget);
      const trips = db.roundTrips;
      for (const a of hot) expect(await readOne(a)).toEqual(await reads.account(memory, HEAD, a));
      expect(db.roundTrips).toBe(trips);
    }));

  it('a node LevelDB returns corrupt fails the reads that need it, not the others fetched with it', async () => {
    const genesis = makeGenesis(32, 300);
    const opts = { window: 3, forkWindow: 1 };
    const dir = await mkdtemp(join(tmpdir(), 'monsoon-tiered-corrupt-'));
    const inner = await openLocalNodeDb(join(dir, 'leveldb'));
    const memory = StorageNode.fromGenesis(genesis, opts);
    const [victim, bystander] = genesis.alloc.map((a) => a.address);
    // The victim's leaf (the last node of its proof) comes back with one bit flipped.
    const proof = memory.head.state.state.accounts.prove(keccak.keccak256(victim!));
    const leafKey = Buffer.from(keccak.keccak256(proof[proof.length - 1]!)).toString('hex');
    const db: NodeDb = {
      where: inner.where,
      getMany: async (keys) => {
        const got = await inner.getMany(keys);
        // The leaf by its hash, and in a path record (its hash, then the node: pathRecords.ts).
        return got.map((v, i) =>
          v !== undefined &&
          (keys[i]!.toString('hex') === leafKey ||
            (keys[i]!.length === PATH_KEY_BYTES && v.subarray(0, 32).toString('hex') === leafKey))
            ? Buffer.concat([v, Buffer.of(0x80)])
            : v,
        );
      },
      write: (puts, dels) => inner.write(puts, dels),
      keys: (page) => inner.keys(page),
      close: () => inner.close(),
    };
    const store = new TieredStore({ memoryBudget: 1, residentLevels: 1, gcEveryNodes: 0 }, { db });
    const tiered = StorageNode.fromGenesis(genesis, opts, { observers: [store], faults: store });
    try {
      await tiered.startObservers();
      store.cache.clear();
      // Both reads' faults go out in the same round trips.
      const [bad, good] = await Promise.all([
        reads.account(tiered, HEAD, victim!),
        reads.account(tiered, HEAD, bystander!),
      ]);
      expect((bad as { error?: unknown }).error).toBe(StorageErrorCode.CorruptNode);
      expect(good).toEqual(await reads.account(memory, HEAD, bystander!));
      expect(store.tieredStats().corrupt).toBeGreaterThan(0);
    } finally {
      await tiered.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tiered path records', () => {
  /** A tiered node over a fresh LevelDB (one byte of budget, one resident level) and memory mode, over the same genesis. */
  async function pair(dirName: string) {
    const genesis = makeGenesis(33, 400);
    const opts = { window: 3, forkWindow: 1 };
    const dir = await mkdtemp(join(tmpdir(), dirName));
    const db = new ProbedDb(await openLocalNodeDb(join(dir, 'leveldb')));
    const logger = new RecordingLogger();
    const store = new TieredStore({ memoryBudget: 1, residentLevels: 1, gcEveryNodes: 0 }, { db, logger });
    const tiered = StorageNode.fromGenesis(genesis, opts, { observers: [store], faults: store });
    await tiered.startObservers();
    const memory = StorageNode.fromGenesis(genesis, opts);
    const close = async () => {
      await tiered.close();
      await rm(dir, { recursive: true, force: true });
    };
    return { genesis, db, logger, store, tiered, memory, close };
  }

  it('a cold path below the resident level comes back in one round trip, the same nodes as memory mode', async () => {
    const { genesis, db, store, tiered, memory, close } = await pair('monsoon-tiered-paths-');
    try {
      for (const { address } of genesis.alloc.slice(0, 20)) {
        store.cache.clear();
        store.setMemoryBudget(1);
        // Each proof is 3+ nodes below the one resident level: one round trip per level without records.
        expect(
          memory.head.state.state.accounts.prove(keccak.keccak256(address)).length,
        ).toBeGreaterThanOrEqual(3);
        const trips = db.roundTrips;
        expect(await reads.account(tiered, HEAD, address)).toEqual(
          await reads.account(memory, HEAD, address),
        );
        expect(db.roundTrips - trips).toBe(1);
      }
      expect(store.tieredStats().pathNodes).toBeGreaterThan(0);
      expect(store.tieredStats().corrupt).toBe(0);
    } finally {
      await close();
    }
  });

  it('a path record that does not hash to its stored hash is refused and reported; the read answers by hash', async () => {
    const { genesis, db, logger, store, tiered, memory, close } = await pair('monsoon-tiered-paths-bad-');
    try {
      const address = genesis.alloc[0]!.address;
      const key = keccak.keccak256(address);
      const proof = memory.head.state.state.accounts.prove(key);
      // The leaf's record: its place is where the proof ends; one bit of the node flipped.
      const leaf = proof[proof.length - 1]!;
      const bad = Buffer.from(leaf);
      bad[bad.length - 1] = bad[bad.length - 1]! ^ 1;
      const hash = Buffer.from(keccak.keccak256(leaf)).toString('latin1');
      let depth = -1;
      for (let d = 1; d <= 64 && depth < 0; d++) {
        const [v] = await db.getMany([pathKey(key, d)]);
        if (v !== undefined && v.subarray(0, 32).toString('latin1') === hash) depth = d;
      }
      expect(depth).toBeGreaterThan(1);
      await db.write([[pathKey(key, depth), pathValue(hash, bad)]]);
      store.cache.clear();
      store.setMemoryBudget(1);
      const trips = db.roundTrips;
      expect(await reads.account(tiered, HEAD, address)).toEqual(await reads.account(memory, HEAD, address));
      expect(db.roundTrips - trips).toBe(2); // the leaf again, by its hash
      expect(store.tieredStats().corrupt).toBe(1);
      expect(logger.entries.some((e) => e.msg === 'corrupt path record from LevelDB')).toBe(true);
    } finally {
      await close();
    }
  });
});

describe('tiered eviction and cold reads', () => {
  it('a pass does not run a slice while a cold read waits for its round trip', async () => {
    const genesis = makeGenesis(34, 300);
    const dir = await mkdtemp(join(tmpdir(), 'monsoon-tiered-trips-first-'));
    const db = new ProbedDb(await openLocalNodeDb(join(dir, 'leveldb')));
    const store = new TieredStore({ memoryBudget: 1, residentLevels: 1, gcEveryNodes: 0 }, { db });
    const opts = { window: 3, forkWindow: 1 };
    const tiered = StorageNode.fromGenesis(genesis, opts, { observers: [store], faults: store });
    const memory = StorageNode.fromGenesis(genesis, opts);
    try {
      await tiered.startObservers();
      const [a, b] = genesis.alloc.map((x) => x.address);
      store.cache.clear();
      // A cold read faults its path into the trees: when it has answered, a pass is due.
      expect(await reads.account(tiered, HEAD, a!)).toEqual(await reads.account(memory, HEAD, a!));
      const slices = store.tieredStats().evictSlices;
      let open!: () => void;
      db.gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const cold = reads.account(tiered, HEAD, b!);
      for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
      expect(store.tieredStats().evictSlices).toBe(slices); // the pass waits for the round trip
      db.gate = undefined;
      open();
      expect(await cold).toEqual(await reads.account(memory, HEAD, b!));
      await store.evicted();
      expect(store.tieredStats().evictSlices).toBeGreaterThan(slices);
    } finally {
      await tiered.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tiered with 256 shards', () => {
  it('keeps the levels above the shards resident: blocks are answered and reads match memory mode', async () => {
    const genesis = makeGenesis(256, 3000);
    const chain = new RefChain(genesis, 256);
    const mine = Array.from({ length: 128 }, (_, i) => i);
    const mineSet = new Set(mine);
    const opts = { shardCount: 256 as const, shards: mine, window: 4, forkWindow: 1 };
    const dir = await mkdtemp(join(tmpdir(), 'monsoon-tiered-256-'));
    const store = new TieredStore({ memoryBudget: 1, residentLevels: 1 }, { db: await openLocalNodeDb(dir) });
    const tiered = StorageNode.fromGenesis(genesis, opts, { observers: [store], faults: store });
    const memory = StorageNode.fromGenesis(genesis, opts);
    try {
      await tiered.startObservers();
      expect(store.opts.residentLevels).toBe(2);
      let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
      for (let i = 1; i <= 3; i++) {
        const b = chain.block(parent, 70 + i, 80);
        const req = RefChain.forShards(b.req, mineSet);
        expect(await outcome(() => tiered.applyBlock(req))).toEqual(
          await outcome(() => memory.applyBlock(req)),
        );
        parent = { hash: b.hash, state: b.state, number: BigInt(i) };
        expect(await reads.roots(tiered, HEAD)).toEqual(await reads.roots(memory, HEAD));
      }
      for (const a of genesis.alloc.filter((_, k) => k % 50 === 0)) {
        expect(await reads.account(tiered, HEAD, a.address)).toEqual(
          await reads.account(memory, HEAD, a.address),
        );
      }
    } finally {
      await tiered.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('streamed genesis (larger than memory)', () => {
  /** A sink that keeps what it is given and the largest batch. */
  class MapSink {
    readonly nodes = new Map<string, string>();
    largest = 0;
    async writeNodes(nodes: readonly FreshNode[]): Promise<void> {
      this.largest = Math.max(this.largest, nodes.length);
      for (const n of nodes) this.nodes.set(n.hash, n.enc);
    }
  }

  it.each([
    { shardCount: 16 as const, shards: undefined, top: 17 },
    { shardCount: 16 as const, shards: [0, 1, 2, 3, 4, 5, 6, 7], top: 9 },
    { shardCount: 256 as const, shards: Array.from({ length: 128 }, (_, i) => i), top: 17 },
  ])(
    'the root and every answer of the in-memory genesis, holding only the levels above the buckets ($shardCount shards)',
    async ({ shardCount, shards, top }) => {
      const genesis = makeGenesis(77, 5000);
      const layout = new ShardLayout(shardCount);
      const owned = shards ?? layout.all();
      const memory = ShardState.fromGenesis(genesis.alloc, layout, owned);
      const sink = new MapSink();
      const streamed = (await streamGenesis(genesis.alloc, layout, owned, sink, { batch: 500 }))!;
      expect(toHex(streamed.root())).toBe(toHex(memory.root()));
      expect(streamed.shardRoots().map((r) => (r ? toHex(r) : ''))).toEqual(
        memory.shardRoots().map((r) => (r ? toHex(r) : '')),
      );
      // 5,000 accounts fill every 2-nibble bucket: in memory, the root and the branches above the
      // buckets of the owned shards (16 shards: one per shard), nothing else; the rest went out in
      // batches of about 500 nodes (a batch closes after the bucket that fills it).
      expect(streamed.state.residentNodes()).toBe(top);
      expect(sink.largest).toBeLessThan(500 + 200);
      // Every node of the owned part is in the sink, and nothing of a foreign shard.
      const want = new Map<string, string>();
      memory.state.forEachNode((h, enc) => want.set(h, enc));
      const resident = new Set<string>();
      streamed.state.forEachNode((h) => resident.add(h));
      for (const [h] of want) expect(sink.nodes.has(h) || resident.has(h)).toBe(true);
      expect(sink.nodes.size + resident.size).toBeLessThanOrEqual(want.size + 2);
      // A tiered node over the streamed state answers as memory mode.
      const dir = await mkdtemp(join(tmpdir(), 'monsoon-tiered-stream-'));
      const store = new TieredStore(
        { memoryBudget: 1, residentLevels: 1 },
        { db: await openLocalNodeDb(dir) },
      );
      const opts = { shardCount, ...(shards ? { shards } : {}) };
      const tiered = await StorageNode.fromGenesisStreamed(genesis, opts, {
        observers: [store],
        faults: store,
        genesisSink: store,
      });
      const ref = StorageNode.fromGenesis(genesis, opts);
      try {
        await tiered.startObservers();
        expect(toHex(tiered.head.hash)).toBe(toHex(ref.head.hash));
        for (const a of genesis.alloc.filter((_, i) => i % 50 === 0)) {
          const slot = a.storage[0]?.[0] ?? new Uint8Array(32);
          expect(await reads.account(tiered, HEAD, a.address)).toEqual(
            await reads.account(ref, HEAD, a.address),
          );
          expect(await reads.storage(tiered, HEAD, a.address, slot)).toEqual(
            await reads.storage(ref, HEAD, a.address, slot),
          );
        }
      } finally {
        await tiered.close();
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('tiered eviction a part at a time', () => {
  it('the 256 parts of a pass count and evict exactly what one pass does, over versions sharing nodes', () => {
    const genesis = makeGenesis(33, 3000);
    // Two identical pairs of versions (a genesis and a block on it, with storage tries), built apart.
    const twins = [0, 1].map(() => {
      const chain = new RefChain(genesis, 16);
      const g = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
      const next = chain.block(g, 7, 300).state;
      for (const st of [g.state, next]) st.rootBin(); // clean: a pass evicts only hashed nodes
      return [g.state, next] as const;
    });
    const [one, parts] = twins as [(typeof twins)[0], (typeof twins)[0]];
    const all = one[0].residentBytes();
    expect(parts[0].residentBytes()).toBe(all);
    // A rule that evicts about half the nodes below the kept levels, by hash.
    const rule = (hash: string) => hash.charCodeAt(3) % 2 === 0;
    const seenOne = new Set<object>();
    let bytesOne = 0;
    for (const st of one) bytesOne += st.evictCold(3, seenOne, rule);
    const seenParts = new Set<object>();
    let bytesParts = 0;
    for (let p = 0; p < 256; p++)
      for (const st of parts) bytesParts += st.evictColdPart([p >> 4, p & 15], 3, seenParts, rule);
    expect(bytesParts).toBe(bytesOne);
    expect(bytesOne).toBeLessThan(all); // it did evict
    for (const i of [0, 1]) {
      expect(parts[i]!.residentBytes()).toBe(one[i]!.residentBytes());
      expect(parts[i]!.residentNodes()).toBe(one[i]!.residentNodes());
    }
    // A part must lie above the kept levels.
    expect(() => parts[0].evictColdPart([1, 2, 3], 3, new Set(), rule)).toThrow(/shorter than 3/);
  });
});

describe('a tiered node from a checkpoint of a tiered state', () => {
  it('answers as memory mode over the LevelDB its stubs point into (how the benchmark starts each run)', async () => {
    const genesis = makeGenesis(34, 2000);
    const dir = await mkdtemp(join(tmpdir(), 'monsoon-tiered-ckpt-'));
    const ref = StorageNode.fromGenesis(genesis);
    try {
      const first = new TieredStore(
        { memoryBudget: 1, residentLevels: 2 },
        { db: await openLocalNodeDb(dir) },
      );
      const built = await StorageNode.fromGenesisStreamed(
        genesis,
        {},
        {
          observers: [first],
          faults: first,
          genesisSink: first,
        },
      );
      await built.startObservers();
      const chunks: Uint8Array[] = [];
      for await (const c of encodeCheckpoint(built.head)) chunks.push(c);
      await built.close();
      const store = new TieredStore(
        { memoryBudget: 1, residentLevels: 2 },
        { db: await openLocalNodeDb(dir) },
      );
      const tiered = StorageNode.fromCheckpoint(
        Buffer.concat(chunks),
        genesis,
        {},
        { observers: [store], faults: store },
      );
      try {
        await tiered.startObservers();
        expect(toHex(tiered.head.hash)).toBe(toHex(ref.head.hash));
        for (const a of genesis.alloc.filter((_, i) => i % 40 === 0))
          expect(await reads.account(tiered, HEAD, a.address)).toEqual(
            await reads.account(ref, HEAD, a.address),
          );
        expect(store.tieredStats().roundTrips).toBeGreaterThan(0); // the answers came from LevelDB
      } finally {
        await tiered.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
