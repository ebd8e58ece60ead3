/** Proofs (DESIGN §3.5): absence, compact proofs, and tampered proofs. */

import { createMerkleProof, MerklePatriciaTrie, verifyMPTWithMerkleProof } from '@ethereumjs/mpt';
import { describe, expect, it } from '@jest/globals';
import { DsmError, DsmErrorCode, DsmTree, EMPTY_ROOT, verifyProof } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { expectDsmError, thrown } from './helpers/errors.js';
import { key32, shortKey, value } from './helpers/keys.js';
import { lastKind, proofPath } from './helpers/proofPath.js';
import { ethTrie, hex, type Model, unhex } from './helpers/reference.js';

function treeOf(model: Model): DsmTree {
  const t = new DsmTree();
  for (const [k, v] of model) t.put(unhex(k), v);
  return t;
}

function modelOf(entries: [string, Uint8Array][]): Model {
  return new Map(entries);
}

function expectBadProof(root: Uint8Array, key: Uint8Array, proof: readonly Uint8Array[]): void {
  expectDsmError(() => verifyProof(root, key, proof), DsmErrorCode.BadProof);
}

/** A tree of 32-byte keys (some deep neighbours, so some embedded nodes) and its model. */
function randomTree(seed: number, n: number): { tree: DsmTree; model: Model; keys: Uint8Array[] } {
  const r = new Prng(seed);
  const model: Model = new Map();
  while (model.size < n) {
    const keys = [...model.keys()];
    model.set(hex(key32(r, keys.length > 0 ? unhex(r.pick(keys)) : undefined)), value(r, 1, 100));
  }
  return { tree: treeOf(model), model, keys: [...model.keys()].map(unhex) };
}

describe('absence proofs', () => {
  it('empty tree: the proof is empty and verifies as absent against EMPTY_ROOT only', async () => {
    const t = new DsmTree();
    const key = Uint8Array.of(1, 2, 3);
    expect(t.prove(key)).toEqual([]);
    expect(verifyProof(EMPTY_ROOT, key, [])).toBeUndefined();
    expect(verifyProof(t.root(), key, t.prove(key))).toBeUndefined();
    expect(await createMerkleProof(new MerklePatriciaTrie(), key)).toEqual([]);
    const other = new DsmTree();
    other.put(key, Uint8Array.of(9));
    expectBadProof(other.root(), key, []);
  });

  const k32 = (h: string): string => h.padEnd(64, '0');
  const long = new Uint8Array(40).fill(0xee);
  const cases: {
    name: string;
    model: Model;
    probe: string;
    ends: 'branch' | 'extension' | 'leaf';
    nodes?: number;
  }[] = [
    {
      name: 'an empty slot of a branch',
      model: modelOf([
        [k32('10'), long],
        [k32('20'), long],
      ]),
      probe: k32('30'),
      ends: 'branch',
    },
    {
      name: 'a key ending at a branch without a value',
      model: modelOf([
        ['0112', long],
        ['0123', long],
      ]),
      probe: '01',
      ends: 'branch',
    },
    {
      name: "an extension's path",
      model: modelOf([
        [k32('abcd01'), long],
        [k32('abcd02'), long],
      ]),
      probe: k32('ab00'),
      ends: 'extension',
    },
    {
      name: 'a key shorter than an extension path',
      model: modelOf([
        ['aabb01', long],
        ['aabb02', long],
      ]),
      probe: 'aa',
      ends: 'extension',
    },
    {
      name: 'a leaf holding another key',
      model: modelOf([
        [k32('10'), long],
        [k32('20'), long],
      ]),
      probe: k32('2f'),
      ends: 'leaf',
    },
    {
      name: 'a leaf whose key is a prefix of the probe',
      model: modelOf([
        ['01', long],
        ['ff', long],
      ]),
      probe: '0102',
      ends: 'leaf',
    },
    {
      name: 'an embedded leaf',
      model: modelOf([
        ['0101aa', Uint8Array.of(1)],
        ['0102bb', Uint8Array.of(2)],
        ['ff', long],
      ]),
      probe: '0101ab',
      ends: 'leaf',
      nodes: 1, // the leaf is inside the root's encoding
    },
    {
      name: 'a small root (shorter than 32 bytes)',
      model: modelOf([['01', Uint8Array.of(1)]]),
      probe: '02',
      ends: 'leaf',
    },
  ];

  it.each(cases)('diverging at $name', async ({ model, probe, ends, nodes }) => {
    const tree = treeOf(model);
    const eth = await ethTrie(model);
    const root = tree.root();
    expect(hex(root)).toBe(hex(eth.root()));
    const key = unhex(probe);
    const proof = tree.prove(key);
    expect(proof.length).toBeGreaterThan(0);
    if (nodes !== undefined) expect(proof.length).toBe(nodes);
    expect(lastKind(proof, key)).toBe(ends);
    expect(verifyProof(root, key, proof)).toBeUndefined();
    expect(await verifyMPTWithMerkleProof(new MerklePatriciaTrie(), root, key, proof)).toBeNull();
    expect(verifyProof(root, key, await createMerkleProof(eth, key))).toBeUndefined();
    // The same proof still proves every present key it covers, and nothing else.
    for (const [k, v] of model) {
      const p = tree.prove(unhex(k));
      expect(verifyProof(root, unhex(k), p)).toEqual(v);
    }
  });
});

