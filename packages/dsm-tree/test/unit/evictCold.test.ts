/**
 * In-place faults and CLOCK eviction (what a tiered store builds on): nodes faulted in from an
 * in-place source replace their stubs inside the shared, frozen parents; `evictCold` turns the
 * nodes no read used since the last pass back into stubs with their right hashes, keeps the used
 * ones, and never changes what any version answers. Keys of varied depths and branch fill, so
 * branches of different layouts sit next to each other at every level a pass walks.
 */
import { describe, expect, it } from '@jest/globals';
import { DsmTree, type VerifiedNodeSource } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { key32, value } from './helpers/keys.js';
import { hex, type Model, unhex } from './helpers/reference.js';

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
});
