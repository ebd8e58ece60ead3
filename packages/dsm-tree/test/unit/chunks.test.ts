/** encodeTreeChunks: the checkpoint encoding in pieces, byte-identical to encodeTree. */
import { describe, expect, it } from '@jest/globals';
import { DsmTree, decodeTree, encodeTree, encodeTreeChunks, toHex } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';

describe('encodeTreeChunks', () => {
  it('yields pieces of about the asked size whose concatenation is encodeTree, also when pruned', () => {
    const r = new Prng(11);
    const t = new DsmTree();
    for (let i = 0; i < 2000; i++) t.put(r.bytes(32), r.bytes(r.range(1, 100)));
    for (const tree of [
      t,
      (() => {
        const p = t.snapshot();
        p.prune(2);
        return p;
      })(),
    ]) {
      const chunks = [...encodeTreeChunks(tree, 4096)];
      const whole = Buffer.concat(chunks);
      expect(chunks.length).toBeGreaterThanOrEqual(Math.floor(whole.length / (4096 + 600)));
      expect(chunks.length).toBeGreaterThan(2);
      for (const c of chunks.slice(0, -1)) expect(c.length).toBeGreaterThanOrEqual(4096);
      expect(toHex(whole)).toBe(toHex(encodeTree(tree)));
      expect(toHex(decodeTree(whole).root())).toBe(toHex(tree.root()));
    }
    expect([...encodeTreeChunks(new DsmTree(), 4096)]).toHaveLength(1);
  });
});
