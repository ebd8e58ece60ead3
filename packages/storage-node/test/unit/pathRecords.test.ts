/**
 * Where a tiered store's path records come from when it starts. A streamed genesis hands the
 * store each account-trie node with its place, so the records go to LevelDB with the nodes and
 * the start reads nothing back; a genesis built in memory has every node resident, placed from
 * memory. Either way the records must be exactly those the one-time migration writes by reading
 * every node back from LevelDB (a start over a LevelDB without them), and a cold read right
 * after the start must come back in one round trip.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { keyNibble } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { HEAD } from '@monsoon/protocol';
import {
  type FreshNode,
  forEachChildOnPath,
  type NodeDb,
  nextOnPath,
  openLocalNodeDb,
  PATH_INDEX_KEY,
  PATH_KEY_BYTES,
  PATH_TAG,
  StorageNode,
  TieredStore,
} from '@monsoon/storage-node';
import { Prng } from '@monsoon/test-utils';
import { makeGenesis } from '../helpers/chain.js';

/** A NodeDb that counts its read round trips. */
class CountingDb implements NodeDb {
  getManys = 0;
  constructor(private readonly inner: NodeDb) {}
  get where(): string {
    return this.inner.where;
  }
  getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]> {
    this.getManys++;
    return this.inner.getMany(keys);
  }
  write(puts: readonly (readonly [Buffer, Buffer])[], dels?: readonly Buffer[]): Promise<void> {
    return this.inner.write(puts, dels);
  }
  keys(page: number): AsyncIterable<Buffer[]> {
    return this.inner.keys(page);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Every path record of `db` (key hex → value hex), read around the counter. */
async function recordsOf(db: CountingDb): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const before = db.getManys;
  for await (const page of db.keys(10_000)) {
    const keys = page.filter((k) => k.length === PATH_KEY_BYTES && k[0] === PATH_TAG);
    const values = await db.getMany(keys);
    for (let i = 0; i < keys.length; i++) out.set(keys[i]!.toString('hex'), values[i]!.toString('hex'));
  }
  db.getManys = before;
  return out;
}

type How = 'streamed' | 'in memory' | 'migrated';

