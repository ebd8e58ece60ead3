/**
 * Copy-on-write versions (DESIGN §3.3): a snapshot keeps exactly the contents it was taken with,
 * whatever is written afterwards to the live tree, to other snapshots, or to itself.
 */
import { describe, expect, it } from '@jest/globals';
import { DsmErrorCode, DsmTree, NodeBag, type VerifiedNodeSource, verifyProof } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { expectDsmError } from './helpers/errors.js';
import { key32, shortKey, value } from './helpers/keys.js';
import { randomWrite, type WriteGen } from './helpers/ops.js';
import { ethRoot, hex, type Model, unhex } from './helpers/reference.js';

interface Version {
  name: string;
  tree: DsmTree;
  model: Model;
  /** A root computed earlier, while the version had exactly `model` (cleared by its own writes). */
  root?: string;
}

/** The version holds exactly its model: root (also vs any earlier one), values, absences, proofs. */
async function expectVersion(v: Version, seen: Map<string, Uint8Array>, r: Prng): Promise<void> {
  const root = hex(v.tree.root());
  expect({ name: v.name, root }).toEqual({ name: v.name, root: await ethRoot(v.model) });
  if (v.root !== undefined) expect({ name: v.name, root }).toEqual({ name: v.name, root: v.root });
  for (const [k, val] of v.model) expect(v.tree.get(unhex(k))).toEqual(val);
  for (const [h, k] of seen) if (!v.model.has(h)) expect(v.tree.get(k)).toBeUndefined();
  for (const k of r.shuffle([...seen.values()]).slice(0, 10)) {
    expect(verifyProof(v.tree.root(), k, v.tree.prove(k))).toEqual(v.model.get(hex(k)));
  }
}