describe('compact proofs', () => {
  it('prove(key, c) is prove(key) without the nodes of levels < c', () => {
    const trees = [randomTree(500, 400)];
    {
      const r = new Prng(501);
      const model: Model = new Map();
      for (let i = 0; i < 150; i++) model.set(hex(shortKey(r)), value(r, 1, 40));
      trees.push({ tree: treeOf(model), model, keys: [...model.keys()].map(unhex) });
    }
    const r = new Prng(502);
    const lengths = new Set<number>();
    for (const { tree, keys } of trees) {
      const probes = keys.slice(0, 120).concat(keys.slice(0, 40).map((k) => key32(r, k)));
      for (const key of probes) {
        const full = tree.prove(key);
        lengths.add(full.length);
        // Proof node i is at level i: an embedded node (under 32 bytes) cannot hold a hash, so
        // embedded nodes only ever end a path and never shift the levels of listed nodes.
        expect(proofPath(full, key).map((p) => p.level)).toEqual(full.map((_, i) => i));
        for (let c = 0; c <= 6; c++) {
          const got = tree.prove(key, c).map(hex);
          expect({ key: hex(key), c, proof: got }).toEqual({
            key: hex(key),
            c,
            proof: full.slice(c).map(hex),
          });
        }
        expect(tree.prove(key, 100)).toEqual([]);
      }
    }
    expect(Math.max(...lengths)).toBeGreaterThanOrEqual(4);
  });
});

