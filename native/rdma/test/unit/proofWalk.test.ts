/**
 * The walk against the trie library: tries whose keys share long prefixes (so leaves and
 * extensions sit deep and short nodes are embedded in their parents), with deletes, filled into a
 * region from their resident nodes. Every key present and absent walks to DsmTree's own value and
 * Ethereum proof, byte for byte; a node the region lacks makes the walk miss, never answer.
 */
import { describe, expect, it } from '@jest/globals';
import { DsmTree } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { RegionReader, RegionWriter, walkTrie } from '@monsoon/rdma';
import { Prng } from '@monsoon/test-utils';
import { type RlpValue, rlpDecode } from '@monsoon/util';

const hex = (b: Uint8Array | undefined) => (b === undefined ? '-' : Buffer.from(b).toString('hex'));
const bin = (b: Uint8Array) => Buffer.from(b).toString('latin1');

/** A key sharing its first `shared` bytes with `base`, the rest random. */
function near(base: Uint8Array, shared: number, rng: Prng): Uint8Array {
  const k = rng.bytes(32);
  k.set(base.subarray(0, shared));
  return k;
}

/** Whether a node encoding holds another node inline (a child that is a list, not a hash). */
function embedsNode(enc: string): boolean {
  const d = rlpDecode(Buffer.from(enc, 'latin1')) as RlpValue[];
  const children = d.length === 17 ? d.slice(0, 16) : d.length === 2 ? [d[1]!] : [];
  return children.some((c) => Array.isArray(c));
}

describe('walkTrie', () => {
  it('gives DsmTree.get and DsmTree.prove for keys present and absent, embedded nodes included', () => {
    const rng = new Prng(77);
    let embedding = 0;
    for (let round = 0; round < 6; round++) {
      const tree = new DsmTree();
      const keys: Uint8Array[] = [];
      const bases = Array.from({ length: 4 }, () => rng.bytes(32));
      for (let i = 0; i < 300; i++) {
        const k = near(bases[rng.int(4)]!, 26 + rng.int(6), rng);
        keys.push(k);
        tree.put(k, rng.bytes(1 + rng.int(round % 2 === 0 ? 2 : 40)));
      }
      for (const k of keys.slice(0, 60)) tree.del(k);
      const root = tree.root();
      const w = RegionWriter.inMemory(10_000, 1 << 20);
      tree.forEachNode((h, enc) => {
        w.put(h, enc);
        if (embedsNode(enc)) embedding++;
      });
      const reader = new RegionReader(w.bytes);
      const absent = Array.from({ length: 50 }, () => near(bases[rng.int(4)]!, 28, rng));
      for (const k of [...keys, ...absent]) {
        const walk = walkTrie((h) => reader.node(h), root, k);
        expect(walk).toBeDefined();
        expect(hex(walk!.value)).toBe(hex(tree.get(k)));
        expect(walk!.proof.map(hex)).toEqual(tree.prove(k).map(hex));
      }
    }
    expect(embedding).toBeGreaterThan(0); // the walks above read embedded nodes in place
  });

  it('misses (undefined) when a node on the path is not in the region', () => {
    const rng = new Prng(78);
    const tree = new DsmTree();
    const keys = Array.from({ length: 200 }, () => rng.bytes(32));
    for (const k of keys) tree.put(k, rng.bytes(40));
    const root = tree.root();
    const w = RegionWriter.inMemory(10_000, 1 << 20);
    tree.forEachNode((h, enc) => w.put(h, enc));
    // Take out one key's leaf: its walk misses, the others still answer.
    w.remove(bin(keccak.keccak256(tree.prove(keys[5]!).at(-1)!)));
    const reader = new RegionReader(w.bytes);
    expect(walkTrie((h) => reader.node(h), root, keys[5]!)).toBeUndefined();
    expect(hex(walkTrie((h) => reader.node(h), root, keys[6]!)?.value)).toBe(hex(tree.get(keys[6]!)));
    expect(reader.counters.misses).toBe(1);
  });
});