describe('snapshots', () => {
  it.each([1, 2, 3])(
    'random work with snapshots taken, written and re-snapshotted (seed %i)',
    async (seed) => {
      const r = new Prng(400 + seed);
      const live: Version = { name: 'live', tree: new DsmTree(), model: new Map() };
      const versions: Version[] = [live];
      const seen = new Map<string, Uint8Array>();
      const genFor = (v: Version): WriteGen => ({
        newKey: () => {
          if (r.chance(0.4)) return shortKey(r, 3);
          const keys = [...v.model.keys()];
          return key32(r, keys.length > 0 ? unhex(r.pick(keys)) : undefined);
        },
        value: () => value(r, 1, 60),
        pDelete: 0.3,
      });
      for (let i = 0; i < 600; i++) {
        // Mostly the live tree; sometimes a snapshot itself.
        const v = versions.length > 1 && r.chance(0.15) ? r.pick(versions.slice(1)) : live;
        const k = randomWrite(r, v.tree, v.model, genFor(v));
        seen.set(hex(k), k);
        delete v.root;
        const x = r.next();
        if (x < 0.025) {
          // A snapshot of the live tree, hashed now or only at the end (while sharing dirty nodes).
          const s: Version = { name: `snap@${i}`, tree: live.tree.snapshot(), model: new Map(live.model) };
          if (r.chance(0.5)) s.root = hex(s.tree.root());
          versions.push(s);
        } else if (x < 0.035) {
          // A snapshot of a snapshot.
          const p = r.pick(versions);
          const s: Version = {
            name: `${p.name}/snap@${i}`,
            tree: p.tree.snapshot(),
            model: new Map(p.model),
          };
          if (p.root !== undefined) s.root = p.root;
          versions.push(s);
        } else if (x < 0.06) {
          // Hash some version now: later writes elsewhere must not change what it says.
          const p = r.pick(versions);
          const root = hex(p.tree.root());
          if (p.root !== undefined) expect({ name: p.name, root }).toEqual({ name: p.name, root: p.root });
          p.root = root;
        }
      }
      expect(versions.length).toBeGreaterThan(15);
      for (const v of versions) await expectVersion(v, seen, r);
    },
  );

  it('a delete that collapses a branch leaves the snapshot (and a snapshot delete the live tree) alone', async () => {
    const r = new Prng(410);
    const prefix = r.bytes(31);
    const model: Model = new Map();
    const put = (k: Uint8Array, v: Uint8Array): void => void model.set(hex(k), v);
    // A branch holding a value with two children, and a deep branch of two leaves.
    put(Uint8Array.of(0x01), value(r, 40, 40));
    put(Uint8Array.of(0x01, 0x02), value(r, 40, 40));
    put(Uint8Array.of(0x01, 0x03), value(r, 3, 3));
    put(Uint8Array.from([...prefix, 0x10]), value(r, 40, 40));
    put(Uint8Array.from([...prefix, 0x20]), value(r, 5, 5));
    for (let i = 0; i < 20; i++) put(r.bytes(32), value(r, 1, 50));
    const live = new DsmTree();
    for (const [k, v] of model) live.put(unhex(k), v);
    const liveModel = new Map(model);
    const before = hex(live.root());

    const snap = live.snapshot();
    const snapModel = new Map(model);
    for (const k of [Uint8Array.of(0x01), Uint8Array.of(0x01, 0x02), Uint8Array.from([...prefix, 0x10])]) {
      live.del(k);
      liveModel.delete(hex(k));
    }
    expect(hex(live.root())).toBe(await ethRoot(liveModel));
    expect(hex(snap.root())).toBe(before);
    for (const [k, v] of snapModel) expect(snap.get(unhex(k))).toEqual(v);

    // And the other way round.
    for (const k of [Uint8Array.of(0x01, 0x03), Uint8Array.from([...prefix, 0x20])]) {
      snap.del(k);
      snapModel.delete(hex(k));
    }
    expect(hex(snap.root())).toBe(await ethRoot(snapModel));
    expect(hex(live.root())).toBe(await ethRoot(liveModel));
    for (const [k, v] of liveModel) expect(live.get(unhex(k))).toEqual(v);
  });

  it("a snapshot's root is the same computed before or after later writes to the live tree", async () => {
    const r = new Prng(420);
    const a = new DsmTree();
    const b = new DsmTree();
    const model: Model = new Map();
    for (let i = 0; i < 300; i++) {
      const k = i % 3 === 0 ? shortKey(r) : r.bytes(32);
      const v = value(r, 1, 60);
      a.put(k, v);
      b.put(k, v);
      model.set(hex(k), v);
    }
    // Both snapshots are taken while every node is dirty; one is hashed at once, one only later.
    const early = a.snapshot();
    const rootEarly = hex(early.root());
    const late = b.snapshot();
    const liveModel = new Map(model);
    for (let i = 0; i < 300; i++) {
      const k = unhex(r.pick([...model.keys()]));
      const v = i % 2 ? new Uint8Array(0) : value(r, 1, 60);
      for (const t of [a, b]) t.put(k, v);
      if (v.length === 0) liveModel.delete(hex(k));
      else liveModel.set(hex(k), v);
      if (i % 50 === 0) {
        a.root();
        b.root();
      }
    }
    const expected = await ethRoot(model);
    expect(rootEarly).toBe(expected);
    expect(hex(early.root())).toBe(expected);
    expect(hex(late.root())).toBe(expected);
    expect(hex(a.root())).toBe(await ethRoot(liveModel));
    expect(hex(b.root())).toBe(hex(a.root()));
  });

  it('snapshot of a snapshot: three versions written independently', async () => {
    const r = new Prng(430);
    const versions: Version[] = [{ name: 'live', tree: new DsmTree(), model: new Map() }];
    const gen = (v: Version): WriteGen => ({
      newKey: () => (r.chance(0.5) ? shortKey(r) : r.bytes(32)),
      value: () => value(r, 1, 50),
      pDelete: v.name === 'live' ? 0.1 : 0.4,
    });
    for (let i = 0; i < 150; i++) randomWrite(r, versions[0]!.tree, versions[0]!.model, gen(versions[0]!));
    const s1: Version = {
      name: 's1',
      tree: versions[0]!.tree.snapshot(),
      model: new Map(versions[0]!.model),
    };
    const s2: Version = { name: 's2', tree: s1.tree.snapshot(), model: new Map(s1.model) };
    versions.push(s1, s2);
    const seen = new Map<string, Uint8Array>();
    for (const m of versions) for (const h of m.model.keys()) seen.set(h, unhex(h));
    for (let i = 0; i < 300; i++) {
      const v = versions[i % 3]!;
      const k = randomWrite(r, v.tree, v.model, gen(v));
      seen.set(hex(k), k);
    }
    const roots = versions.map((v) => hex(v.tree.root()));
    expect(new Set(roots).size).toBe(3);
    for (const v of versions) await expectVersion(v, seen, r);
  });

  it('prune and fill act on one version only', async () => {
    const r = new Prng(440);
    const full = new DsmTree();
    const model: Model = new Map();
    for (let i = 0; i < 200; i++) {
      const k = r.bytes(32);
      const v = value(r, 33, 60);
      full.put(k, v);
      model.set(hex(k), v);
    }
    const keys = [...model.keys()].map(unhex);
    const snap = full.snapshot();
    full.prune(1);
    // The snapshot still reads everything; the pruned version reads nothing below the root.
    for (const k of keys) expect(snap.get(k)).toEqual(model.get(hex(k)));
    expectDsmError(() => full.get(keys[0]!), DsmErrorCode.MissingNode);
    // Filling the pruned version and writing to it does not leak into the snapshot.
    const pruned = full.snapshot();
    full.fill(NodeBag.fromProofs(keys.map((k) => snap.prove(k))), keys);
    const written = new Map(model);
    for (const k of keys.slice(0, 50)) {
      const v = value(r, 1, 10);
      full.put(k, v);
      written.set(hex(k), v);
    }
    expect(hex(full.root())).toBe(await ethRoot(written));
    expectDsmError(() => pruned.get(keys[0]!), DsmErrorCode.MissingNode);
    expect(hex(pruned.root())).toBe(hex(snap.root()));
    expect(hex(snap.root())).toBe(await ethRoot(model));
    for (const k of keys) expect(snap.get(k)).toEqual(model.get(hex(k)));
  });

  // A faulted-in node is the faulting tree's own (no copy when the next stub below it is put in
  // place), except from an in-place source, where it sits in a parent other versions share.
  it.each(['resolver', 'bag', 'in-place source'] as const)(
    'nodes faulted in from a %s: snapshots taken before and after a tree writes over them keep their contents',
    async (how) => {
      const r = new Prng(77);
      const full = new DsmTree();
      const model: Model = new Map();
      while (model.size < 400) {
        const ks = [...model.keys()];
        const k = key32(r, ks.length > 0 && r.chance(0.3) ? unhex(r.pick(ks)) : undefined);
        const v = value(r, 1, 60);
        full.put(k, v);
        model.set(hex(k), v);
      }
      const root = full.root();
      const nodes = new Map<string, Uint8Array>();
      full.forEachNode((h, enc) => nodes.set(h, new Uint8Array(Buffer.from(enc, 'latin1'))));
      const source: VerifiedNodeSource = { inPlace: true, getBin: (h) => nodes.get(h) };
      const tree =
        how === 'resolver'
          ? DsmTree.fromRootHash(root, { resolver: (h) => nodes.get(Buffer.from(h).toString('latin1')) })
          : how === 'in-place source'
            ? DsmTree.fromRootHash(root, { source })
            : DsmTree.fromRootHash(root);
      const keys = r.shuffle([...model.keys()].map(unhex));
      const bag = NodeBag.fromProofs(keys.map((k) => full.prove(k)));
      const versions: Version[] = [];
      const live = new Map(model);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        // Read (faulting the path in), then sometimes take a snapshot that shares those nodes,
        // then write over the key or a neighbour the read brought in.
        if (how === 'bag') tree.fill(bag, [k]);
        expect(tree.get(k)).toEqual(live.get(hex(k)));
        if (i % 40 === 0)
          versions.push({
            name: `snap@${i}`,
            tree: tree.snapshot(),
            model: new Map(live),
            root: hex(tree.root()),
          });
        if (r.chance(0.5)) {
          const v = value(r, 1, 60);
          tree.put(k, v);
          live.set(hex(k), v);
        } else if (how !== 'bag' && r.chance(0.2)) {
          // (A delete may need a sibling no proof of a key read so far holds: not from a bag.)
          tree.del(k);
          live.delete(hex(k));
        }
      }
      expect(hex(tree.root())).toBe(await ethRoot(live));
      for (const v of versions) {
        expect({ name: v.name, root: hex(v.tree.root()) }).toEqual({ name: v.name, root: v.root });
        if (how !== 'bag') for (const k of keys) expect(v.tree.get(k)).toEqual(v.model.get(hex(k)));
      }
    },
  );
});
