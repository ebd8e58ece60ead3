/**
 * `get` faults a stub on its path in where it meets it (one walk, not a walk to the stub, one
 * from the root to fault the path in and a third to read it): the nodes above the stub are
 * copied where the tree does not own them, so a snapshot sharing them never sees the other's
 * faults, and a source that reads another tree while serving a node (which reuses the walk's
 * scratch) still leaves each tree exactly as faulting the path in from the root would.
 * Checked against a tree that faults every path in first (`fill`) and then reads: the same
 * values, the same resident nodes, the same root.
 */
import { describe, expect, it } from '@jest/globals';
import { DsmTree, NodeBag, type VerifiedNodeSource } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { randomTrie } from './helpers/randomTrie.js';
import { hex, unhex } from './helpers/reference.js';

/** A bag of every node, and a source over it that can run `during` before serving each node. */
function over(nodes: Map<string, Uint8Array>) {
  const bag = new NodeBag();
  bag.addNodes([...nodes.values()]);
  const hooks: { during?: () => void } = {};
  const source: VerifiedNodeSource = {
    getBin: (h) => {
      hooks.during?.();
      return nodes.get(h);
    },
  };
  return { bag, source, hooks };
}

describe('get faulting stubs in on its walk', () => {
  for (const seed of [11, 12, 13]) {
    it(`a tree and its snapshot read as trees that faulted their paths in first (seed ${seed})`, () => {
      const r = new Prng(seed);
      const { model, root, nodes } = randomTrie(r, 300, 40);
      const keys = [...model.keys()];
      const { bag, source } = over(nodes);
      const t = DsmTree.fromRootHash(root, { source });
      const ref = DsmTree.fromRootHash(root);
      // Both read the first third; then a snapshot shares every node resident so far.
      const first = keys.slice(0, 100);
      for (const k of first) {
        ref.fill(bag, [unhex(k)]);
        expect(t.get(unhex(k))).toEqual(model.get(k));
        expect(ref.get(unhex(k))).toEqual(model.get(k));
      }
      const s = t.snapshot();
      const refS = ref.snapshot();
      // The snapshot reads the second third, the tree the last: each faults below shared nodes.
      for (const k of keys.slice(100, 200)) {
        refS.fill(bag, [unhex(k)]);
        expect(s.get(unhex(k))).toEqual(model.get(k));
      }
      for (const k of keys.slice(200)) {
        ref.fill(bag, [unhex(k)]);
        expect(t.get(unhex(k))).toEqual(model.get(k));
      }
      // Absent keys: a walk that ends at an empty slot or a leaf of another key, faulting on the way.
      for (let i = 0; i < 50; i++) {
        const k = r.bytes(32);
        if (model.has(hex(k))) continue;
        ref.fill(bag, [k]);
        expect(t.get(k)).toBeUndefined();
      }
      // Each tree holds what its own reads faulted in and nothing of the other's.
      expect(t.residentNodes()).toBe(ref.residentNodes());
      expect(s.residentNodes()).toBe(refS.residentNodes());
      expect(t.root()).toEqual(root);
      expect(s.root()).toEqual(root);
      // Writes after the reads: the same roots as the reference trees given the same writes.
      for (const k of keys.slice(0, 20)) {
        t.put(unhex(k), new Uint8Array([1, 2, 3]));
        ref.put(unhex(k), new Uint8Array([1, 2, 3]));
      }
      expect(hex(t.root())).toBe(hex(ref.root()));
      expect(s.root()).toEqual(root);
    });
  }

  it('leaves each tree right when the source reads another tree while serving a node', () => {
    const r = new Prng(21);
    const { model, root, nodes } = randomTrie(r, 300, 40);
    const keys = [...model.keys()];
    const { bag, source, hooks } = over(nodes);
    const t = DsmTree.fromRootHash(root, { source });
    const other = DsmTree.fromRootHash(root, { source: over(nodes).source });
    const ref = DsmTree.fromRootHash(root);
    // A few reads first, and a snapshot, so the nodes above later stubs are shared and copied.
    for (const k of keys.slice(0, 30)) {
      ref.fill(bag, [unhex(k)]);
      t.get(unhex(k));
    }
    t.snapshot();
    ref.snapshot();
    let inner = 0;
    hooks.during = () => {
      // A read of another tree, deep enough to walk (and fault) several levels of its own.
      const k = keys[(inner++ * 7) % keys.length]!;
      expect(other.get(unhex(k))).toEqual(model.get(k));
    };
    for (const k of keys.slice(30)) {
      ref.fill(bag, [unhex(k)]);
      expect(t.get(unhex(k))).toEqual(model.get(k));
    }
    hooks.during = undefined;
    expect(inner).toBeGreaterThan(0);
    expect(t.residentNodes()).toBe(ref.residentNodes());
    for (const k of keys) expect(t.get(unhex(k))).toEqual(model.get(k));
    expect(t.root()).toEqual(root);
  });
});
