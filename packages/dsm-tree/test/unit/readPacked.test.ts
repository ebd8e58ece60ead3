/**
 * Reads below a stub over a source's encodings in place (VerifiedNodeSource.readBin, readPacked.ts)
 * answer as a tree that holds every node does: the same values, the same proofs byte for byte
 * (levels left out included, embedded nodes counted as levels, each node once in a proveMany),
 * the same MissingNode; and they leave the tree as it was (no node faulted in).
 */
import { describe, expect, it } from '@jest/globals';
import { type DsmError, DsmTree, type VerifiedNodeSource } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { key32 } from './helpers/keys.js';
import { randomTrie } from './helpers/randomTrie.js';
import { unhex } from './helpers/reference.js';

const STUB = 3;

/** A source that serves reads in place, counting what it is asked; getBin must not be used by reads. */
function packedSource(nodes: Map<string, Uint8Array>, lacking?: string) {
  const asked: { hash: string; depth: number }[] = [];
  let faulted = 0;
  const arena = Buffer.alloc(1024);
  const source: VerifiedNodeSource & { readAt: number } = {
    readAt: 0,
    getBin: (h) => {
      faulted++;
      return h === lacking ? undefined : nodes.get(h);
    },
    readBin(hashIn, at, _key, depth) {
      const h = Buffer.from(hashIn.subarray(at, at + 32)).toString('latin1');
      asked.push({ hash: h, depth });
      // The encoding inside memory the source reuses on its next call, with other bytes around
      // it, as a store's arena holds it: the tree reads its extent from its header and copies
      // what it keeps.
      const enc = h === lacking ? undefined : nodes.get(h);
      if (enc === undefined) return undefined;
      arena.fill(0xee);
      this.readAt = 7;
      arena.set(enc, 7);
      return arena;
    },
  };
  return { source, asked, faulted: () => faulted };
}

function setup(seed: number, maxValue: number) {
  const r = new Prng(seed);
  const { model, root, nodes } = randomTrie(r, 300, maxValue);
  const keys = [...model.keys()].map(unhex);
  for (let i = 0; i < 60; i++) keys.push(key32(r, i % 2 === 0 ? r.pick(keys) : undefined));
  // The reference: a tree holding every node.
  const full = DsmTree.fromRootHash(root, { source: { getBin: (h) => nodes.get(h) } });
  for (const k of keys) full.get(k);
  return { r, root, nodes, keys, full };
}

describe('reads over packed encodings (readBin)', () => {
  for (const [seed, maxValue] of [
    [1, 60],
    [2, 6],
    [3, 120],
  ] as const) {
    it(`values, proofs and batched proofs equal a whole tree's, at every omitLevels (seed ${seed})`, () => {
      const { root, nodes, keys, full } = setup(seed, maxValue);
      const p = packedSource(nodes);
      const packed = DsmTree.fromRootHash(root, { source: p.source });
      // All values first: one kept as a view of the source's memory would have changed since.
      expect(keys.map((k) => packed.get(k))).toEqual(keys.map((k) => full.get(k)));
      for (const k of keys) {
        for (const omit of [0, 1, 2, 3, 5]) expect(packed.prove(k, omit)).toEqual(full.prove(k, omit));
      }
      for (const omit of [0, 1, 3, 4])
        expect(packed.proveMany(keys, omit)).toEqual(full.proveMany(keys, omit));
      // Nothing was faulted in: the tree is still its root's stub.
      expect(p.faulted()).toBe(0);
      expect(packed.rootNodeForInternalUse?.kind).toBe(STUB);
      expect(p.asked.length).toBeGreaterThan(keys.length);
    });
  }

  it('below resident nodes: a tree partly faulted in proves the rest in place, each node once', () => {
    const { root, nodes, keys, full } = setup(4, 40);
    const tree = DsmTree.fromRootHash(root, { source: { getBin: (h) => nodes.get(h) } });
    // Some paths as objects, then reads switch to the packed source.
    for (const k of keys.slice(0, 40)) tree.get(k);
    const p = packedSource(nodes);
    tree.source = p.source;
    for (const omit of [0, 2, 4]) expect(tree.proveMany(keys, omit)).toEqual(full.proveMany(keys, omit));
    for (const k of keys.slice(30, 90)) expect(tree.prove(k, 1)).toEqual(full.prove(k, 1));
    expect(p.faulted()).toBe(0);
  });

  it('a lacking node: get and proofs throw the MissingNode a faulting tree throws; faultPath asks up to it and stops', () => {
    const { root, nodes, keys } = setup(5, 40);
    for (const k of keys.slice(0, 60)) {
      const reference = DsmTree.fromRootHash(root, { source: { getBin: (h) => nodes.get(h) } });
      const proof = reference.prove(k);
      if (proof.length < 2) continue;
      // The last node of the key's path goes missing.
      const asked = packedSource(nodes);
      DsmTree.fromRootHash(root, { source: asked.source }).get(k);
      const gone = asked.asked[asked.asked.length - 1]!;
      const errorOf = (f: () => unknown) => {
        try {
          f();
        } catch (e) {
          const d = e as DsmError;
          return { code: d.code, message: d.message, meta: d.meta };
        }
        return undefined;
      };
      const faulting = () =>
        DsmTree.fromRootHash(root, {
          source: { getBin: (h) => (h === gone.hash ? undefined : nodes.get(h)) },
        });
      const lacking = () => DsmTree.fromRootHash(root, { source: packedSource(nodes, gone.hash).source });
      const expected = errorOf(() => faulting().get(k));
      expect(expected?.code).toBe('MISSING_NODE');
      expect(errorOf(() => lacking().get(k))).toEqual(expected);
      expect(errorOf(() => lacking().prove(k))).toEqual(errorOf(() => faulting().prove(k)));
      expect(errorOf(() => lacking().proveMany([k]))).toEqual(errorOf(() => faulting().proveMany([k])));
      const reach = packedSource(nodes, gone.hash);
      DsmTree.fromRootHash(root, { source: { ...reach.source, inPlace: true } }).faultPath(k);
      expect(reach.asked).toEqual(asked.asked);
    }
  });
});
