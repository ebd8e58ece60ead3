/**
 * In-place faults and CLOCK eviction (what a tiered store builds on): nodes faulted in from an
 * in-place source replace their stubs inside the shared, frozen parents; `evictCold` turns the
 * nodes no read used since the last pass back into stubs with their right hashes, keeps the used
 * ones, and never changes what any version answers. Keys of varied depths and branch fill, so
 * branches of different layouts sit next to each other at every level a pass walks. Evicted and
 * faulted-in branches hold no stub objects (lazy slots), and writes through them give the
 * reference roots; a pass given a rule evicts exactly what the rule picks.
 */
import { describe, expect, it } from '@jest/globals';
import { DsmTree, type VerifiedNodeSource } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { key32, value } from './helpers/keys.js';
import { ethRoot, hex, type Model, unhex } from './helpers/reference.js';

/** A branch as a walk sees it (the class is internal to the package). */
interface BranchView {
  kind: number;
  enc: string;
  loaded(i: number): { kind: number; ref?: string } | undefined;
  child(i: number): { kind: number; ref?: string } | undefined;
}
const BRANCH_KIND = 0;
const STUB_KIND = 3;

/** The branches resident in `tree`, and how many stub objects they hold. */
function residentBranches(tree: DsmTree): { branches: BranchView[]; stubObjects: number } {
  const branches: BranchView[] = [];
  let stubObjects = 0;
  const walk = (n: { kind: number } | undefined): void => {
    if (n === undefined || n.kind !== BRANCH_KIND) return;
    const b = n as BranchView;
    branches.push(b);
    for (let i = 0; i < 16; i++) {
      const c = b.loaded(i);
      if (c?.kind === STUB_KIND) stubObjects++;
      else walk(c);
    }
  };
  walk(tree.rootNodeForInternalUse as { kind: number } | undefined);
  return { branches, stubObjects };
}

/** Every node by hash, counting what is asked for (and what is asked for but absent). */
class Source implements VerifiedNodeSource {
  readonly inPlace = true;
  readonly nodes = new Map<string, Uint8Array>();
  hits = 0;
  misses: string[] = [];
  getBin(hash: string): Uint8Array | undefined {
    const n = this.nodes.get(hash);
    if (n === undefined) this.misses.push(hash);
    else this.hits++;
    return n;
  }
}

function build(seed: number, n: number): { model: Model; tree: DsmTree; source: Source } {
  const r = new Prng(seed);
  const model: Model = new Map();
  while (model.size < n) {
    const ks = [...model.keys()];
    // Half the keys share a prefix with an earlier one: deep, sparse branches beside full ones.
    model.set(
      hex(key32(r, ks.length > 0 && r.int(2) === 0 ? unhex(r.pick(ks)) : undefined)),
      value(r, 1, 60),
    );
  }
  const source = new Source();
  const tree = new DsmTree({ source });
  for (const [k, v] of model) tree.put(unhex(k), v);
  tree.root();
  tree.forEachNode((h, enc) => source.nodes.set(h, Buffer.from(enc, 'latin1')));
  return { model, tree, source };
}

