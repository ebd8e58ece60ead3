/**
 * Garbage, truncated and non-canonical bytes, wherever bytes come in: verifyProof, decodeTree,
 * filling from a node bag or a resolver. Only DsmErrors come out, and never a wrong answer. (RLP
 * itself is tested in @monsoon/util.)
 */

import { MerklePatriciaTrie, verifyMPTWithMerkleProof } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { describe, expect, it } from '@jest/globals';
import {
  DsmError,
  DsmErrorCode,
  DsmTree,
  decodeTree,
  encodeTree,
  NodeBag,
  verifyProof,
} from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { expectDsmError, thrown } from './helpers/errors.js';
import { hex, refKeccak, unhex } from './helpers/reference.js';

const cat = (...parts: (Uint8Array | number[])[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => [...p]));
/** A canonical RLP string. */
const str = (b: Uint8Array | number[]): Uint8Array => RLP.encode(Uint8Array.from(b));
/** A canonical RLP list of already-encoded items. */
const list = (...items: Uint8Array[]): Uint8Array => {
  const payload = cat(...items);
  if (payload.length < 56) return cat([0xc0 + payload.length], payload);
  return cat([0xf8, payload.length], payload); // fine below 256 bytes
};
const EMPTY = Uint8Array.of(0x80);
const empties = (n: number): Uint8Array[] => Array.from({ length: n }, () => EMPTY);

/** Wraps bytes in the tree codec's format: "DSMT", version 1, one node record. */
/** A v2 tree-encoding header for `root`: magic, version, root hash, 4 check bytes. */
function treeHeader(root: Uint8Array): Uint8Array {
  const head = cat([0x44, 0x53, 0x4d, 0x54, 2], root);
  return cat(head, refKeccak(head).subarray(0, 4));
}

function asEncodedTree(node: Uint8Array): Uint8Array {
  if (node.length >= 128) throw new Error('test helper: one-byte varint only');
  return cat(treeHeader(refKeccak(node)), [1, node.length], node);
}

const KEY = Uint8Array.of(0x01);
const VALUE = Uint8Array.of(0x61, 0x62, 0x63);
/** A root leaf for key 0x01: [hp(leaf, even, ''), 'abc']. */
const goodLeaf = list(str([0x20, 0x01]), str(VALUE));
/** A root branch of two embedded leaves: key 0x01 → 'abc' (under nibble 0), 0x12 → 0x05 (under 1). */
const leafA = list(str([0x31]), str(VALUE));
const leafB = list(str([0x32]), str([0x05]));
const goodBranch = list(leafA, leafB, ...empties(14), EMPTY);

/** Malformed nodes, each next to what it imitates; every one must be refused. */
const malformed: [string, Uint8Array, Uint8Array][] = [
  [
    'non-canonical: 1-byte string below 0x80 with a prefix',
    list(str([0x20, 0x01]), Uint8Array.of(0x81, 0x05)),
    KEY,
  ],
  ['non-canonical: long-form string length under 56', list(str([0x20, 0x01]), cat([0xb8, 3], VALUE)), KEY],
  [
    'non-canonical: long-form list length under 56',
    cat([0xf8, goodLeaf.length - 1], goodLeaf.subarray(1)),
    KEY,
  ],
  [
    'non-canonical: length with a leading zero',
    cat([0xf9, 0, goodLeaf.length - 1], goodLeaf.subarray(1)),
    KEY,
  ],
  ['trailing byte after the node', cat(goodLeaf, [0x00]), KEY],
  ['truncated node', goodLeaf.subarray(0, goodLeaf.length - 1), KEY],
  ['list overruns: an item longer than its list', cat([0xc4], str([0x20, 0x01]), [0x83]), KEY],
  ['not a list', str(goodLeaf.subarray(1)), KEY],
  ['empty list', Uint8Array.of(0xc0), KEY],
  ['3 items', list(str([0x20, 0x01]), str(VALUE), str(VALUE)), KEY],
  ['16 items', list(...empties(14), str([0x20]), str(VALUE)), KEY],
  ['18 items', list(...empties(18)), KEY],
  ['leaf with an empty value', list(str([0x20, 0x01]), EMPTY), KEY],
  ['leaf with a list as value', list(str([0x20, 0x01]), list(str(VALUE))), KEY],
  ['leaf with an empty path item', list(EMPTY, str(VALUE)), KEY],
  ['leaf key of an odd number of nibbles', list(str([0x31]), str(VALUE)), Uint8Array.of(0x10)],
  ['hex-prefix flag 4', list(str([0x40, 0x01]), str(VALUE)), KEY],
  ['even hex-prefix with a non-zero pad nibble', list(str([0x21, 0x01]), str(VALUE)), KEY],
  ['branch with only a value', list(...empties(16), str(VALUE)), new Uint8Array(0)],
  ['branch with one child and no value', list(leafA, ...empties(16)), KEY],
  ['branch with a list as value', list(leafA, leafB, ...empties(14), list(str(VALUE))), KEY],
  [
    'embedded child of 32 bytes or more',
    list(list(str([0x31]), str(new Uint8Array(30).fill(7))), leafB, ...empties(15)),
    KEY,
  ],
  ['child reference of 31 bytes', list(str(new Uint8Array(31).fill(1)), ...empties(15), str(VALUE)), KEY],
  ['child reference of 33 bytes', list(str(new Uint8Array(33).fill(1)), ...empties(15), str(VALUE)), KEY],
  ['extension with an empty path', list(str([0x00]), str(new Uint8Array(32).fill(1))), KEY],
  ['extension without a child', list(str([0x00, 0x01]), EMPTY), KEY],
  ['extension to an embedded leaf', list(str([0x10]), list(str([0x31]), str(VALUE))), KEY],
  [
    'extension to an embedded extension',
    // ext [0] → ext [1] → branch at depth 2 of two leaves (keys 0x0105 and 0x0116)
    list(
      str([0x10]),
      list(str([0x11]), list(list(str([0x35]), str([0x05])), list(str([0x36]), str([0x06])), ...empties(15))),
    ),
    Uint8Array.of(0x01, 0x05),
  ],
  [
    'branch value at an odd nibble depth',
    // extension [0] → branch at depth 1 holding a value (no byte key ends at depth 1)
    list(
      str([0x10]),
      list(list(str([0x20]), str([0x05])), list(str([0x20]), str([0x06])), ...empties(14), str([0x07])),
    ),
    Uint8Array.of(0x00),
  ],
];

