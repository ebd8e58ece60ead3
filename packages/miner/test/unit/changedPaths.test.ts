/**
 * A block's kept paths (ChangedPaths): every node the commit told of is found by its hash, and
 * no other hash finds anything, whatever the hashes share (the index slots them by their first
 * bytes, so hashes alike there probe on).
 */
import { describe, expect, it } from '@jest/globals';
import { ChangedPaths } from '../../src/miner.js';

/** A 32-byte binary string: `head` then bytes drawn from `seed`. */
function hashOf(head: string, seed: number): string {
  let s = head;
  let x = seed * 2654435761;
  while (s.length < 32) {
    x = (x ^ (x >>> 13)) * 1274126177;
    s += String.fromCharCode((x >>> 8) & 0xff);
  }
  return s;
}

describe('ChangedPaths', () => {
  it('finds every node told of by its hash, and nothing for other hashes', () => {
    const paths = new ChangedPaths();
    const told = new Map<string, string>();
    for (let i = 0; i < 3000; i++) {
      // Every tenth hash shares its first three bytes with others: they collide in the index.
      const h = i % 10 === 0 ? hashOf('\x01\x02\x03', i) : hashOf('', i + 1_000_000);
      const enc = `node ${i}`;
      told.set(h, enc);
      paths.listen(h, enc);
    }
    for (const [h, enc] of told) expect(paths.get(h)).toBe(enc);
    for (let i = 0; i < 500; i++) {
      for (const h of [hashOf('\x01\x02\x03', 10_000_000 + i), hashOf('', 20_000_000 + i)])
        if (!told.has(h)) expect(paths.get(h)).toBeUndefined();
    }
  });

  it('finds nothing in a block that changed nothing', () => {
    expect(new ChangedPaths().get(hashOf('', 1))).toBeUndefined();
  });

  it('refuses a node told of after the first lookup (the index would miss it)', () => {
    const paths = new ChangedPaths();
    paths.listen(hashOf('', 1), 'a');
    expect(paths.get(hashOf('', 1))).toBe('a');
    expect(() => paths.listen(hashOf('', 2), 'b')).toThrow(/after the first lookup/);
  });
});