describe('in-place faults and CLOCK eviction', () => {
  it('evicts what was not used, keeps what was, and every stub names a real node', () => {
    const { model, tree, source } = build(41, 3000);
    const reference = tree.snapshot(); // shares every node: what it answers must not change
    const keys = [...model.keys()].map(unhex);
    const answers = (t: DsmTree) =>
      keys.map((k) => `${hex(t.get(k) ?? new Uint8Array(0))}:${t.prove(k).map(hex).join(',')}`);
    const before = answers(tree);
    const r = new Prng(5);
    for (let round = 0; round < 6; round++) {
      tree.evictCold(1, new Set(), false); // the reads above used every node: clear their bits
      const hot = keys.filter(() => r.int(4) === 0);
      for (const k of hot) tree.get(k);
      const bytes = tree.evictCold(1, new Set(), false);
      expect(bytes).toBeGreaterThan(0);
      // The hot keys stayed resident: reading them again asks the source for nothing.
      source.hits = 0;
      source.misses = [];
      for (const k of hot) tree.get(k);
      expect(source.hits).toBe(0);
      // Everything else comes back from the source, by the hashes the stubs hold.
      expect(answers(tree)).toEqual(before);
      expect(source.misses).toEqual([]);
      expect(source.hits).toBeGreaterThan(0);
      expect(answers(reference)).toEqual(before);
      expect(hex(tree.root())).toBe(hex(reference.root()));
    }
    // A pass with `all` leaves the top level only: the next read of any key faults its path in.
    tree.evictCold(1, new Set(), true);
    source.hits = 0;
    expect(tree.get(keys[0]!)).toEqual(model.get(hex(keys[0]!)));
    expect(source.hits).toBeGreaterThan(0);
  });

  it('faultPath brings in what the source has and stops, without an error, at what it lacks', () => {
    const { model, tree, source } = build(42, 800);
    const keys = [...model.keys()].map(unhex);
    tree.evictCold(1, new Set(), true);
    const k = keys[7]!;
    const held = source.nodes;
    const path = tree.snapshot().prove(k); // faults the path in (in place: shared with `tree`)
    expect(path.length).toBeGreaterThan(2);
    tree.evictCold(1, new Set(), true);
    // Drop the path's third node from the source: faultPath stops there and names it.
    const third = [...held].find(([, n]) => hex(n) === hex(path[2]!))![0];
    const enc = held.get(third)!;
    held.delete(third);
    source.misses = [];
    tree.faultPath(k);
    expect(source.misses).toEqual([third]);
    held.set(third, enc);
    source.misses = [];
    source.hits = 0;
    tree.faultPath(k);
    expect(source.misses).toEqual([]);
    source.hits = 0;
    expect(tree.get(k)).toEqual(model.get(hex(k)));
    expect(source.hits).toBe(0); // the whole path is resident now
  });

  it("evicted and faulted-in branches make stubs only when asked, with their encodings' hashes; writes through them match the reference", async () => {
    const { model, tree, source } = build(43, 2000);
    tree.evictCold(1, new Set(), true);
    const keys = [...model.keys()].map(unhex);
    const r = new Prng(11);
    for (const k of keys.filter(() => r.int(3) === 0)) tree.get(k); // faults a third of the paths in
    const { branches, stubObjects } = residentBranches(tree);
    expect(branches.length).toBeGreaterThan(100);
    // The usual branches (every slot empty or a hash) hold no stub object: not when decoded, not once evicted.
    expect(stubObjects).toBe(0);
    let stubs = 0;
    for (const b of branches) {
      for (let i = 0; i < 16; i++) {
        const c = b.child(i);
        if (c?.kind !== STUB_KIND) continue;
        stubs++;
        // The stub made on demand names the node the source holds under the encoding's hash.
        expect(source.nodes.has(c.ref!)).toBe(true);
        expect(b.enc.includes(`\xa0${c.ref!}`)).toBe(true);
      }
    }
    expect(stubs).toBeGreaterThan(100);
    // Writes through lazy branches (copies of them on a snapshot): updates, inserts, deletes.
    const next = tree.snapshot();
    const changed: Model = new Map(model);
    for (const k of keys.filter(() => r.int(5) === 0)) {
      if (r.int(2) === 0) {
        next.del(k);
        changed.delete(hex(k));
      } else {
        const v = value(r, 1, 60);
        next.put(k, v);
        changed.set(hex(k), v);
      }
    }
    for (let i = 0; i < 50; i++) {
      const k = key32(r, r.int(2) === 0 ? r.pick(keys) : undefined);
      const v = value(r, 1, 60);
      next.put(k, v);
      changed.set(hex(k), v);
    }
    expect(hex(next.root())).toBe(await ethRoot(changed));
    expect(hex(tree.root())).toBe(await ethRoot(model));
  });

  it('a pass given a rule evicts exactly the nodes the rule picks, used or not', () => {
    const { model, tree, source } = build(44, 1500);
    const keys = [...model.keys()].map(unhex);
    const before = keys.map((k) => tree.prove(k).map(hex).join(','));
    tree.evictCold(1, new Set(), false); // clear the bits the build's reads set
    for (const k of keys.slice(0, 100)) tree.get(k); // used since the pass
    const asked: string[] = [];
    // Evict every other node the pass asks about, whatever its CLOCK bit says.
    tree.evictCold(1, new Set(), (hash) => {
      asked.push(hash);
      return asked.length % 2 === 0;
    });
    expect(asked.length).toBeGreaterThan(10);
    for (const h of asked) expect(source.nodes.has(h)).toBe(true); // the pass names nodes by their real hashes
    source.hits = 0;
    expect(keys.map((k) => tree.prove(k).map(hex).join(','))).toEqual(before);
    expect(source.hits).toBeGreaterThan(0);
  });
});
