/**
 * The top layer (DESIGN §3.6): prune to retention level r, fill back from node bags (a stub only
 * takes the node whose hash it is), resolvers, and the sibling a delete needs.
 */
import { describe, expect, it } from '@jest/globals';
import { DsmErrorCode, DsmTree, NodeBag, verifyProof } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { expectDsmError } from './helpers/errors.js';
import { key32, value } from './helpers/keys.js';
import { proofPath, stubAt } from './helpers/proofPath.js';
import { ethRoot, hex, type Model, refKeccak, unhex } from './helpers/reference.js';

const r = new Prng(700);
const model: Model = new Map();
while (model.size < 400) {
  const ks = [...model.keys()];
  model.set(hex(key32(r, ks.length > 0 ? unhex(r.pick(ks)) : undefined)), value(r, 1, 100));
}
const full = new DsmTree();
for (const [k, v] of model) full.put(unhex(k), v);
const ROOT = hex(full.root());
const keys = [...model.keys()].map(unhex);
const absent = Array.from({ length: 40 }, (_, i) => (i % 2 ? r.bytes(32) : key32(r, r.pick(keys)))).filter(
  (k) => !model.has(hex(k)),
);
const probes = keys.slice(0, 80).concat(absent);

/** Every node of the full tree, by hash (hex). */
const allNodes = new Map<string, Uint8Array>();
for (const k of keys) for (const n of full.prove(k)) allNodes.set(hex(refKeccak(n)), n);

function prunedCopy(level: number): DsmTree {
  const t = full.snapshot();
  t.prune(level);
  return t;
}

/** A node with one byte of its value region changed (so it hashes differently). */
function tamper(node: Uint8Array): Uint8Array {
  const n = node.slice();
  n[n.length - 2]! ^= 0x01;
  return n;
}

describe('prune', () => {
  it.each([0, 1, 2, 3, 4, 5, 6])(
    'prune(%i) keeps the root; reads below the level hit the stub by name',
    (level) => {
      const t = prunedCopy(level);
      expect(hex(t.root())).toBe(ROOT);
      let stubbed = 0;
      for (const key of probes) {
        const stub = stubAt(full.prove(key), key, level);
        if (stub === undefined) {
          // The whole path is in the top layer.
          expect(t.get(key)).toEqual(model.get(hex(key)));
          expect(t.prove(key).map(hex)).toEqual(full.prove(key).map(hex));
          continue;
        }
        stubbed++;
        const name = hex(refKeccak(stub.node));
        expect(expectDsmError(() => t.get(key), DsmErrorCode.MissingNode).meta.hash).toBe(name);
        expect(expectDsmError(() => t.prove(key), DsmErrorCode.MissingNode).meta.hash).toBe(name);
        expect(expectDsmError(() => t.put(key, Uint8Array.of(1)), DsmErrorCode.MissingNode).meta.hash).toBe(
          name,
        );
        expect(expectDsmError(() => t.del(key), DsmErrorCode.MissingNode).meta.hash).toBe(name);
      }
      // The failed writes changed nothing.
      expect(hex(t.root())).toBe(ROOT);
      if (level === 0) expect(stubbed).toBe(probes.length);
      if (level <= 2) expect(stubbed).toBeGreaterThan(probes.length / 2);
      if (level === 6) expect(stubbed).toBeLessThan(probes.length / 4);
    },
  );

  it('a write that stays in the top layer needs no fill and gives the full tree its root', async () => {
    const t = prunedCopy(1);
    const f = full.snapshot();
    // The empty key ends at the root branch: its value lives in the root node itself.
    const k = new Uint8Array(0);
    t.put(k, Uint8Array.of(7));
    f.put(k, Uint8Array.of(7));
    expect(t.get(k)).toEqual(Uint8Array.of(7));
    expect(hex(t.root())).toBe(hex(f.root()));
    expect(hex(t.root())).toBe(await ethRoot(new Map(model).set('', Uint8Array.of(7))));
  });
});

