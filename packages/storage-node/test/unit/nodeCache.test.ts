/**
 * The tiered store's cache of node encodings, packed in an arena: CLOCK over the log, where the
 * first use of an entry (the read that fetched the node faulting it into a tree) does not count,
 * later uses and touches do, and pinned entries are never dropped; its index and log against a
 * Map over many random operations.
 */
import { describe, expect, it } from '@jest/globals';
import { CHUNK_SLABS, ENTRY_HEADER, NodeCache, SLAB_BYTES, SlabPool } from '@monsoon/storage-node';
import { Prng } from '@monsoon/test-utils';

const hashOf = (i: number) => String.fromCharCode(i).repeat(32);
const enc = 'x'.repeat(100);
const entry = enc.length + ENTRY_HEADER;
/** The cache's bytes besides its entries (its index). */
const indexOf = (c: NodeCache) => c.bytes - c.size * entry;

describe('NodeCache', () => {
  it('drops an entry used once (faulted in by its fetch) before one never used after it', () => {
    const c = new NodeCache();
    c.set(hashOf(1), enc, false);
    c.set(hashOf(2), enc, false);
    expect(c.get(hashOf(1))).toEqual(Buffer.from(enc, 'latin1'));
    c.evictTo(entry + indexOf(c));
    expect(c.has(hashOf(1))).toBe(false);
    expect(c.has(hashOf(2))).toBe(true);
    expect(c.bytes).toBe(entry + indexOf(c));
  });

  it('keeps an entry used again, touched or pinned over the others', () => {
    const c = new NodeCache();
    for (let i = 1; i <= 5; i++) c.set(hashOf(i), enc, false);
    c.get(hashOf(1));
    c.get(hashOf(1)); // a second use: recently used
    c.get(hashOf(2));
    c.pin(hashOf(3));
    c.touch(hashOf(5)); // a tree still uses it
    c.evictTo(3 * entry + indexOf(c));
    expect([1, 2, 3, 4, 5].filter((i) => c.has(hashOf(i)))).toEqual([1, 3, 5]);
    // Moved to the log's newest end with their bits cleared: their encodings intact.
    expect(c.peek(hashOf(1))).toEqual(Buffer.from(enc, 'latin1'));
    c.unpin(hashOf(3));
    c.evictTo(0);
    expect(c.size).toBe(0);
    expect(c.slabBytes).toBe(0);
    expect(c.hits).toBe(3);
  });

  it('holds what a Map holds through random sets, gets and evictions over many slabs', () => {
    const r = new Prng(11);
    const c = new NodeCache();
    const ref = new Map<string, Buffer>();
    const hash = () => Buffer.from(r.bytes(32)).toString('latin1');
    const known: string[] = [];
    const bad: string[] = [];
    /** Encodings get handed out (views of the arena), to check they hold until the next trim (then a freed slab may be written again). */
    const views: [Uint8Array, Buffer][] = [];
    let viewsChecked = 0;
    let viewsBad = 0;
    let maxSlabs = 0;
    for (let step = 0; step < 10_000; step++) {
      const op = step % 2000 === 1999 ? 40 : r.int(40);
      if (op < 24 || known.length === 0) {
        const h = hash();
        const e = Buffer.from(r.bytes(1 + r.int(600)));
        c.set(h, r.int(2) === 0 ? e : e.toString('latin1'), r.int(4) === 0);
        ref.set(h, e);
        known.push(h);
      } else if (op < 40) {
        const h = known[r.int(known.length)]!;
        const got = c.get(h);
        if (got !== undefined && !Buffer.from(got).equals(ref.get(h)!)) bad.push(h);
        if (got !== undefined && step % 7 === 0) views.push([got, ref.get(h)!]);
      } else {
        for (const [v, e] of views) if (!Buffer.from(v).equals(e)) viewsBad++;
        viewsChecked += views.length;
        views.length = 0;
        maxSlabs = Math.max(maxSlabs, c.slabBytes);
        c.evictTo(r.int(2_000_000));
        for (const h of [...ref.keys()]) if (!c.has(h)) ref.delete(h);
      }
      if (step % 3000 === 0) {
        expect(c.size).toBe(ref.size);
        for (const [h, e] of ref) if (!Buffer.from(c.peek(h)!).equals(e)) bad.push(h);
      }
    }
    expect(c.size).toBe(ref.size);
    for (const [h, e] of ref) if (!Buffer.from(c.peek(h)!).equals(e)) bad.push(h);
    expect(bad).toEqual([]);
    // What get gave stays the node's bytes through the sets since, up to the next trim.
    expect(viewsChecked).toBeGreaterThan(100);
    expect(viewsBad).toBe(0);
    expect(maxSlabs).toBeGreaterThan(4 * 256 * 1024); // the log went over many slabs
    c.evictTo(0);
    expect(c.size).toBe(0);
    for (const h of known) expect(c.has(h)).toBe(false);
  });
});

