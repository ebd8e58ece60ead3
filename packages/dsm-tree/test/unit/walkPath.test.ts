/**
 * walkPath reads a key over node encodings found by hash, without a tree: the value a tree reads,
 * and exactly the nodes a fresh tree over the same source is handed for that key, in the order it
 * asks for them (what a client ships as the read's witness). A node missing on the path makes it
 * undefined, as it makes the tree's read a MISSING_NODE.
 */
import { describe, expect, it } from '@jest/globals';
import { byteKey, DsmTree, walkPath } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { key32 } from './helpers/keys.js';
import { randomTrie } from './helpers/randomTrie.js';
import { hex, unhex } from './helpers/reference.js';

function build(seed: number, n: number, maxValue: number) {
  const r = new Prng(seed);
  return { r, ...randomTrie(r, n, maxValue) };
}

/** The value a fresh tree over `nodes` reads for `key`, and the hashes it asked for, in order. */
function treeRead(root: Uint8Array, nodes: Map<string, Uint8Array>, key: Uint8Array) {
  const asked: string[] = [];
  const tree = DsmTree.fromRootHash(root, {
    source: {
      getBin: (h) => {
        asked.push(h);
        return nodes.get(h);
      },
    },
  });
  return { value: tree.get(key), asked };
}

describe('walkPath', () => {
  for (const [seed, maxValue] of [
    [1, 60],
    [2, 8],
    [3, 120],
  ] as const) {
    it(`reads every key, present or not, with the nodes a tree is handed (seed ${seed})`, () => {
      const { r, model, root, nodes } = build(seed, 300, maxValue);
      const keys = [...model.keys()].map(unhex);
      // Absent keys: random ones, and ones that share a long path with a present key.
      for (let i = 0; i < 100; i++) keys.push(key32(r, i % 2 === 0 ? r.pick(keys) : undefined));
      for (const key of keys) {
        const walked = walkPath(byteKey(root), key, (h) => nodes.get(h));
        const ref = treeRead(root, nodes, key);
        expect(walked).toBeDefined();
        expect(walked!.value === undefined ? undefined : hex(walked!.value)).toBe(
          ref.value === undefined ? undefined : hex(ref.value),
        );
        expect(model.get(hex(key))).toEqual(ref.value === undefined ? undefined : ref.value);
        expect(walked!.hashes.map((h) => hex(Buffer.from(h, 'latin1')))).toEqual(
          ref.asked.map((h) => hex(Buffer.from(h, 'latin1'))),
        );
        expect(walked!.nodes).toEqual(walked!.hashes.map((h) => nodes.get(h)));
      }
    });
  }

  it('is undefined where a node on the path is missing, and reads nothing past it', () => {
    const { model, root, nodes } = build(4, 200, 60);
    for (const k of [...model.keys()].slice(0, 50)) {
      const key = unhex(k);
      const full = walkPath(byteKey(root), key, (h) => nodes.get(h))!;
      const gone = full.hashes[full.hashes.length - 1]!;
      const asked: string[] = [];
      const walked = walkPath(byteKey(root), key, (h) => {
        asked.push(h);
        return h === gone ? undefined : nodes.get(h);
      });
      expect(walked).toBeUndefined();
      expect(asked).toEqual(full.hashes);
      expect(() => treeRead(root, new Map([...nodes].filter(([h]) => h !== gone)), key)).toThrow();
    }
  });
});