describe('fill from a node bag', () => {
  it.each([1, 2, 3])('after prune(%i), filled keys read and write like the full tree', async (level) => {
    const t = prunedCopy(level);
    const chosen = keys.slice(0, 40).concat(absent.slice(0, 10));
    const bag = NodeBag.fromProofs(chosen.map((k) => full.prove(k)));
    t.fill(bag, chosen);
    expect(hex(t.root())).toBe(ROOT);
    for (const k of chosen) expect(t.get(k)).toEqual(model.get(hex(k)));
    // Other keys read exactly when the bag happened to hold their whole path; else they hit the
    // first stub the bag could not fill.
    let unreachable = 0;
    for (const k of keys.slice(100, 200)) {
      const below = proofPath(full.prove(k), k).filter((p) => p.level >= level && p.node.length >= 32);
      const missing = below.find((p) => !bag.has(refKeccak(p.node)));
      if (missing === undefined) {
        expect(t.get(k)).toEqual(model.get(hex(k)));
      } else {
        unreachable++;
        const e = expectDsmError(() => t.get(k), DsmErrorCode.MissingNode);
        expect(e.meta.hash).toBe(hex(refKeccak(missing.node)));
      }
    }
    expect(unreachable).toBeGreaterThan(20);

    const f = full.snapshot();
    const written = new Map(model);
    for (const k of chosen) {
      const v = value(r, 1, 100);
      t.put(k, v);
      f.put(k, v);
      written.set(hex(k), v);
    }
    expect(hex(t.root())).toBe(hex(f.root()));
    expect(hex(t.root())).toBe(await ethRoot(written));
    for (const k of chosen) {
      expect(t.get(k)).toEqual(written.get(hex(k)));
      expect(t.prove(k).map(hex)).toEqual(f.prove(k).map(hex));
    }
  });

  it('with every node in the bag, puts and deletes give the full tree its root', async () => {
    const t = prunedCopy(2);
    t.fill(NodeBag.fromProofs(keys.map((k) => full.prove(k))), keys);
    const f = full.snapshot();
    const written = new Map(model);
    const rr = new Prng(710);
    for (let i = 0; i < 200; i++) {
      const k = i % 3 === 0 ? rr.pick(keys) : key32(rr, rr.pick(keys));
      if (i % 2) {
        t.del(k);
        f.del(k);
        written.delete(hex(k));
      } else {
        const v = value(rr, 1, 100);
        t.put(k, v);
        f.put(k, v);
        written.set(hex(k), v);
      }
    }
    expect(hex(t.root())).toBe(hex(f.root()));
    expect(hex(t.root())).toBe(await ethRoot(written));
  });

  it('a bag of nodes from another tree fills nothing', () => {
    const level = 2;
    const t = prunedCopy(level);
    // Same keys; the chosen ones hold other values there, so their paths are other nodes.
    const alt = full.snapshot();
    const chosen = keys.slice(0, 30).filter((k) => stubAt(full.prove(k), k, level) !== undefined);
    expect(chosen.length).toBeGreaterThan(20);
    for (const k of chosen) alt.put(k, value(r, 1, 100));
    const forged = NodeBag.fromProofs(chosen.map((k) => alt.prove(k)));
    for (const k of chosen) {
      expectDsmError(() => t.fill(forged, [k]), DsmErrorCode.MissingNode);
      expectDsmError(() => t.get(k), DsmErrorCode.MissingNode);
    }
    expect(hex(t.root())).toBe(ROOT);
    // And with the real bag next to it, the real values (never the other tree's) come back.
    forged.merge(NodeBag.fromProofs(chosen.map((k) => full.prove(k))));
    t.fill(forged, chosen);
    for (const k of chosen) expect(t.get(k)).toEqual(model.get(hex(k)));
  });

  it('a tampered node cannot fill the stub it was made from', () => {
    const level = 1;
    const t = prunedCopy(level);
    for (const k of keys.slice(0, 20)) {
      const proof = full.prove(k);
      const stub = stubAt(proof, k, level)!;
      const i = proof.indexOf(stub.node);
      const bag = NodeBag.fromProofs([proof.map((n, j) => (j >= i ? tamper(n) : n))]);
      const e = expectDsmError(() => t.fill(bag, [k]), DsmErrorCode.MissingNode);
      expect(e.meta.hash).toBe(hex(refKeccak(stub.node)));
      expectDsmError(() => t.get(k), DsmErrorCode.MissingNode);
    }
    expect(hex(t.root())).toBe(ROOT);
  });

  it('byteSize is the sum of distinct node lengths; shared nodes are stored once', () => {
    const chosen = keys.slice(0, 30);
    const proofs = chosen.map((k) => full.prove(k));
    const distinct = new Map<string, Uint8Array>();
    for (const p of proofs) for (const n of p) distinct.set(hex(refKeccak(n)), n);
    const total = proofs.flat().reduce((s, n) => s + n.length, 0);
    const bag = NodeBag.fromProofs(proofs);
    let sum = 0;
    for (const n of distinct.values()) sum += n.length;
    expect(bag.size).toBe(distinct.size);
    expect(bag.byteSize).toBe(sum);
    expect(sum).toBeLessThan(total); // the root, at least, is shared
    expect(bag.values().map(hex).sort()).toEqual([...distinct.values()].map(hex).sort());
    for (const [h, n] of bag.entries()) {
      expect(hex(h)).toBe(hex(refKeccak(n)));
      expect(bag.has(h)).toBe(true);
      expect(bag.get(h)).toEqual(distinct.get(hex(h)));
    }
    // Adding the same nodes again, or merging a bag of them, changes nothing.
    bag.addNodes(proofs[0]!);
    for (const n of proofs[1]!) expect(hex(bag.add(n))).toBe(hex(refKeccak(n)));
    bag.merge(NodeBag.fromProofs(proofs.slice(0, 10)));
    expect(bag.size).toBe(distinct.size);
    expect(bag.byteSize).toBe(sum);
    // Merging new nodes adds exactly their bytes.
    const extra = NodeBag.fromProofs([full.prove(keys[200]!)]);
    const fresh = extra.values().filter((n) => !distinct.has(hex(refKeccak(n))));
    bag.merge(extra);
    expect(bag.size).toBe(distinct.size + fresh.length);
    expect(bag.byteSize).toBe(sum + fresh.reduce((s, n) => s + n.length, 0));
  });
});

