/**
 * VerifiedNodes, the client's packed cache of verified nodes: a lookup returns exactly the bytes
 * held under that hash (never another entry's, however many share its first bytes), entries
 * survive one turn of the generations and not two unless used, a refused answer's entries go,
 * and a view handed out keeps its bytes whatever is added or turned afterwards.
 */
import { describe, expect, it } from '@jest/globals';
import { byteKey, bytesEqual } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { Prng } from '@monsoon/test-utils';
import { VerifiedNodes } from '../../src/verifiedNodes.js';

const bin = (b: Uint8Array) => byteKey(b);

/** `n` random bytes, four at a time (Prng.bytes draws one number a byte). */
function randomBytes(rng: Prng, n: number): Uint8Array {
  const words = new Uint32Array(Math.ceil(n / 4));
  for (let i = 0; i < words.length; i++) words[i] = rng.u32();
  return new Uint8Array(words.buffer, 0, n);
}

function randomNodes(rng: Prng, n: number, max = 600): Uint8Array[] {
  return Array.from({ length: n }, () => randomBytes(rng, 1 + rng.int(max)));
}

/** Whether `got` holds exactly `want`'s bytes (toEqual on thousands of arrays is slow). */
const same = (got: Uint8Array | undefined, want: Uint8Array) => got !== undefined && bytesEqual(got, want);

describe('VerifiedNodes', () => {
  it('returns each node under its keccak hash, and nothing for other hashes', () => {
    const rng = new Prng(1);
    const cache = new VerifiedNodes(5_000, keccak);
    const nodes = randomNodes(rng, 3_000);
    const hashes = cache.addNodes(nodes);
    expect(cache.size).toBe(3_000);
    for (let i = 0; i < nodes.length; i++) {
      const h = hashes.subarray(32 * i, 32 * i + 32);
      expect(bytesEqual(h, keccak.keccak256(nodes[i]!))).toBe(true);
      expect(same(cache.get(bin(h)), nodes[i])).toBe(true);
      // The same hash with its last byte changed is another node's: not held.
      const other = Uint8Array.from(h);
      other[31] ^= 1;
      expect(cache.get(bin(other))).toBeUndefined();
    }
    expect(cache.byteSize).toBe(nodes.reduce((n, b) => n + b.length, 0));
  });

  it('tells apart hashes that share their first 28 bytes (one probe chain)', () => {
    const cache = new VerifiedNodes(100, keccak);
    const n = 200;
    const hashes = new Uint8Array(32 * n);
    const nodes: Uint8Array[] = [];
    for (let i = 0; i < n; i++) {
      hashes.fill(0xab, 32 * i, 32 * i + 28);
      hashes[32 * i + 28] = i & 0xff;
      hashes[32 * i + 31] = i >> 8;
      nodes.push(Uint8Array.of(0xc1, i & 0x7f, i >> 7));
    }
    cache.addVerified(nodes, hashes);
    for (let i = 0; i < n; i++)
      expect(same(cache.get(bin(hashes.subarray(32 * i, 32 * i + 32))), nodes[i])).toBe(true);
    const absent = hashes.slice(0, 32);
    absent[29] = 7;
    expect(cache.get(bin(absent))).toBeUndefined();
  });

  it('keeps what a turn made older, moves what is used to the newer, drops the rest at the next turn', () => {
    const rng = new Prng(2);
    const cache = new VerifiedNodes(1_000, keccak);
    const a = randomNodes(rng, 50);
    const b = randomNodes(rng, 50);
    const ha = cache.addNodes(a);
    cache.turn();
    const hb = cache.addNodes(b);
    expect(cache.size).toBe(100);
    expect(cache.newerSize).toBe(50);
    // a[0] used: copied into the newer generation.
    expect(same(cache.get(bin(ha.subarray(0, 32))), a[0])).toBe(true);
    expect(cache.newerSize).toBe(51);
    cache.turn();
    cache.turn();
    // Two turns: everything not used since the first is gone.
    expect(cache.size).toBe(0);
    for (let i = 0; i < 50; i++) {
      expect(cache.get(bin(ha.subarray(32 * i, 32 * i + 32)))).toBeUndefined();
      expect(cache.get(bin(hb.subarray(32 * i, 32 * i + 32)))).toBeUndefined();
    }
  });

  it('survives one turn with a used entry, and two turns only if used again', () => {
    const rng = new Prng(3);
    const cache = new VerifiedNodes(1_000, keccak);
    const a = randomNodes(rng, 10);
    const ha = cache.addNodes(a);
    cache.turn();
    cache.addNodes(randomNodes(rng, 10));
    const h0 = bin(ha.subarray(0, 32));
    expect(same(cache.get(h0), a[0])).toBe(true);
    cache.turn();
    expect(same(cache.get(h0), a[0])).toBe(true);
    expect(cache.get(bin(ha.subarray(32, 64)))).toBeUndefined();
  });

  it('takes out what deleteHashes names (a refused answer) and nothing else', () => {
    const rng = new Prng(4);
    const cache = new VerifiedNodes(1_000, keccak);
    const kept = randomNodes(rng, 40);
    const hk = cache.addNodes(kept);
    const refused = randomNodes(rng, 40);
    const hr = cache.addNodes(refused);
    cache.deleteHashes(hr);
    expect(cache.size).toBe(40);
    for (let i = 0; i < 40; i++) {
      expect(cache.get(bin(hr.subarray(32 * i, 32 * i + 32)))).toBeUndefined();
      expect(same(cache.get(bin(hk.subarray(32 * i, 32 * i + 32))), kept[i])).toBe(true);
    }
    // Added again after the delete: found again.
    cache.addNodes(refused.slice(0, 1));
    expect(same(cache.get(bin(hr.subarray(0, 32))), refused[0])).toBe(true);
  });

  it('holds entries larger than a slab, and views keep their bytes through later adds and turns', () => {
    const rng = new Prng(5);
    const cache = new VerifiedNodes(200, keccak);
    const big = randomBytes(rng, 3 << 20);
    const hBig = bin(keccak.keccak256(big));
    cache.add(big);
    const nodes = randomNodes(rng, 100);
    const hashes = cache.addNodes(nodes);
    const views = nodes.map((_, i) => cache.get(bin(hashes.subarray(32 * i, 32 * i + 32)))!);
    const bigView = cache.get(hBig)!;
    expect(same(bigView, big)).toBe(true);
    for (let round = 0; round < 6; round++) {
      cache.addNodes(randomNodes(rng, 3_000, 1_200));
      cache.turn();
    }
    for (let i = 0; i < views.length; i++) expect(same(views[i], nodes[i]!)).toBe(true);
    expect(same(bigView, big)).toBe(true);
  });

  it('turns by itself when the newer generation outgrows its index, keeping the newest entries', () => {
    const rng = new Prng(6);
    const cache = new VerifiedNodes(10, keccak);
    const nodes = randomNodes(rng, 5_000, 100);
    const hashes = cache.addNodes(nodes);
    // The last entries are held; the cache stayed bounded.
    for (let i = 4_900; i < 5_000; i++)
      expect(same(cache.get(bin(hashes.subarray(32 * i, 32 * i + 32))), nodes[i])).toBe(true);
    expect(cache.size).toBeLessThan(2_100);
  });
});
