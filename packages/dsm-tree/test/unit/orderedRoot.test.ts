/** orderedRoot: a block's transactions / receipts root built from the sorted keys, against a DsmTree holding the same pairs. */
import { describe, expect, it } from '@jest/globals';
import { DsmTree, EMPTY_ROOT, orderedRoot, rlpEncode, toHex } from '@monsoon/dsm-tree';
import { jsKeccak } from '@monsoon/keccak';
import { Prng } from '@monsoon/test-utils';

/** rlp(i), built the way the block roots' reference does (a DsmTree keyed by it). */
function indexKey(i: number): Uint8Array {
  if (i === 0) return rlpEncode(new Uint8Array(0));
  const bytes: number[] = [];
  for (let n = i; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return rlpEncode(Uint8Array.from(bytes));
}

function treeRoot(values: readonly Uint8Array[]): string {
  const t = new DsmTree();
  for (let i = 0; i < values.length; i++) t.put(indexKey(i), values[i]!);
  return toHex(t.root());
}

describe('orderedRoot', () => {
  it('is the root a DsmTree gives the same pairs, for every count across the key forms and any value size', () => {
    const r = new Prng(17);
    // 0 (0x80), 1–127 (one byte, sorted before 0x80), 128–255 (0x81 ‖ i), 256+ (0x82 ‖ hi ‖ lo).
    const counts = [0, 1, 2, 3, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257, 300, 4100];
    for (const n of counts) {
      for (const size of [
        () => r.range(1, 4), // leaves small enough to be embedded in their parents
        () => r.range(20, 40), // around the 32-byte line
        () => r.range(90, 300), // transactions and receipts
      ]) {
        const values = Array.from({ length: n }, () => r.bytes(size()));
        expect([n, toHex(orderedRoot(values))]).toEqual([n, treeRoot(values)]);
      }
    }
    expect(orderedRoot([])).toEqual(EMPTY_ROOT);
  });

  it('the same root for values past the buffer it starts with and past two- and three-byte RLP lengths', () => {
    // A receipt with a large log, a contract creation: a node's RLP list header is then 4 bytes
    // (payload >= 64 KiB), and the builder's first buffer (64 KiB) must grow by what the node needs.
    const r = new Prng(23);
    for (const sizes of [[300, 70_000, 20], [65_530, 65_540], [1 << 20], [200, 200_000, 3, 100_000]]) {
      const values = sizes.map((n) => r.bytes(n));
      expect(toHex(orderedRoot(values))).toBe(treeRoot(values));
    }
  });

  it('gives each root whatever was built before it (the buffer and keys are kept between calls)', () => {
    const r = new Prng(29);
    const small = Array.from({ length: 40 }, () => r.bytes(r.range(1, 4)));
    const large = Array.from({ length: 3000 }, () => r.bytes(r.range(90, 300)));
    const smallRoot = treeRoot(small);
    const largeRoot = treeRoot(large);
    const seen: string[] = [];
    for (const v of [small, large, small, large, small]) seen.push(toHex(orderedRoot(v)));
    expect(seen).toEqual([smallRoot, largeRoot, smallRoot, largeRoot, smallRoot]);
    // A root handed out is its own bytes, not a view the next build writes over.
    const kept = orderedRoot(small);
    orderedRoot(large);
    expect(toHex(kept)).toBe(smallRoot);
  });

  it('gives the same root through the pure-JS keccak', () => {
    const r = new Prng(5);
    const values = Array.from({ length: 300 }, () => r.bytes(r.range(1, 120)));
    expect(toHex(orderedRoot(values, jsKeccak))).toBe(treeRoot(values));
  });

  it('refuses an empty value (a deletion in a trie)', () => {
    expect(() => orderedRoot([Uint8Array.of(1), new Uint8Array(0)])).toThrow(/value 1 is empty/);
  });
});
