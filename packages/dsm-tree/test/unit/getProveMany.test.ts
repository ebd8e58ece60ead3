/**
 * getProveMany: get() of every key and proveMany() of them all in one walk per key. Held to the
 * two calls it replaces, byte for byte, over every way a tree holds its nodes: all in memory
 * (short keys, so values sit in branches too), below stubs faulted in through a resolver or a
 * verified source, read in place from a packed source, and with a node lacking (the same
 * MissingNode).
 */
import { describe, expect, it } from '@jest/globals';
import { type DsmError, DsmTree, type VerifiedNodeSource } from '@monsoon/dsm-tree';
import { Prng, thrown } from '@monsoon/test-utils';
import { allShortKeys, key32, shortKey, value } from './helpers/keys.js';
import { randomTrie } from './helpers/randomTrie.js';
import { unhex } from './helpers/reference.js';

/**
 * getProveMany's answer as plain data (values, then the bag), checked to be getProvePacked's
 * too (its buffer cut at its ends gives the same nodes).
 */
function both(t: DsmTree, keys: readonly Uint8Array[], omit: number) {
  const values: (Uint8Array | undefined)[] = [];
  const bag = t.getProveMany(keys, omit, values);
  const packedValues: (Uint8Array | undefined)[] = [];
  const { bytes, ends } = t.getProvePacked(keys, omit, packedValues);
  expect(bytes.length).toBe(ends.length === 0 ? 0 : ends[ends.length - 1]);
  expect(Array.from(ends, (end, i) => bytes.slice(i === 0 ? 0 : ends[i - 1], end))).toEqual(bag);
  expect(packedValues).toEqual(values);
  return { values, bag };
}

/** The same from the two calls it replaces. */
function apart(t: DsmTree, keys: readonly Uint8Array[], omit: number) {
  const values = keys.map((k) => t.get(k));
  return { values, bag: t.proveMany(keys, omit) };
}

/** A source that serves reads in place from an arena it overwrites on every call. */
function packedSource(nodes: Map<string, Uint8Array>, lacking?: string): VerifiedNodeSource {
  const arena = Buffer.alloc(1024);
  return {
    readAt: 0,
    getBin: (h) => (h === lacking ? undefined : nodes.get(h)),
    readBin(hashIn, at) {
      const h = Buffer.from(hashIn.subarray(at, at + 32)).toString('latin1');
      const enc = h === lacking ? undefined : nodes.get(h);
      if (enc === undefined) return undefined;
      arena.fill(0xee);
      (this as { readAt: number }).readAt = 5;
      arena.set(enc, 5);
      return arena;
    },
  };
}

/** What `f` throws, as plain data (code, message, meta), or undefined. */
function errorOf(f: () => unknown) {
  const e = thrown(f) as DsmError | undefined;
  return e === undefined ? undefined : { code: e.code, message: e.message, meta: e.meta };
}

