/**
 * The memory governor's decisions, given sampled numbers (no clock, no real RSS): the tiered
 * store's nodes get a smaller share of the budget while the process grows past budget + 20%,
 * and it comes back once the process is well within; and a tiered store acts on them (its
 * trees are evicted to the smaller share).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { HEAD } from '@monsoon/protocol';
import { MemoryGovernor, openLocalNodeDb, StorageNode, TieredStore } from '@monsoon/storage-node';
import { makeGenesis } from '../helpers/chain.js';

const MiB = 2 ** 20;

describe('memory governor', () => {
  it("cuts the nodes' share while the process grows past budget + overhead, holds in between, regains below", () => {
    const g = new MemoryGovernor({ budget: 100 * MiB, overhead: 0.2, fixedBytes: 0, window: 1 });
    const base = 300 * MiB;
    const at = (growthMiB: number) => g.decide({ rssBytes: base + growthMiB * MiB, baseRssBytes: base });
    expect(at(50)).toBe(1); // well within: all of the budget
    expect(at(119)).toBe(1); // within the limit (120 MiB)
    // 2x the budget: cut in proportion, at most to 0.7 a sample.
    expect(at(200)).toBeCloseTo(0.7, 5);
    expect(at(130)).toBeCloseTo(0.7 * ((120 * 0.95) / 130), 5);
    const cut = g.state().share;
    expect(g.state().cuts).toBe(2);
    // Between calm (85% of the limit = 102 MiB) and the limit: hold.
    expect(at(110)).toBe(cut);
    // Below calm: a step back a sample, up to all of it.
    expect(at(90)).toBeCloseTo(cut + 0.05, 5);
    for (let i = 0; i < 30; i++) at(20);
    expect(g.state().share).toBe(1);
    // Never below minShare, however far over.
    for (let i = 0; i < 30; i++) at(1000);
    expect(g.state().share).toBe(0.1);
    // A process below its base (it freed memory it had before the state) is no growth.
    expect(g.decide({ rssBytes: base - MiB, baseRssBytes: base })).toBeCloseTo(0.15, 5);
  });

  it('allows a fixed part beside the budget, and cuts only for growth that stays over the limit', () => {
    const g = new MemoryGovernor({ budget: 100 * MiB, overhead: 0.2, fixedBytes: 96 * MiB, window: 3 });
    expect(g.limitBytes).toBe(216 * MiB);
    const base = 300 * MiB;
    const at = (growthMiB: number) => g.decide({ rssBytes: base + growthMiB * MiB, baseRssBytes: base });
    expect(at(200)).toBe(1); // within budget + 20% + the fixed part
    // Garbage between collections: one or two samples over the limit are not a cut.
    expect(at(400)).toBe(1);
    expect(at(400)).toBe(1);
    expect(at(190)).toBe(1);
    // Three in a row are: cut by the least of them.
    at(300);
    at(260);
    expect(at(280)).toBeCloseTo((216 * 0.95) / 260, 5);
    expect(g.state().cuts).toBe(1);
  });

  it('a tiered store evicts to the share the governor gives it, and answers the same', async () => {
    const genesis = makeGenesis(41, 400);
    const opts = { window: 3, forkWindow: 1 };
    const dir = await mkdtemp(join(tmpdir(), 'monsoon-tiered-governor-'));
    const memory = StorageNode.fromGenesis(genesis, opts);
    // All of the state fits, packed in the cache (its encodings are ~53% of the decoded state).
    const budget = Math.floor(memory.head.state.state.residentBytes() * 0.6);
    const store = new TieredStore(
      {
        memoryBudget: budget,
        residentLevels: 2,
        gcEveryNodes: 0,
        cacheShare: 0.1,
        processBudget: true,
        baseRssBytes: 0,
        rssSampleMs: 0, // the test gives the samples
        rssFixedBytes: 0,
      },
      { db: await openLocalNodeDb(join(dir, 'leveldb')) },
    );
    const tiered = StorageNode.fromGenesis(genesis, opts, { observers: [store], faults: store });
    const readAll = async () => {
      for (const a of genesis.alloc) {
        const want = await memory.read(() =>
          memory.getAccount({ at: HEAD, address: a.address, omitLevels: 0 }),
        );
        const got = await tiered.read(() =>
          tiered.getAccount({ at: HEAD, address: a.address, omitLevels: 0 }),
        );
        expect(got).toEqual(want);
      }
      await store.evicted();
    };
    try {
      await tiered.startObservers();
      // Every account read in a few intervals: wanted often enough to stay (see FrequencySketch).
      for (let round = 0; round < 3; round++) await readAll();
      // What the store holds: the trees' kept levels and the cache of encodings (reads walk the
      // cache in place: the trees do not grow).
      const held = () => store.tieredStats().residentBytes + store.tieredStats().cacheBytes;
      const full = held();
      // With the whole budget, more stayed than the cut share will hold.
      expect(full).toBeGreaterThan(budget * 0.8);
      // The process is sampled at 3x its budget: the share is cut, and the trees follow it.
      for (let i = 0; i < 3; i++) store.govern(3 * budget); // over for a whole window
      await readAll();
      const s = store.tieredStats();
      expect(s.budgetShare).toBeCloseTo(0.7, 5); // the third sample completed the window: one cut
      expect(s.governorCuts).toBe(1);
      expect(held()).toBeLessThanOrEqual(budget * 0.7);
      expect(held()).toBeLessThan(full);
    } finally {
      await tiered.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