describe('malformed trie nodes', () => {
  it('the well-formed nodes they imitate are accepted (so the cases below test what they say)', async () => {
    expect(verifyProof(refKeccak(goodLeaf), KEY, [goodLeaf])).toEqual(VALUE);
    expect(verifyProof(refKeccak(goodBranch), KEY, [goodBranch])).toEqual(VALUE);
    expect(verifyProof(refKeccak(goodBranch), Uint8Array.of(0x12), [goodBranch])).toEqual(Uint8Array.of(5));
    expect(verifyProof(refKeccak(goodBranch), Uint8Array.of(0x02), [goodBranch])).toBeUndefined();
    // The two-extension shape is refused only for where its extension points: with the inner
    // extension's path folded into the outer one, the same content is a fine node.
    const merged = list(
      str([0x00, 0x01]),
      list(list(str([0x35]), str([0x05])), list(str([0x36]), str([0x06])), ...empties(15)),
    );
    expect(verifyProof(refKeccak(merged), Uint8Array.of(0x01, 0x05), [merged])).toEqual(Uint8Array.of(5));
    expect(hex(decodeTree(asEncodedTree(goodLeaf)).root())).toBe(hex(refKeccak(goodLeaf)));
    expect(decodeTree(asEncodedTree(goodBranch)).get(KEY)).toEqual(VALUE);
    const t = new DsmTree();
    t.put(KEY, VALUE);
    expect(hex(t.root())).toBe(hex(refKeccak(goodLeaf)));
    const eth = await verifyMPTWithMerkleProof(new MerklePatriciaTrie(), refKeccak(goodLeaf), KEY, [
      goodLeaf,
    ]);
    expect(eth).toEqual(VALUE);
  });

  it.each(malformed)(
    '%s: refused by verifyProof (BadProof) even when the root is its hash',
    (_name, node, key) => {
      expectDsmError(() => verifyProof(refKeccak(node), key, [node]), DsmErrorCode.BadProof);
    },
  );

  it.each(malformed)('%s: refused by decodeTree (BadEncoding)', (_name, node) => {
    expectDsmError(() => decodeTree(asEncodedTree(node)), DsmErrorCode.BadEncoding);
  });

  it.each(malformed)(
    '%s: a bag or resolver holding it cannot fill the stub of its hash',
    (_name, node, key) => {
      const t = DsmTree.fromRootHash(refKeccak(node));
      const bag = new NodeBag();
      expect(hex(bag.add(node))).toBe(hex(refKeccak(node)));
      const e = thrown(() => t.fill(bag, [key]));
      expect(e).toBeInstanceOf(DsmError);
      expect([DsmErrorCode.BadRlp, DsmErrorCode.BadNode]).toContain((e as DsmError).code);
      // The stub is still a stub.
      expectDsmError(() => t.get(key), DsmErrorCode.MissingNode);
      expect(hex(t.root())).toBe(hex(refKeccak(node)));
      // The same through a resolver, and through witness revision.
      const viaResolver = DsmTree.fromRootHash(refKeccak(node), { resolver: () => node });
      expect(thrown(() => viaResolver.get(key))).toBeInstanceOf(DsmError);
      expect(thrown(() => viaResolver.put(key, VALUE))).toBeInstanceOf(DsmError);
      const revised = thrown(() => DsmTree.fromRootHash(refKeccak(node)).reviseWitness(key, [node]));
      expect(revised).toBeInstanceOf(DsmError);
    },
  );
});