describe('NodeCache slabs', () => {
  it('writes the slabs its trims free again: a cache churning through 43 MiB of entries maps one chunk', () => {
    const r = new Prng(5);
    const c = new NodeCache();
    const e = Buffer.alloc(500, 7);
    const last: string[] = [];
    for (let i = 0; i < 80_000; i++) {
      const h = Buffer.from(r.bytes(32)).toString('latin1');
      c.set(h, e, false);
      last.push(h);
      if (i % 1000 === 999) {
        c.evictTo(1024 * 1024);
        last.splice(0, last.length - 1000);
      }
    }
    expect(c.evicted).toBeGreaterThan(75_000);
    // ~164 slabs were written, ~5 held at a time: one chunk of 132 held them all.
    expect(c.poolChunks).toBe(1);
    // The newest entries read back whole from slabs written several times over.
    for (const h of last) if (c.has(h)) expect(Buffer.from(c.peek(h)!).equals(e)).toBe(true);
    expect(last.filter((h) => c.has(h)).length).toBeGreaterThan(500);
  });
});

describe('SlabPool', () => {
  it('lends freed slabs again, lowest chunk first, and unmaps an empty chunk only when the others have room', () => {
    const p = new SlabPool();
    const first = Array.from({ length: CHUNK_SLABS + 40 }, () => p.take());
    expect(p.chunkCount).toBe(2);
    expect(first.map((s) => s.slab)).toEqual(first.map((_, i) => i));
    expect(first[0]!.buf.length).toBe(SLAB_BYTES);
    // Slabs are disjoint parts of their chunk: a write to one shows in no other.
    first[1]!.buf.fill(1);
    first[2]!.buf.fill(2);
    expect(first[1]!.buf.every((b) => b === 1)).toBe(true);
    // A freed slab comes back first (already resident), before any never lent.
    p.give(5);
    expect(p.take().slab).toBe(5);
    // The second chunk emptied while the first is full: it stays (no unmap at the edge of one).
    for (const s of first.slice(CHUNK_SLABS)) p.give(s.slab);
    expect(p.chunkCount).toBe(2);
    const next = p.take().slab; // the first chunk full: the second's
    expect(next).toBeGreaterThanOrEqual(CHUNK_SLABS);
    p.give(next);
    // A quarter of a chunk free in the first: the empty second goes, and is mapped again when needed.
    for (let i = 0; i < (CHUNK_SLABS >> 2) - 1; i++) p.give(i);
    expect(p.chunkCount).toBe(2);
    p.give((CHUNK_SLABS >> 2) - 1);
    expect(p.chunkCount).toBe(1);
    const again = Array.from({ length: (CHUNK_SLABS >> 2) + 1 }, () => p.take().slab);
    expect(again.slice(0, -1).sort((a, b) => a - b)).toEqual(again.slice(0, -1).map((_, i) => i));
    expect(again.at(-1)).toBe(CHUNK_SLABS);
    expect(p.chunkCount).toBe(2);
  });
});

describe('NodeCache by frequency', () => {
  it('keeps the entries wanted often over those used once lately, whatever their order, and raises its bar to fit', () => {
    const c = new NodeCache();
    // Wanted: 1-3 five times each, 4-9 once (read once since: their bits set, which do not count).
    const wants = (b: Uint8Array, at: number) => (b[at]! <= 3 ? 5 : 1);
    for (let i = 1; i <= 9; i++) c.set(hashOf(i), enc, false);
    for (let i = 4; i <= 9; i++) {
      c.get(hashOf(i));
      c.get(hashOf(i));
    }
    c.evictTo(3 * entry + indexOf(c), wants);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].filter((i) => c.has(hashOf(i)))).toEqual([1, 2, 3]);
    // All of them wanted as often: the bar rises until the budget holds, pinned ones stay.
    c.pin(hashOf(2));
    c.evictTo(entry + indexOf(c), wants);
    expect([1, 2, 3].filter((i) => c.has(hashOf(i)))).toEqual([2]);
    expect(c.keepWants).toBeGreaterThan(5);
  });

  it('a trim that must drop one entry moves a few kept ones per raise of its bar, not a share of the cache', () => {
    const c = new NodeCache();
    // 2,000 entries, all wanted 5 times: the bar (2) must rise past 5 before anything goes.
    for (let i = 0; i < 2_000; i++) c.set(String(i).padStart(4, '0').repeat(2) + 'h'.repeat(24), enc, false);
    c.evictTo(c.bytes - 1, () => 5);
    expect(c.size).toBe(1_999);
    // Four raises (2 -> 3 -> 4 -> 5 -> 6) of at most 64 moves each (4 per entry to drop, at least
    // 64); an eighth of the entries a raise (the limit before) would have moved ~1,000.
    expect(c.moved).toBeLessThanOrEqual(4 * 65);
    expect(c.keepWants).toBeGreaterThan(5);
  });
});