describe('tampered proofs', () => {
  const { tree, model, keys } = randomTree(600, 300);
  const root = tree.root();
  const other = randomTree(601, 50);
  const r = new Prng(602);
  // Present keys and absent ones, each with a proof of at least two nodes.
  const probes = keys
    .slice(0, 20)
    .concat(Array.from({ length: 20 }, () => key32(r, r.pick(keys))))
    .filter((k) => tree.prove(k).length >= 2);
  const proofs = probes.map((k) => tree.prove(k));
  const differs = (a: Uint8Array, b: Uint8Array): boolean => hex(a) !== hex(b);

  it('the untampered proofs verify (sanity for the cases below)', () => {
    expect(probes.length).toBeGreaterThan(30);
    probes.forEach((k, i) => {
      expect(verifyProof(root, k, proofs[i]!)).toEqual(model.get(hex(k)));
    });
  });

  it('a flipped byte in any node', () => {
    probes.forEach((key, pi) => {
      const proof = proofs[pi]!;
      for (let i = 0; i < proof.length; i++) {
        const n = proof[i]!.length;
        for (const at of new Set([0, 1, n >> 1, n - 1, r.int(n)])) {
          for (const mask of [0x01, 0x80, 0xff]) {
            const bad = proof.map((x) => x.slice());
            bad[i]![at]! ^= mask;
            expectBadProof(root, key, bad);
          }
        }
      }
    });
  });

  it('a missing node, at each position', () => {
    probes.forEach((key, pi) => {
      const proof = proofs[pi]!;
      for (let i = 0; i < proof.length; i++)
        expectBadProof(
          root,
          key,
          proof.filter((_, j) => j !== i),
        );
    });
  });

  it("a node swapped for one from another key's proof", () => {
    let swaps = 0;
    probes.forEach((key, pi) => {
      const proof = proofs[pi]!;
      for (let i = 0; i < proof.length; i++) {
        const donor = proofs.flat().find((n) => differs(n, proof[i]!) && n.length > 1);
        const fromOther = other.tree.prove(key)[i];
        for (const n of [donor, fromOther]) {
          if (n === undefined || !differs(n, proof[i]!)) continue;
          const bad = proof.slice();
          bad[i] = n;
          expectBadProof(root, key, bad);
          swaps++;
        }
      }
    });
    expect(swaps).toBeGreaterThan(60);
  });

  it('two nodes swapped in order', () => {
    probes.forEach((key, pi) => {
      const proof = proofs[pi]!;
      for (let i = 0; i < proof.length; i++) {
        for (let j = i + 1; j < proof.length; j++) {
          const bad = proof.slice();
          [bad[i], bad[j]] = [bad[j]!, bad[i]!];
          expectBadProof(root, key, bad);
        }
      }
    });
  });

  it('an extra node appended (or prepended)', () => {
    probes.forEach((key, pi) => {
      const proof = proofs[pi]!;
      const extras = [
        proof[0]!,
        proof[proof.length - 1]!,
        proofs[(pi + 1) % proofs.length]!.at(-1)!,
        r.bytes(40),
      ];
      for (const x of extras) {
        expectBadProof(root, key, [...proof, x]);
        expectBadProof(root, key, [x, ...proof]);
      }
    });
  });

  it('truncated RLP and garbage bytes', () => {
    probes.forEach((key, pi) => {
      const proof = proofs[pi]!;
      for (let i = 0; i < proof.length; i++) {
        const n = proof[i]!;
        for (const len of [0, 1, n.length >> 1, n.length - 1]) {
          const bad = proof.slice();
          bad[i] = n.subarray(0, len);
          expectBadProof(root, key, bad);
        }
        const bad = proof.slice();
        bad[i] = r.bytes(n.length);
        expectBadProof(root, key, bad);
        expectBadProof(root, key, [...proof.slice(0, i), Uint8Array.of(...n, 0x00), ...proof.slice(i + 1)]);
      }
      expectBadProof(root, key, [r.bytes(100)]);
      expectBadProof(
        root,
        key,
        proof.map((x) => r.bytes(x.length)),
      );
    });
  });

  it('a proof against the wrong root', () => {
    probes.forEach((key, pi) => {
      const proof = proofs[pi]!;
      const flipped = Uint8Array.from(root);
      flipped[31]! ^= 1;
      for (const wrong of [other.tree.root(), r.bytes(32), flipped, EMPTY_ROOT])
        expectBadProof(wrong, key, proof);
      for (const bad of [root.subarray(0, 31), Uint8Array.of(...root, 0)]) expectBadProof(bad, key, proof);
    });
  });

  it('random tampering never yields a wrong answer: it is rejected, or it is the true proof', () => {
    const pool = proofs.flat().concat(other.tree.prove(keys[0]!));
    let rejected = 0;
    for (let round = 0; round < 3000; round++) {
      const pi = r.int(probes.length);
      const key = probes[pi]!;
      const bad = proofs[pi]!.map((x) => x.slice());
      for (let m = r.range(1, 3); m > 0; m--) {
        const i = r.int(bad.length);
        const n = bad[i]!;
        switch (r.int(6)) {
          case 0:
            n[r.int(n.length)] = r.int(256);
            break;
          case 1:
            bad[i] = r.pick(pool).slice();
            break;
          case 2:
            bad.splice(i, 1);
            break;
          case 3:
            bad.splice(r.int(bad.length + 1), 0, r.pick(pool).slice());
            break;
          case 4: {
            const at = r.int(n.length + 1);
            bad[i] = Uint8Array.of(...n.subarray(0, at), r.int(256), ...n.subarray(at));
            break;
          }
          default: {
            const at = r.int(n.length);
            bad[i] = Uint8Array.of(...n.subarray(0, at), ...n.subarray(at + 1));
          }
        }
        if (bad.length === 0) bad.push(r.pick(pool).slice());
      }
      const e = thrown(() => {
        const got = verifyProof(root, key, bad);
        // Accepted: then it must be the true proof, with the true answer.
        expect(bad.map(hex)).toEqual(proofs[pi]!.map(hex));
        expect(got).toEqual(model.get(hex(key)));
      });
      if (e !== undefined) {
        expect(e).toBeInstanceOf(DsmError);
        expect((e as DsmError).code).toBe(DsmErrorCode.BadProof);
        rejected++;
      }
    }
    expect(rejected).toBeGreaterThan(2500);
  });
});
