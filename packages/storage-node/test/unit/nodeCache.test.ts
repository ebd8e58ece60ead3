/**
 * The tiered store's cache of node encodings: CLOCK, where the first use of an entry (the read
 * that fetched the node faulting it into a tree) does not count, later uses do, and pinned
 * entries are never dropped.
 */
import { describe, expect, it } from '@jest/globals';
import { CACHE_ENTRY_OVERHEAD, NodeCache } from '@monsoon/storage-node';

const hashOf = (i: number) => String.fromCharCode(i).repeat(32);
const enc = 'x'.repeat(100);
const entry = enc.length + CACHE_ENTRY_OVERHEAD;

describe('NodeCache', () => {
  it('drops an entry used once (faulted in by its fetch) before one never used after it', () => {
    const c = new NodeCache();
    c.set(hashOf(1), enc, false);
    c.set(hashOf(2), enc, false);
    expect(c.get(hashOf(1))).toEqual(Buffer.from(enc, 'latin1'));
    c.evictTo(entry);
    expect(c.has(hashOf(1))).toBe(false);
    expect(c.has(hashOf(2))).toBe(true);
    expect(c.bytes).toBe(entry);
  });

  it('keeps an entry used again (faulted in after a tree evicted it) over the others, and pinned ones', () => {
    const c = new NodeCache();
    for (let i = 1; i <= 4; i++) c.set(hashOf(i), enc, false);
    c.get(hashOf(1));
    c.get(hashOf(1)); // a second use: recently used
    c.get(hashOf(2));
    c.pin(hashOf(3));
    c.evictTo(2 * entry);
    expect([1, 2, 3, 4].filter((i) => c.has(hashOf(i)))).toEqual([1, 3]);
    c.unpin(hashOf(3));
    c.evictTo(0);
    expect(c.size).toBe(0);
    expect(c.bytes).toBe(0);
    expect(c.hits).toBe(3);
  });
});