describe('resolver', () => {
  it('a tree known by its root faults nodes in on demand, once', async () => {
    let calls = 0;
    const t = DsmTree.fromRootHash(full.root(), {
      resolver: (h) => {
        calls++;
        return allNodes.get(hex(h));
      },
    });
    expect(hex(t.root())).toBe(ROOT);
    expect(calls).toBe(0);
    const k = keys[0]!;
    expect(t.get(k)).toEqual(model.get(hex(k)));
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual(full.prove(k).length);
    const after = calls;
    expect(t.get(k)).toEqual(model.get(hex(k)));
    expect(calls).toBe(after);

    for (const key of probes) expect(t.get(key)).toEqual(model.get(hex(key)));
    for (const key of probes.slice(0, 30)) expect(t.prove(key).map(hex)).toEqual(full.prove(key).map(hex));
    const f = full.snapshot();
    const written = new Map(model);
    const rr = new Prng(720);
    for (let i = 0; i < 150; i++) {
      const key = rr.pick(probes);
      if (i % 3 === 0) {
        t.del(key);
        f.del(key);
        written.delete(hex(key));
      } else {
        const v = value(rr, 1, 100);
        t.put(key, v);
        f.put(key, v);
        written.set(hex(key), v);
      }
    }
    expect(hex(t.root())).toBe(hex(f.root()));
    expect(hex(t.root())).toBe(await ethRoot(written));
  });

  it('a pruned tree with a resolver reads and proves as if full', () => {
    const t = prunedCopy(2);
    t.resolver = (h) => allNodes.get(hex(h));
    for (const key of probes) {
      expect(t.get(key)).toEqual(model.get(hex(key)));
      expect(verifyProof(t.root(), key, t.prove(key))).toEqual(model.get(hex(key)));
    }
    expect(hex(t.root())).toBe(ROOT);
  });

  it('a resolver that returns a wrong node is refused with HashMismatch', () => {
    const other = new DsmTree();
    for (const k of keys.slice(0, 50)) other.put(k, Uint8Array.of(1, 2, 3));
    const otherNodes = keys.slice(0, 50).flatMap((k) => other.prove(k));
    const liars: [string, (h: Uint8Array) => Uint8Array | undefined][] = [
      ['tampered', (h) => tamper(allNodes.get(hex(h))!)],
      ['another tree', (h) => otherNodes[h[0]! % otherNodes.length]],
      ['a sibling', (h) => [...allNodes.values()].find((n) => hex(refKeccak(n)) !== hex(h))],
    ];
    for (const [, liar] of liars) {
      const t = DsmTree.fromRootHash(full.root(), { resolver: liar });
      for (const key of probes.slice(0, 10)) {
        const e = expectDsmError(() => t.get(key), DsmErrorCode.HashMismatch);
        expect(e.meta.expected).toBe(ROOT);
        expectDsmError(() => t.put(key, Uint8Array.of(1)), DsmErrorCode.HashMismatch);
      }
      // Nothing was let in: with an honest resolver the tree is intact.
      t.resolver = (h) => allNodes.get(hex(h));
      for (const key of probes) expect(t.get(key)).toEqual(model.get(hex(key)));
      expect(hex(t.root())).toBe(ROOT);
    }
    // A liar deeper down: the root is honest, the rest is not.
    const t = prunedCopy(1);
    t.resolver = (h) => tamper(allNodes.get(hex(h))!);
    for (const key of keys.slice(0, 10)) {
      const stub = stubAt(full.prove(key), key, 1)!;
      const e = expectDsmError(() => t.get(key), DsmErrorCode.HashMismatch);
      expect(e.meta.expected).toBe(hex(refKeccak(stub.node)));
    }
    // A resolver that has nothing: MissingNode.
    t.resolver = () => undefined;
    expectDsmError(() => t.get(keys[0]!), DsmErrorCode.MissingNode);
  });
});

