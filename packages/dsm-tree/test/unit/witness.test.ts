/**
 * Witness revision (DESIGN §3.7): a proof taken at an older root is still good for its key when
 * the part of the tree the key depends on has not changed; otherwise it is reported stale, and
 * never accepted with a wrong value.
 */
import { describe, expect, it } from '@jest/globals';
import { DsmErrorCode, DsmTree, NodeBag, type WitnessCheck } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { expectDsmError } from './helpers/errors.js';
import { key32, value } from './helpers/keys.js';
import { stubAt } from './helpers/proofPath.js';
import { ethRoot, hex, type Model, refKeccak, unhex } from './helpers/reference.js';

interface World {
  /** The full tree at the old root R1, and its contents. */
  old: DsmTree;
  oldModel: Model;
  keys: Uint8Array[];
}

function world(seed: number, n = 300): World {
  const r = new Prng(seed);
  const oldModel: Model = new Map();
  while (oldModel.size < n) oldModel.set(hex(r.bytes(32)), value(r, 33, 80));
  const old = new DsmTree();
  for (const [k, v] of oldModel) old.put(unhex(k), v);
  old.root();
  return { old, oldModel, keys: [...oldModel.keys()].map(unhex) };
}

/** The full tree after `updates`, plus a copy pruned to `level` (the miner's top layer). */
function advance(w: World, updates: [Uint8Array, Uint8Array | undefined][], level: number) {
  const now = w.old.snapshot();
  const model = new Map(w.oldModel);
  for (const [k, v] of updates) {
    if (v === undefined) {
      now.del(k);
      model.delete(hex(k));
    } else {
      now.put(k, v);
      model.set(hex(k), v);
    }
  }
  now.root();
  const top = now.snapshot();
  top.prune(level);
  return { now, model, top };
}

/**
 * What revision must answer, worked out from the full current tree: the stub the top layer has on
 * the key's path (if any) is either a node the witness holds (valid) or not (stale, naming it).
 */
function expectedCheck(
  now: DsmTree,
  key: Uint8Array,
  level: number,
  witness: readonly Uint8Array[],
): WitnessCheck {
  const stub = stubAt(now.prove(key), key, level);
  if (stub === undefined) return { status: 'valid' };
  const hash = refKeccak(stub.node);
  if (witness.some((n) => hex(refKeccak(n)) === hex(hash))) return { status: 'valid' };
  return { status: 'stale', missing: hash, depth: stub.depth };
}

function show(c: WitnessCheck): unknown {
  return c.status === 'valid' ? c : { status: c.status, missing: hex(c.missing), depth: c.depth };
}

/** K with its last nibble changed: a new neighbour splits K's leaf deep down. */
function neighbourOf(key: Uint8Array): Uint8Array {
  const k = key.slice();
  k[31]! ^= 0x01;
  return k;
}

/** Keys whose first nibble differs from `key`'s: updates there leave key's subtree alone. */
function elsewhere(
  r: Prng,
  key: Uint8Array,
  keys: Uint8Array[],
  n: number,
): [Uint8Array, Uint8Array | undefined][] {
  const out: [Uint8Array, Uint8Array | undefined][] = [];
  while (out.length < n) {
    const fresh = r.chance(0.5);
    const k = fresh ? r.bytes(32) : r.pick(keys);
    if (k[0]! >> 4 === key[0]! >> 4) continue;
    out.push([k, fresh || r.chance(0.5) ? value(r, 33, 80) : undefined]);
  }
  return out;
}

