/**
 * The one-sided export against the storage node itself: a region filled by RegionExport (from
 * start + each block's fresh nodes, swept as versions are pruned) must let a reader that trusts
 * only a state root walk to exactly the values and proofs the node serves over gRPC, for every
 * held version on two forks, accounts present and absent, slots and code. A forged byte must
 * make the walk miss (and count it), never answer differently.
 */
import { describe, expect, it } from '@jest/globals';
import { keccak } from '@monsoon/keccak';
import { atHash } from '@monsoon/protocol';
import { MappedWalkSource, RegionReader, walkAccount, walkAccounts, walkAccountsFrom } from '@monsoon/rdma';
import { RegionExport, StorageNode } from '@monsoon/storage-node';
import { Prng } from '@monsoon/test-utils';
import { makeGenesis, RefChain } from '../helpers/chain.js';

const hex = (b: Uint8Array | undefined): string => (b === undefined ? '-' : Buffer.from(b).toString('hex'));

describe('RegionExport', () => {
  const genesis = makeGenesis(31, 500);
  const all = new Set(Array.from({ length: 16 }, (_, i) => i));

  async function build(seed: number, owned: ReadonlySet<number>) {
    const chain = new RefChain(genesis, 16);
    const region = await RegionExport.create({
      nodes: 50_000,
      arenaBytes: 16 << 20,
      sweepEvery: 1,
      graceEpochs: 1,
      graceMs: 0,
    });
    const node = StorageNode.fromGenesis(
      genesis,
      { window: 5, forkWindow: 3, shards: [...owned] },
      { observers: [region] },
    );
    await node.startObservers();
    const rng = new Prng(seed);
    const g = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    const tips = [g, g];
    for (let i = 1; i <= 9; i++) {
      for (const fork of [0, 1]) {
        const p = tips[fork]!;
        const b = chain.block(p, rng.u32(), fork === 0 ? 60 : 20, { difficulty: fork === 0 ? 10n : 1n });
        await node.applyBlock(RefChain.forShards(b.req, owned));
        tips[fork] = { hash: b.hash, state: b.state, number: p.number + 1n };
      }
    }
    return { node, region, rng };
  }

  it('walks give byte-identical values and proofs to the node, every held version, both forks', async () => {
    const { node, region, rng } = await build(5, all);
    const reader = new RegionReader(region.bytes);
    const fetch = (h: Uint8Array) => reader.node(h);
    const versions = node.versions.all();
    expect(versions.length).toBeGreaterThanOrEqual(5);
    expect(region.counters.sweeps).toBeGreaterThan(0);
    expect(region.writer.counters.removed).toBeGreaterThan(0);
    let compared = 0;
    for (const v of versions) {
      const addresses = [
        ...genesis.alloc.filter((_, i) => i % 3 === 0).map((a) => a.address),
        ...Array.from({ length: 20 }, () => rng.bytes(20)), // absent
      ];
      for (const address of addresses) {
        const slots = [
          ...(genesis.alloc.find((a) => a.address === address)?.storage.map(([s]) => s) ?? []),
          rng.bytes(32),
        ];
        const w = walkAccount(fetch, v.header.stateRoot, { address, slots, code: true });
        expect(w).toBeDefined();
        const acct = node.getAccount({ at: atHash(v.hash), address, omitLevels: 0 });
        expect(hex(w!.accountRlp)).toBe(hex(acct.accountRlp));
        expect(w!.accountProof.map(hex)).toEqual(acct.proof.map(hex));
        const batch = node.batchGet({
          at: atHash(v.hash),
          queries: [{ address, slots, code: true }],
          omitLevels: 0,
        });
        expect(hex(w!.code)).toBe(hex(batch.results[0]!.code));
        slots.forEach((slot, j) => {
          expect(hex(w!.slotValues[j])).toBe(hex(batch.results[0]!.slotValues[j]));
          const s = node.getStorage({ at: atHash(v.hash), address, slot, omitLevels: 0 });
          expect(w!.storageProofs[j]!.map(hex)).toEqual(s.storageProof.map(hex));
        });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(500);
    // Batched walks (a level at a time, shared nodes once) answer exactly as single walks.
    for (const v of versions) {
      const queries = genesis.alloc
        .filter((_, i) => i % 4 === 0)
        .map((a) => ({
          address: a.address,
          slots: [...a.storage.map(([s]) => s), rng.bytes(32)],
          code: true,
        }));
      const many = walkAccounts((hs) => reader.nodes(hs), v.header.stateRoot, queries);
      queries.forEach((q, i) => {
        const one = walkAccount(fetch, v.header.stateRoot, q)!;
        expect(many[i]).toBeDefined();
        expect(hex(many[i]!.accountRlp)).toBe(hex(one.accountRlp));
        expect(many[i]!.accountProof.map(hex)).toEqual(one.accountProof.map(hex));
        expect(many[i]!.slotValues.map(hex)).toEqual(one.slotValues.map(hex));
        expect(many[i]!.storageProofs.map((p) => p.map(hex))).toEqual(
          one.storageProofs.map((p) => p.map(hex)),
        );
        expect(hex(many[i]!.code)).toBe(hex(one.code));
      });
    }
    expect(reader.counters.misses).toBe(0);
    expect(reader.counters.rejected).toBe(0);
    // The addon's walk, every version: the node's BatchGet answers and the JS walk's proofs.
    const native = new MappedWalkSource(region.bytes, reader.geometry);
    let nativeCompared = 0;
    for (const v of versions) {
      const queries = [
        ...genesis.alloc.map((a) => ({
          address: a.address,
          slots: [...a.storage.map(([s]) => s), rng.bytes(32)],
          code: true,
        })),
        ...Array.from({ length: 30 }, () => ({ address: rng.bytes(20), slots: [rng.bytes(32)], code: true })),
      ];
      const { answers, nodes } = await walkAccountsFrom(native, v.header.stateRoot, queries);
      const js = walkAccounts((hs) => reader.nodes(hs), v.header.stateRoot, queries);
      const truth = node.batchGet({ at: atHash(v.hash), queries, omitLevels: 0 });
      queries.forEach((_, i) => {
        const a = answers[i]!;
        expect(a).toBeDefined();
        expect(hex(a.accountRlp)).toBe(hex(truth.results[i]!.accountRlp));
        expect(a.slotValues.map(hex)).toEqual(truth.results[i]!.slotValues.map(hex));
        expect(hex(a.code)).toBe(hex(truth.results[i]!.code));
        expect(a.accountProof.map(hex)).toEqual(js[i]!.accountProof.map(hex));
        expect(a.storageProofs.map((p) => p.map(hex))).toEqual(js[i]!.storageProofs.map((p) => p.map(hex)));
        nativeCompared++;
      });
      // What the walks read is what the node's answer carries: its bag (trie nodes) and the code.
      const codes = new Set(truth.results.map((r) => hex(r.code)));
      const read = new Set(nodes.map(hex).filter((n) => !codes.has(n)));
      expect(read).toEqual(new Set(truth.bag.map(hex)));
      // Without proof lists (what a client's transport asks for), a third of the queries wanting
      // neither slots nor code, a third code only: the same values, and the same nodes read (every
      // proof's, checked).
      const lean = queries.map((q, i) =>
        i % 3 === 2 ? q : { address: q.address, slots: [], code: i % 3 === 1 },
      );
      const leanTruth = node.batchGet({ at: atHash(v.hash), queries: lean, omitLevels: 0 });
      const bare = await walkAccountsFrom(native, v.header.stateRoot, lean, undefined, { proofs: false });
      lean.forEach((_, i) => {
        const a = bare.answers[i]!;
        expect(a).toBeDefined();
        expect(hex(a.accountRlp)).toBe(hex(leanTruth.results[i]!.accountRlp));
        expect(a.slotValues.map(hex)).toEqual(leanTruth.results[i]!.slotValues.map(hex));
        expect(hex(a.code)).toBe(hex(leanTruth.results[i]!.code));
        expect(a.accountProof).toEqual([]);
        expect(a.storageProofs.every((p) => p.length === 0)).toBe(true);
      });
      const leanCodes = new Set(leanTruth.results.map((r) => hex(r.code)));
      expect(new Set(bare.nodes.map(hex).filter((n) => !leanCodes.has(n)))).toEqual(
        new Set(leanTruth.bag.map(hex)),
      );
    }
    expect(nativeCompared).toBeGreaterThan(2000);
    expect(native.counters.misses).toBe(0);
    expect(native.counters.rejected).toBe(0);
  });

  it('a node holding some shards: walks into its shards answer, walks into others miss', async () => {
    const owned = new Set([0, 1, 2, 3, 4, 5, 6, 7]);
    const { node, region } = await build(6, owned);
    const reader = new RegionReader(region.bytes);
    let inside = 0;
    let outside = 0;
    for (const a of genesis.alloc) {
      const w = walkAccount((h) => reader.node(h), node.head.header.stateRoot, {
        address: a.address,
        slots: [],
        code: false,
      });
      if (node.head.state.holdsKey(keccak.keccak256(a.address))) {
        expect(hex(w!.accountRlp)).toBe(
          hex(node.getAccount({ at: atHash(node.head.hash), address: a.address, omitLevels: 0 }).accountRlp),
        );
        inside++;
      } else {
        expect(w).toBeUndefined();
        outside++;
      }
    }
    expect(inside).toBeGreaterThan(0);
    expect(outside).toBeGreaterThan(0);
  });

  it('a forged region is caught: every flipped byte makes walks miss or answer the truth, never lie', async () => {
    const { node, region, rng } = await build(7, all);
    const v = node.head;
    const queries = genesis.alloc
      .slice(0, 60)
      .map((a) => ({ address: a.address, slots: a.storage.map(([s]) => s), code: true }));
    const truth = queries.map(
      (q) => node.batchGet({ at: atHash(v.hash), queries: [q], omitLevels: 0 }).results[0]!,
    );
    const forged = region.bytes.slice();
    const arenaStart = new RegionReader(forged).geometry.arenaOffset;
    const used = region.writer.arenaUsed;
    let missed = 0;
    let nativeMissed = 0;
    let rejected = 0;
    for (let round = 0; round < 40; round++) {
      const copy = forged.slice();
      // Flip bytes in the arena (node bytes) and in the index (entries).
      for (let k = 0; k < 200; k++) copy[arenaStart + rng.int(used)]! ^= 1 + rng.int(255);
      for (let k = 0; k < 50; k++) copy[4096 + rng.int(arenaStart - 4096)]! ^= 1 + rng.int(255);
      const reader = new RegionReader(copy);
      const native = await walkAccountsFrom(
        new MappedWalkSource(copy, reader.geometry),
        v.header.stateRoot,
        queries,
      );
      queries.forEach((_, i) => {
        const w = native.answers[i];
        if (w === undefined) {
          nativeMissed++;
          return;
        }
        expect(hex(w.accountRlp)).toBe(hex(truth[i]!.accountRlp));
        expect(hex(w.code)).toBe(hex(truth[i]!.code));
        expect(w.slotValues.map(hex)).toEqual(truth[i]!.slotValues.map(hex));
      });
      queries.forEach((q, i) => {
        const w = walkAccount((h) => reader.node(h), v.header.stateRoot, q);
        if (w === undefined) {
          missed++;
          return;
        }
        expect(hex(w.accountRlp)).toBe(hex(truth[i]!.accountRlp));
        expect(hex(w.code)).toBe(hex(truth[i]!.code));
        w.slotValues.forEach((s, j) => {
          expect(hex(s)).toBe(hex(truth[i]!.slotValues[j]));
        });
      });
      rejected += reader.counters.rejected;
    }
    expect(missed).toBeGreaterThan(0);
    expect(nativeMissed).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
  });
});
