/**
 * Randomized differential tests against @ethereumjs/mpt. The reference is always a FRESH
 * ethereumjs trie built by inserts from the model (see helpers/reference.ts for why).
 */

import { createMerkleProof, MerklePatriciaTrie, verifyMPTWithMerkleProof } from '@ethereumjs/mpt';
import { describe, expect, it } from '@jest/globals';
import { DsmTree, EMPTY_ROOT, verifyProof } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { allShortKeys, key32, shortKey, value } from './helpers/keys.js';
import { randomWrite, type WriteGen } from './helpers/ops.js';
import { EMPTY_ROOT_HEX, ethRoot, ethTrie, hex, type Model, unhex } from './helpers/reference.js';

/** The tree holds exactly the model: same root as ethereumjs, every value, and `absent` absent. */
async function expectMatches(tree: DsmTree, model: Model, absent: Iterable<Uint8Array> = []): Promise<void> {
  expect(hex(tree.root())).toBe(await ethRoot(model));
  for (const [k, v] of model) expect(tree.get(unhex(k))).toEqual(v);
  for (const k of absent) if (!model.has(hex(k))) expect(tree.get(k)).toBeUndefined();
}

describe('differential vs fresh @ethereumjs/mpt builds', () => {
  it.each([1, 2])(
    '32-byte keys, values 1–100 bytes: batches of 50 writes, down to empty and back (seed %i)',
    async (seed) => {
      const r = new Prng(seed);
      const tree = new DsmTree();
      const model: Model = new Map();
      /** Every key ever written (hex → bytes): those not in the model must read as absent. */
      const seen = new Map<string, Uint8Array>();
      const gen: WriteGen = {
        newKey: () => {
          const keys = [...model.keys()];
          return key32(r, keys.length > 0 ? unhex(r.pick(keys)) : undefined);
        },
        value: () => value(r, 1, 100),
        pDelete: 0.15,
      };
      const write = (): void => {
        const k = randomWrite(r, tree, model, gen);
        seen.set(hex(k), k);
      };
      const check = async (): Promise<void> => {
        const gone = [...seen.keys()].filter((k) => !model.has(k)).map(unhex);
        await expectMatches(tree, model, r.shuffle(gone).slice(0, 30));
      };

      // Grow.
      for (let batch = 0; batch < 12; batch++) {
        for (let i = 0; i < 50; i++) write();
        await check();
      }
      expect(model.size).toBeGreaterThan(150);
      // Shrink to nothing, overwriting now and then on the way.
      while (model.size > 0) {
        for (let i = 0; i < 50 && model.size > 0; i++) {
          const k = r.pick([...model.keys()]);
          if (r.chance(0.1)) {
            const v = gen.value();
            tree.put(unhex(k), v);
            model.set(k, v);
          } else {
            tree.del(unhex(k));
            model.delete(k);
          }
        }
        await check();
      }
      expect(hex(tree.root())).toBe(EMPTY_ROOT_HEX);
      expect(tree.root()).toEqual(new Uint8Array(EMPTY_ROOT));
      expect(tree.prove(r.bytes(32))).toEqual([]);
      for (const k of seen.values()) expect(tree.get(k)).toBeUndefined();
      // Grow again from empty, bringing back keys that were there before too.
      gen.pDelete = 0.2;
      for (let batch = 0; batch < 10; batch++) {
        for (let i = 0; i < 50; i++) {
          if (r.chance(0.2)) {
            const k = r.pick([...seen.values()]);
            const v = gen.value();
            tree.put(k, v);
            model.set(hex(k), v);
          } else {
            write();
          }
        }
        await check();
      }
      expect(model.size).toBeGreaterThan(100);
    },
  );

  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    'short prefix keys (1–4 bytes), values 1–40 bytes, heavy deletes (seed %i)',
    async (seed) => {
      const r = new Prng(100 + seed);
      const universe = allShortKeys();
      const tree = new DsmTree();
      const model: Model = new Map();
      const gen: WriteGen = { newKey: () => shortKey(r), value: () => value(r, 1, 40), pDelete: 0.4 };
      for (let batch = 0; batch < 14; batch++) {
        // Phases that fill up and phases that empty out, so branches holding values collapse.
        gen.pDelete = batch % 4 === 3 ? 0.75 : 0.4;
        for (let i = 0; i < 25; i++) randomWrite(r, tree, model, gen);
        await expectMatches(tree, model, universe);
      }
      // Everything out, in random order, checking along the way.
      const rest = r.shuffle([...model.keys()]);
      for (let i = 0; i < rest.length; i++) {
        tree.del(unhex(rest[i]!));
        model.delete(rest[i]!);
        if (i % 7 === 6) await expectMatches(tree, model, universe);
      }
      expect(hex(tree.root())).toBe(EMPTY_ROOT_HEX);
      for (const k of universe) expect(tree.get(k)).toBeUndefined();
    },
  );

  it.each([1, 2, 3, 4])('insertion order does not change the root (seed %i)', async (seed) => {
    const r = new Prng(200 + seed);
    const model: Model = new Map();
    while (model.size < 150) {
      const keys = [...model.keys()];
      const k = r.chance(0.4)
        ? shortKey(r)
        : key32(r, keys.length > 0 && r.chance(0.5) ? unhex(r.pick(keys)) : undefined);
      model.set(hex(k), value(r, 1, 60));
    }
    const expected = await ethRoot(model);
    const entries = [...model.entries()];
    const roots: string[] = [];

    for (let order = 0; order < 3; order++) {
      const t = new DsmTree();
      for (const [k, v] of r.shuffle(entries.slice())) t.put(unhex(k), v);
      roots.push(hex(t.root()));
    }
    {
      // Hashing after every insert (small lazy batches) vs once at the end.
      const t = new DsmTree();
      for (const [k, v] of r.shuffle(entries.slice())) {
        t.put(unhex(k), v);
        t.root();
      }
      roots.push(hex(t.root()));
    }
    {
      // Junk keys interleaved and deleted again, some of them extending or prefixing real keys.
      const t = new DsmTree();
      const junk: Uint8Array[] = [];
      for (const [k, v] of r.shuffle(entries.slice())) {
        if (r.chance(0.5)) {
          const j = r.chance(0.5) ? Uint8Array.from([...unhex(k), r.int(256)]) : shortKey(r);
          if (!model.has(hex(j))) {
            t.put(j, value(r, 1, 60));
            junk.push(j);
          }
        }
        t.put(unhex(k), v);
        if (r.chance(0.3) && junk.length > 0) t.del(junk.splice(r.int(junk.length), 1)[0]!);
      }
      for (const j of r.shuffle(junk)) t.del(j);
      roots.push(hex(t.root()));
    }
    {
      // Wrong values first, the right ones later; and the superset-then-delete route.
      const t = new DsmTree();
      for (const [k] of r.shuffle(entries.slice())) t.put(unhex(k), value(r, 1, 60));
      t.root();
      for (const [k, v] of r.shuffle(entries.slice())) t.put(unhex(k), v);
      roots.push(hex(t.root()));
    }
    expect(roots).toEqual(roots.map(() => expected));
  });

  it('keys and values are copied in and out: mutating them later changes nothing', async () => {
    const r = new Prng(250);
    const tree = new DsmTree();
    const model: Model = new Map();
    const handed: [Uint8Array, Uint8Array][] = [];
    for (let i = 0; i < 100; i++) {
      const k = i % 2 ? shortKey(r) : r.bytes(32);
      const v = value(r, 1, 60);
      model.set(hex(k), v.slice());
      tree.put(k, v);
      handed.push([k, v]);
    }
    const root = hex(tree.root());
    for (const [k, v] of handed) {
      k.fill(0xaa);
      v.fill(0xbb);
    }
    for (const [k] of model) {
      const got = tree.get(unhex(k))!;
      got.fill(0xcc);
      for (const n of tree.prove(unhex(k))) n.fill(0);
      tree.root().fill(0);
    }
    expect(hex(tree.root())).toBe(root);
    await expectMatches(tree, model);
  });

  describe('proofs, cross-verified both ways', () => {
    async function crossCheck(model: Model, probes: Uint8Array[]): Promise<void> {
      const tree = new DsmTree();
      for (const [k, v] of model) tree.put(unhex(k), v);
      const eth = await ethTrie(model);
      const root = tree.root();
      expect(hex(root)).toBe(hex(eth.root()));
      let present = 0;
      let absent = 0;
      for (const key of probes) {
        const expected = model.get(hex(key));
        if (expected === undefined) absent++;
        else present++;
        const ours = tree.prove(key);
        // Ours, checked by ethereumjs and by us.
        const byEth = await verifyMPTWithMerkleProof(new MerklePatriciaTrie(), root, key, ours);
        expect(byEth === null ? undefined : new Uint8Array(byEth)).toEqual(expected);
        expect(verifyProof(root, key, ours)).toEqual(expected);
        // Theirs (which also lists embedded nodes on their own), checked by us.
        const theirs = await createMerkleProof(eth, key);
        expect(verifyProof(root, key, theirs)).toEqual(expected);
        // Same nodes as eth_getProof, embedded ones aside.
        expect(ours.map(hex)).toEqual(theirs.filter((n, i) => i === 0 || n.length >= 32).map(hex));
      }
      expect(present).toBeGreaterThan(20);
      expect(absent).toBeGreaterThan(20);
    }

    it('32-byte keys with deep neighbours: present keys, random absent keys, near misses', async () => {
      const r = new Prng(300);
      const model: Model = new Map();
      while (model.size < 300) {
        const keys = [...model.keys()];
        const k = key32(r, keys.length > 0 ? unhex(r.pick(keys)) : undefined);
        model.set(hex(k), value(r, 1, 100));
      }
      const keys = [...model.keys()].map(unhex);
      const probes: Uint8Array[] = r.shuffle(keys.slice()).slice(0, 80);
      for (let i = 0; i < 80; i++) {
        const base = r.pick(keys);
        const choice = i % 4;
        if (choice === 0) probes.push(r.bytes(32));
        else if (choice === 1)
          probes.push(key32(r, base)); // a near miss (or a hit)
        else if (choice === 2)
          probes.push(base.subarray(0, r.range(1, 31))); // a prefix of a key
        else probes.push(Uint8Array.from([...base, r.int(256)])); // a key extended
      }
      await crossCheck(model, probes);
    });

    it('short prefix keys: branches with values, embedded nodes', async () => {
      for (const seed of [1, 2, 3]) {
        const r = new Prng(310 + seed);
        const model: Model = new Map();
        for (let i = 0; i < 120; i++) model.set(hex(shortKey(r)), value(r, 1, 40));
        for (let i = 0; i < 30; i++) model.delete(hex(shortKey(r)));
        await crossCheck(model, allShortKeys(3).concat(r.shuffle(allShortKeys(4).slice(84)).slice(0, 60)));
      }
    });
  });
});