describe('witness revision', () => {
  const w = world(800);

  it.each([1, 2, 3])(
    'unrelated updates: a proof from the old root is valid at level %i, reads and writes right',
    async (level) => {
      const r = new Prng(810 + level);
      // Keys whose path goes below the level, so revision has a stub to decide on.
      const ks = w.keys.filter((k) => w.old.prove(k).length > level).slice(0, 8);
      expect(ks.length).toBe(8);
      for (const [i, K] of ks.entries()) {
        const P = w.old.prove(K);
        const { now, model, top } = advance(w, elsewhere(r, K, w.keys, 40), level);
        expect(hex(now.root())).not.toBe(hex(w.old.root()));
        expect(stubAt(now.prove(K), K, level)).toBeDefined(); // revision has something to decide
        expect(show(top.reviseWitness(K, P))).toEqual({ status: 'valid' });
        expect(top.get(K)).toEqual(w.oldModel.get(hex(K)));
        // Written through the revised witness, the top layer gets the full tree's root.
        const v = value(r, 1, 80);
        top.put(K, v);
        now.put(K, v);
        model.set(hex(K), v);
        expect(hex(top.root())).toBe(hex(now.root()));
        if (i === 0) expect(hex(top.root())).toBe(await ethRoot(model));
      }
    },
  );

  it('K itself changed (overwritten or deleted) after the proof: stale, naming the new stub', () => {
    const r = new Prng(820);
    for (const K of w.keys.slice(10, 20)) {
      const P = w.old.prove(K);
      for (const change of [value(r, 33, 80), undefined]) {
        for (const level of [0, 1, 2, 3]) {
          const { now, top } = advance(w, [[K, change]], level);
          const got = top.reviseWitness(K, P);
          expect(show(got)).toEqual(show(expectedCheck(now, K, level, P)));
          // Overwritten, K's leaf (at level ≥ 2 in a tree this size) is a new node: stale. Deleted,
          // K may be absent from the top layer itself, and then "valid" with no value is right.
          if (change !== undefined && level <= 2) expect(got.status).toBe('stale');
          if (got.status === 'valid') expect(top.get(K)).toEqual(change);
        }
      }
    }
  });

  it("a key sharing K's subtree below the level changed: stale", () => {
    const r = new Prng(830);
    for (const K of w.keys.slice(20, 30)) {
      const P = w.old.prove(K);
      // A new neighbour that splits K's leaf, and an existing key under the same level-1 node.
      const neighbour = neighbourOf(K);
      const sameSlot = w.keys.find((k) => k !== K && k[0]! >> 4 === K[0]! >> 4)!;
      for (const [k, level] of [
        [neighbour, 1],
        [neighbour, 2],
        [sameSlot, 1],
      ] as const) {
        const { now, top } = advance(w, [[k, value(r, 33, 80)]], level);
        const got = top.reviseWitness(K, P);
        expect(show(got)).toEqual(show(expectedCheck(now, K, level, P)));
        expect(got.status).toBe('stale');
        expectDsmError(() => top.get(K), DsmErrorCode.MissingNode);
      }
    }
  });

  it('compact proofs (prove(K, r)) revise a tree pruned to r', async () => {
    const r = new Prng(840);
    for (const level of [1, 2, 3]) {
      const ks = w.keys.filter((k) => w.old.prove(k).length > level).slice(0, 6);
      for (const [i, K] of ks.entries()) {
        const compact = w.old.prove(K, level);
        expect(compact.length).toBeLessThan(w.old.prove(K).length);
        const { now, model, top } = advance(w, elsewhere(r, K, w.keys, 30), level);
        expect(show(top.reviseWitness(K, compact))).toEqual({ status: 'valid' });
        expect(top.get(K)).toEqual(w.oldModel.get(hex(K)));
        top.put(K, Uint8Array.of(level));
        now.put(K, Uint8Array.of(level));
        model.set(hex(K), Uint8Array.of(level));
        expect(hex(top.root())).toBe(hex(now.root()));
        if (i === 0) expect(hex(top.root())).toBe(await ethRoot(model));
        // The same compact proof, once K has changed, is stale.
        const changed = advance(w, [[K, value(r, 33, 80)]], level);
        expect(changed.top.reviseWitness(K, compact).status).toBe('stale');
      }
    }
  });

  it('a bag of several witnesses revises each of its keys', () => {
    const r = new Prng(850);
    const chosen = w.keys.slice(40, 60);
    const bag = NodeBag.fromProofs(chosen.map((k) => w.old.prove(k, 1)));
    // Updates to keys outside the chosen ones' level-1 subtrees.
    const slots = new Set(chosen.map((k) => k[0]! >> 4));
    const updates: [Uint8Array, Uint8Array | undefined][] = [];
    for (let i = 0; i < 300 && updates.length < 30; i++) {
      const k = r.bytes(32);
      if (!slots.has(k[0]! >> 4)) updates.push([k, value(r, 33, 80)]);
    }
    expect(updates.length).toBeGreaterThan(0);
    const { top } = advance(w, updates, 1);
    for (const k of chosen) {
      expect(show(top.reviseWitness(k, bag))).toEqual({ status: 'valid' });
      expect(top.get(k)).toEqual(w.oldModel.get(hex(k)));
    }
  });

  it('random histories: the answer is exactly what the current tree implies, never a wrong value', () => {
    const r = new Prng(860);
    let valid = 0;
    let stale = 0;
    for (let round = 0; round < 60; round++) {
      const K = r.chance(0.8) ? r.pick(w.keys) : key32(r, r.pick(w.keys));
      const P = w.old.prove(K, r.int(2));
      const updates: [Uint8Array, Uint8Array | undefined][] = [];
      for (let i = r.int(15); i >= 0; i--) {
        const x = r.next();
        const k = x < 0.15 ? K : x < 0.3 ? key32(r, K) : x < 0.6 ? r.pick(w.keys) : r.bytes(32);
        updates.push([k, r.chance(0.3) ? undefined : value(r, 33, 80)]);
      }
      const level = r.range(1, 3);
      const { now, model, top } = advance(w, updates, level);
      const got = top.reviseWitness(K, P);
      expect(show(got)).toEqual(show(expectedCheck(now, K, level, P)));
      if (got.status === 'valid') {
        valid++;
        expect(top.get(K)).toEqual(model.get(hex(K)));
      } else {
        stale++;
      }
    }
    expect(valid).toBeGreaterThan(10);
    expect(stale).toBeGreaterThan(10);
  });

  it('a witness from another tree is stale', () => {
    const other = world(870);
    const { top } = advance(w, [], 1);
    for (const K of w.keys.slice(0, 10)) {
      const got = top.reviseWitness(K, other.old.prove(K));
      expect(got.status).toBe('stale');
    }
  });
});