describe('getProveMany', () => {
  it('equals get and proveMany over short keys (values in branches, embedded nodes), at every omitLevels', () => {
    const r = new Prng(11);
    for (let round = 0; round < 20; round++) {
      const t = new DsmTree();
      const n = r.range(1, 120);
      for (let i = 0; i < n; i++) t.put(shortKey(r), value(r, 1, r.chance(0.5) ? 4 : 40));
      const asked = allShortKeys(3).filter(() => r.chance(0.5));
      for (let i = 0; i < 20; i++) asked.push(shortKey(r, 5)); // repeats and absent keys too
      for (const omit of [0, 1, 2, 4]) expect(both(t, asked, omit)).toEqual(apart(t, asked, omit));
    }
    expect(both(new DsmTree(), [Uint8Array.of(1)], 0)).toEqual({ values: [undefined], bag: [] });
  });

  for (const seed of [1, 2, 3]) {
    it(`equals get and proveMany below stubs: faulted by a resolver, by a source, read packed (seed ${seed})`, () => {
      const r = new Prng(seed);
      const { model, root, nodes } = randomTrie(r, 400, seed === 2 ? 6 : 70);
      const keys = [...model.keys()].map(unhex);
      const asked: Uint8Array[] = [];
      for (let i = 0; i < 150; i++) asked.push(r.chance(0.8) ? r.pick(keys) : key32(r, r.pick(keys)));
      const resolver = (h: Uint8Array) => nodes.get(Buffer.from(h).toString('latin1'));
      const trees = [
        () => DsmTree.fromRootHash(root, { resolver }),
        () => DsmTree.fromRootHash(root, { source: { getBin: (h) => nodes.get(h) } }),
        () => DsmTree.fromRootHash(root, { source: packedSource(nodes) }),
      ];
      for (const make of trees) {
        for (const omit of [0, 2, 3]) {
          // Each on a fresh tree: the first walk faults paths in, and must answer as a full one.
          expect(both(make(), asked, omit)).toEqual(apart(make(), asked, omit));
        }
        // And on trees partly faulted in already, the other keys first: their walks pass nodes
        // in memory before they reach a stub.
        const order = [...asked.slice(40), ...asked.slice(0, 40)];
        for (const omit of [0, 1]) {
          const part = make();
          for (const k of asked.slice(0, 40)) part.get(k);
          expect(both(part, order, omit)).toEqual(apart(make(), order, omit));
        }
      }
    });
  }

  it('leaves no node marked: a batch after one that threw (or after any) proves every node again', () => {
    const r = new Prng(21);
    const { model, root, nodes } = randomTrie(r, 300, 50);
    const keys = [...model.keys()].map(unhex);
    const full = DsmTree.fromRootHash(root, { source: { getBin: (h) => nodes.get(h) } });
    const asked = keys.slice(0, 60);
    const reference = apart(full, asked, 0);
    // A node the batch's last key needs goes missing: the batch throws part-way.
    const last = asked[asked.length - 1]!;
    const proof = full.prove(last);
    const gone = Buffer.from(full.keccak.keccak256(proof[proof.length - 1]!)).toString('latin1');
    let lacking = true;
    const t = DsmTree.fromRootHash(root, {
      source: { getBin: (h) => (lacking && h === gone ? undefined : nodes.get(h)) },
    });
    expect(errorOf(() => t.getProveMany(asked, 0, []))?.code).toBe('MISSING_NODE');
    expect(errorOf(() => t.proveMany(asked, 0))?.code).toBe('MISSING_NODE');
    lacking = false;
    expect(both(t, asked, 0)).toEqual(reference);
    expect(t.proveMany(asked, 0)).toEqual(reference.bag);
    expect(both(t, asked, 0)).toEqual(reference);
    // Single proofs (no bag) after bags: whole.
    for (const k of asked.slice(0, 10)) expect(t.prove(k)).toEqual(full.prove(k));
  });

  it('a lacking node: the MissingNode get or proveMany throws first', () => {
    const r = new Prng(9);
    const { model, root, nodes } = randomTrie(r, 300, 50);
    const keys = [...model.keys()].map(unhex);
    let checked = 0;
    for (const k of keys.slice(0, 40)) {
      const proof = DsmTree.fromRootHash(root, { source: { getBin: (h) => nodes.get(h) } }).prove(k);
      if (proof.length < 2) continue;
      const gone = Buffer.from(new DsmTree().keccak.keccak256(proof[proof.length - 1]!)).toString('latin1');
      const asked = [keys[0]!, k, keys[1]!];
      for (const source of [
        () => ({ getBin: (h: string) => (h === gone ? undefined : nodes.get(h)) }),
        () => packedSource(nodes, gone),
      ]) {
        const expected = errorOf(() => apart(DsmTree.fromRootHash(root, { source: source() }), asked, 0));
        expect(expected?.code).toBe('MISSING_NODE');
        expect(errorOf(() => both(DsmTree.fromRootHash(root, { source: source() }), asked, 0))).toEqual(
          expected,
        );
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
  });
});