describe.each([
  { shardCount: 16 as const, shards: undefined },
  { shardCount: 16 as const, shards: [0, 1, 2, 3, 4, 5, 6, 7] },
  { shardCount: 256 as const, shards: Array.from({ length: 128 }, (_, i) => 2 * i) },
])('path records at the start of a tiered node ($shardCount shards)', ({ shardCount, shards }) => {
  const genesis = makeGenesis(52, 3000);
  const opts = { shardCount, ...(shards ? { shards } : {}) };

  /** A tiered node (one byte of budget, one resident level) started from the genesis, built `how`. */
  async function started(how: How, dir: string, residentLevels = 1) {
    const db = new CountingDb(await openLocalNodeDb(dir));
    const store = new TieredStore({ memoryBudget: 1, residentLevels, gcEveryNodes: 0 }, { db });
    const modules = { observers: [store], faults: store };
    const node =
      how === 'in memory'
        ? StorageNode.fromGenesis(genesis, opts, modules)
        : await StorageNode.fromGenesisStreamed(genesis, opts, {
            ...modules,
            // The migration's case: a sink that writes the nodes without their places.
            genesisSink:
              how === 'streamed'
                ? store
                : { writeNodes: (nodes: readonly FreshNode[]) => store.writeNodes(nodes) },
          });
    const before = db.getManys;
    await node.startObservers();
    return { db, store, node, startGets: db.getManys - before };
  }

  it('a streamed or in-memory genesis reads nothing back, and writes the records the migration writes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'monsoon-path-records-'));
    const nodes: StorageNode[] = [];
    try {
      const got = new Map<How, Awaited<ReturnType<typeof started>>>();
      for (const how of ['streamed', 'in memory', 'migrated'] as const) {
        const s = await started(how, join(root, how.replace(' ', '-')));
        nodes.push(s.node);
        got.set(how, s);
      }
      const migrated = got.get('migrated')!;
      expect(migrated.store.tieredStats().recordsReadBack).toBeGreaterThan(1000);
      const want = await recordsOf(migrated.db);
      expect(want.size).toBeGreaterThan(1000);
      for (const how of ['streamed', 'in memory'] as const) {
        const s = got.get(how)!;
        // One read at start: whether the records are there already (PATH_INDEX_KEY).
        expect(s.startGets).toBe(1);
        expect(s.store.tieredStats().recordsReadBack).toBe(0);
        expect((await s.db.getMany([PATH_INDEX_KEY]))[0]).toBeDefined();
        const records = await recordsOf(s.db);
        expect(records.size).toBe(want.size);
        for (const [k, v] of want) expect([k, records.get(k)]).toEqual([k, v]);
      }
    } finally {
      for (const n of nodes) await n.close();
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a cold read right after a streamed start is served in one round trip, as memory mode answers it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'monsoon-path-records-cold-'));
    const { db, store, node } = await started('streamed', root);
    const memory = StorageNode.fromGenesis(genesis, opts);
    try {
      let served = 0;
      for (const a of genesis.alloc.filter((_, i) => i % 97 === 0)) {
        const shard = memory.layout.shardOfKey(keccak.keccak256(a.address));
        if (!memory.opts.shards.includes(shard)) continue;
        store.cache.clear();
        store.setMemoryBudget(1);
        const before = db.getManys;
        const read = (n: StorageNode) =>
          n.read(() => n.getAccount({ at: HEAD, address: a.address, omitLevels: 0 }));
        expect(await read(node)).toEqual(await read(memory));
        expect(db.getManys - before).toBe(1);
        served++;
      }
      expect(served).toBeGreaterThan(5);
      expect(store.tieredStats().pathNodes).toBeGreaterThan(0);
    } finally {
      await node.close();
      await rm(root, { recursive: true, force: true });
    }
  });

  it('batches learn which records below a fault are used (fewer keys asked); single reads ask them all', async () => {
    // 3,000 accounts and three resident levels: a batch misses hundreds of nodes at depth 3, whose
    // paths end 0-1 levels further down, rarely 2: the records 2-4 below are seldom used.
    const root = await mkdtemp(join(tmpdir(), 'monsoon-path-records-ahead-'));
    const { db, store, node } = await started('streamed', root, 3);
    const memory = StorageNode.fromGenesis(genesis, opts);
    try {
      const held = genesis.alloc.filter((a) =>
        memory.opts.shards.includes(memory.layout.shardOfKey(keccak.keccak256(a.address))),
      );
      /** Cold reads (nothing below the resident levels): records asked a node asked by hash, round trips a read. */
      const cold = async (reads: readonly (() => Promise<void>)[]) => {
        const s0 = store.tieredStats();
        const gets = db.getManys;
        for (const r of reads) {
          store.cache.clear();
          store.setMemoryBudget(1);
          await r();
        }
        const s1 = store.tieredStats();
        return {
          records: (s1.recordsAsked - s0.recordsAsked) / (s1.hashesAsked - s0.hashesAsked),
          trips: (db.getManys - gets) / reads.length,
        };
      };
      const single = (a: (typeof held)[number]) => async () => {
        const read = (n: StorageNode) =>
          n.read(() => n.getAccount({ at: HEAD, address: a.address, omitLevels: 0 }));
        expect(await read(node)).toEqual(await read(memory));
      };
      const batch = (some: typeof held) => async () => {
        const r = {
          at: HEAD,
          omitLevels: 0,
          queries: some.map((a) => ({ address: a.address, slots: [], code: false })),
        };
        const read = (n: StorageNode) =>
          n.read(
            () => n.batchGet(r),
            () => n.batchProbes(r),
          );
        expect(await read(node)).toEqual(await read(memory));
      };
      // Every record while learning (64 askings a depth), and for a single read's few faults.
      const singles = held.slice(0, 20).map(single);
      expect(await cold(singles)).toEqual({ records: 4, trips: 1 });
      const batches = [0, 1, 2, 3].map((i) => batch(held.slice(i * 300, i * 300 + 300)));
      await cold(batches.slice(0, 1));
      const learnt = await cold(batches.slice(1));
      // (Round trips a batch are not held here: a one-byte budget evicts between them, 5-7 a
      // batch asking every record too.)
      expect(learnt.records).toBeLessThan(2.5);
      expect(await cold(singles)).toEqual({ records: 4, trips: 1 });
    } finally {
      await node.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('nextOnPath (a scan of the encoding in place)', () => {
  it('names the child on a key path as a decode of the node does, for keys in the trie and keys not in it', () => {
    const genesis = makeGenesis(61, 3000);
    const tree = StorageNode.fromGenesis(genesis).head.state.state.accounts;
    const r = new Prng(5);
    const keys = [
      ...genesis.alloc.filter((_, i) => i % 10 === 0).map((a) => keccak.keccak256(a.address)),
      ...Array.from({ length: 300 }, () => r.bytes(32)),
    ];
    let compared = 0;
    let found = 0;
    for (const key of keys) {
      // The proof's hashed nodes in order, and the depth of each (the reference walk places them).
      let depth = 0;
      for (const node of tree.prove(key)) {
        if (node.length < 32) break;
        // Reference: the child whose nibbles (from the node's depth on) are the key's, among the
        // node's decoded children.
        const path = new Uint8Array(32);
        let want: { hash: string; depth: number } | undefined;
        forEachChildOnPath(node, depth, path, (hash, d) => {
          if (d > 64) return;
          for (let i = depth; i < d; i++) if (keyNibble(path, i) !== keyNibble(key, i)) return;
          want = { hash, depth: d };
        });
        expect(nextOnPath(node, key, depth)).toEqual(want);
        compared++;
        if (want === undefined) break;
        found++;
        depth = want.depth;
      }
    }
    expect(compared).toBeGreaterThan(1000);
    expect(found).toBeGreaterThan(500);
  });
});