describe('a delete needs the sibling that takes its place', () => {
  // Two 32-byte keys differing only in the last nibble hang as leaves of one branch; their values
  // are long, so each leaf is a hashed node of its own, and prune turns both into stubs.
  const rr = new Prng(730);
  const prefix = rr.bytes(31);
  const A = Uint8Array.from([...prefix, 0x01]);
  const B = Uint8Array.from([...prefix, 0x02]);
  const base = new DsmTree();
  const baseModel: Model = new Map();
  for (const k of [A, B, ...Array.from({ length: 30 }, () => rr.bytes(32))]) {
    const v = value(rr, 40, 60);
    base.put(k, v);
    baseModel.set(hex(k), v);
  }
  const proofB = base.prove(B);
  const siblingLeaf = proofB[proofB.length - 1]!;

  function setup(): DsmTree {
    const t = base.snapshot();
    t.prune(proofB.length - 1); // the leaves' level

    t.fill(NodeBag.fromProofs([base.prove(A)]), [A]);
    expect(t.get(A)).toEqual(baseModel.get(hex(A)));
    expectDsmError(() => t.get(B), DsmErrorCode.MissingNode);
    return t;
  }

  it('raises MissingNode naming the sibling, and leaves the tree as it was', () => {
    // The setup is what the test means: B's last proof node is its own leaf, next to A's.
    expect(siblingLeaf.length).toBeGreaterThanOrEqual(32);
    expect(base.prove(A).length).toBe(proofB.length);
    expect(hex(base.prove(A).at(-2)!)).toBe(hex(proofB.at(-2)!));
    const t = setup();
    const root = hex(t.root());
    const e = expectDsmError(() => t.del(A), DsmErrorCode.MissingNode);
    expect(e.meta.hash).toBe(hex(refKeccak(siblingLeaf)));
    // A failed delete must not have half-happened.
    expect(t.get(A)).toEqual(baseModel.get(hex(A)));
    expect(hex(t.root())).toBe(root);
    expect(verifyProof(t.root(), A, t.prove(A))).toEqual(baseModel.get(hex(A)));
  });

  it('succeeds once the sibling is filled in', async () => {
    const t = setup();
    t.fill(NodeBag.fromProofs([base.prove(B)]), [B]);
    t.del(A);
    const expected = new Map(baseModel);
    expected.delete(hex(A));
    expect(t.get(A)).toBeUndefined();
    expect(t.get(B)).toEqual(baseModel.get(hex(B)));
    expect(hex(t.root())).toBe(await ethRoot(expected));
  });

  it('succeeds after a failed attempt and a fill', async () => {
    const t = setup();
    expectDsmError(() => t.del(A), DsmErrorCode.MissingNode);
    t.fill(NodeBag.fromProofs([base.prove(B)]), [B]);
    t.del(A);
    const expected = new Map(baseModel);
    expected.delete(hex(A));
    expect(t.get(A)).toBeUndefined();
    expect(hex(t.root())).toBe(await ethRoot(expected));
  });
});
