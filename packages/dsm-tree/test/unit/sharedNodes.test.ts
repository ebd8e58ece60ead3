/**
 * Decoded nodes shared between trees over one source (VerifiedNodeSource.decoded): each branch
 * whose children are all hashes is decoded once and the same object handed to every tree that
 * faults it in. Every tree still asks the source for each node it faults in (what a client
 * builds a witness from), reads exactly the model, and writes to its own copies only: another
 * tree over the same nodes, and the shared nodes themselves, are unchanged by them.
 */
import { describe, expect, it } from '@jest/globals';
import { DsmTree, type VerifiedNodeSource } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { value } from './helpers/keys.js';
import { randomTrie } from './helpers/randomTrie.js';
import { ethRoot, hex, type Model, refKeccak, unhex } from './helpers/reference.js';

type Shared = Map<string, NonNullable<ReturnType<NonNullable<VerifiedNodeSource['decoded']>['get']>>>;

/** A shared node's encoding (every one is a branch: it has one). */
const encOf = (n: object): string | undefined => (n as { enc?: string }).enc;

/** A source over `nodes` that notes every hash it is asked for, sharing `decoded` when given. */
function sourceOver(nodes: Map<string, Uint8Array>, decoded?: Shared) {
  const asked = new Set<string>();
  const source: VerifiedNodeSource = {
    getBin: (h) => {
      asked.add(h);
      return nodes.get(h);
    },
    ...(decoded === undefined ? {} : { decoded }),
  };
  return { asked, source };
}

function build(seed: number, n: number): { model: Model; root: Uint8Array; nodes: Map<string, Uint8Array> } {
  return randomTrie(new Prng(seed), n, 60);
}

describe('decoded nodes shared between trees', () => {
  for (const seed of [1, 2, 3]) {
    it(`decodes each hash-only branch once, and every tree reads and writes as alone (seed ${seed})`, async () => {
      const { model, root, nodes } = build(seed, 250);
      const decoded: Shared = new Map();
      let sets = 0;
      const counting = Object.assign(Object.create(decoded) as Shared, {
        get: (h: string) => decoded.get(h),
        set: (h: string, node: Parameters<Shared['set']>[1]) => {
          sets++;
          return decoded.set(h, node);
        },
      });
      const a = sourceOver(nodes, counting);
      const b = sourceOver(nodes, counting);
      const alone = sourceOver(nodes);
      const ta = DsmTree.fromRootHash(root, { source: a.source });
      const tb = DsmTree.fromRootHash(root, { source: b.source });
      const tAlone = DsmTree.fromRootHash(root, { source: alone.source });
      for (const [k, v] of model) {
        expect(ta.get(unhex(k))).toEqual(v);
        expect(tb.get(unhex(k))).toEqual(v);
        expect(tAlone.get(unhex(k))).toEqual(v);
      }
      // Shared: at least the root and the branches below it, each decoded (set) once.
      expect(decoded.size).toBeGreaterThan(16);
      expect(sets).toBe(decoded.size);
      for (const [h, n] of decoded)
        expect(hex(refKeccak(Buffer.from(encOf(n)!, 'latin1')))).toBe(hex(Buffer.from(h, 'latin1')));
      // Every tree asked for every node it used, shared or not.
      expect(a.asked).toEqual(alone.asked);
      expect(b.asked).toEqual(alone.asked);

      // Writes in one tree: its root is the reference's; the other tree and the shared nodes are unchanged.
      const encs = new Map([...decoded].map(([h, n]) => [h, encOf(n)]));
      const r = new Prng(seed + 100);
      const written: Model = new Map(model);
      const keys = [...model.keys()];
      for (let i = 0; i < 60; i++) {
        const k = r.pick(keys);
        if (r.int(2) === 0) {
          ta.del(unhex(k));
          tAlone.del(unhex(k));
          written.delete(k);
        } else {
          const v = value(r, 1, 60);
          ta.put(unhex(k), v);
          tAlone.put(unhex(k), v);
          written.set(k, v);
        }
      }
      expect(hex(ta.root())).toBe(await ethRoot(written));
      expect(hex(ta.root())).toBe(hex(tAlone.root()));
      expect(hex(tb.root())).toBe(hex(root));
      for (const [k, v] of model) expect(tb.get(unhex(k))).toEqual(v);
      for (const [h, n] of decoded) expect(encOf(n)).toBe(encs.get(h));
      // A fresh tree over the shared nodes still reads the original state.
      const tc = DsmTree.fromRootHash(root, { source: sourceOver(nodes, counting).source });
      for (const [k, v] of model) expect(tc.get(unhex(k))).toEqual(v);
      expect(hex(tc.root())).toBe(hex(root));
    });
  }
});