describe('garbage', () => {
  const r = new Prng(1200);
  const tree = new DsmTree();
  const keys: Uint8Array[] = [];
  for (let i = 0; i < 100; i++) {
    keys.push(r.bytes(32));
    tree.put(keys[i]!, r.bytes(r.range(1, 60)));
  }
  const root = tree.root();

  it('random proofs: BadProof, against the real root or against the hash of their first node', async () => {
    let accepted = 0;
    for (let i = 0; i < 1500; i++) {
      const proof = Array.from({ length: r.range(1, 4) }, () => r.bytes(r.range(0, 120)));
      if (r.chance(0.3)) proof[0] = cat([0xc0 + r.int(64)], proof[0]!); // looks like a list
      if (r.chance(0.2)) proof[0] = cat([0xf8, proof[0]!.length], proof[0]!);
      const key = r.chance(0.5) ? r.pick(keys) : r.bytes(r.range(1, 32));
      expectDsmError(() => verifyProof(root, key, proof), DsmErrorCode.BadProof);
      const own = refKeccak(proof[0]!);
      const e = thrown(() => verifyProof(own, key, proof));
      if (e === undefined) {
        // Only a real (if tiny) trie node could pass; then ethereumjs reads the same from it.
        accepted++;
        const got = verifyProof(own, key, proof);
        const eth = await verifyMPTWithMerkleProof(new MerklePatriciaTrie(), own, key, proof);
        expect(got === undefined ? null : hex(got)).toBe(eth === null ? null : hex(eth));
      } else {
        expect(e).toBeInstanceOf(DsmError);
        expect((e as DsmError).code).toBe(DsmErrorCode.BadProof);
      }
    }
    expect(accepted).toBeLessThan(50);
  });

  it('truncated real nodes with their own hash as root: BadProof', () => {
    for (const k of keys.slice(0, 30)) {
      for (const node of tree.prove(k)) {
        for (const len of [0, 1, 2, node.length >> 1, node.length - 1]) {
          const cut = node.subarray(0, len);
          expectDsmError(() => verifyProof(refKeccak(cut), k, [cut]), DsmErrorCode.BadProof);
        }
      }
    }
  });

  it('decodeTree of garbage, with or without a valid header: BadEncoding', () => {
    const header = treeHeader(r.bytes(32));
    for (let i = 0; i < 1000; i++) {
      const tag = r.int(3);
      // Not the two garbage-free encodings: tag 0 alone (empty tree), tag 2 + 32 bytes (a root stub).
      let len = r.range(1, 80);
      if (tag === 2 && len === 32) len++;
      const body = r.bytes(len);
      const bytes = i % 2 === 0 ? cat(header, [tag], body) : body;
      expectDsmError(() => decodeTree(bytes), DsmErrorCode.BadEncoding);
    }
    // A real encoding with its nodes' bytes swapped for garbage of the same length.
    const enc = encodeTree(tree);
    for (let i = 0; i < 100; i++) {
      const bad = enc.slice();
      const at = r.range(6, enc.length - 10);
      bad.set(r.bytes(8), at);
      let decoded: DsmTree | undefined;
      const e = thrown(() => {
        decoded = decodeTree(bad);
      });
      if (e === undefined) {
        expect(hex(decoded!.root())).toBe(hex(root));
      } else {
        expect(e).toBeInstanceOf(DsmError);
        expect((e as DsmError).code).toBe(DsmErrorCode.BadEncoding);
      }
    }
  });

  it('a bag of garbage fills nothing', () => {
    const t = tree.snapshot();
    t.prune(1);
    const bag = new NodeBag();
    for (let i = 0; i < 200; i++) bag.add(r.bytes(r.range(1, 200)));
    for (const k of keys.slice(0, 20)) {
      expectDsmError(() => t.fill(bag, [k]), DsmErrorCode.MissingNode);
      expect(t.reviseWitness(k, bag).status).toBe('stale');
    }
    expect(hex(t.root())).toBe(hex(root));
    // With the real nodes added, the very same bag works.
    bag.merge(NodeBag.fromProofs(keys.slice(0, 20).map((k) => tree.prove(k))));
    t.fill(bag, keys.slice(0, 20));
    for (const k of keys.slice(0, 20)) expect(t.get(k)).toEqual(tree.get(k));
  });

  it('roots and keys of the wrong shape', () => {
    const proof = tree.prove(keys[0]!);
    for (const bad of [new Uint8Array(0), new Uint8Array(31), new Uint8Array(33)]) {
      expectDsmError(() => verifyProof(bad, keys[0]!, proof), DsmErrorCode.BadProof);
      expect(thrown(() => DsmTree.fromRootHash(bad))).toBeInstanceOf(DsmError);
    }
    // Keys that are prefixes or extensions of a proven key are not proven by its proof.
    for (const k of [keys[0]!.subarray(0, 31), cat(keys[0]!, [0])]) {
      const p = tree.prove(k);
      expect(verifyProof(root, k, p)).toBeUndefined();
      expectDsmError(() => verifyProof(root, k, proof.concat([unhex('c0')])), DsmErrorCode.BadProof);
    }
  });
});
