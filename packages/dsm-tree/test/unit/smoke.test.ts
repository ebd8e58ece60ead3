import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { describe, expect, it } from '@jest/globals';
import { DsmTree, toHex, verifyProof } from '@monsoon/dsm-tree';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('smoke', () => {
  it('random short keys vs fresh ethereumjs', async () => {
    for (let seed = 1; seed <= 30; seed++) {
      const r = rng(seed);
      const t = new DsmTree();
      const m = new Map<string, Uint8Array>();
      const snaps: [DsmTree, string][] = [];
      for (let i = 0; i < 300; i++) {
        const klen = 1 + Math.floor(r() * 3);
        const key = new Uint8Array(klen).map(() => Math.floor(r() * 4));
        if (r() < 0.35) {
          t.del(key);
          m.delete(toHex(key));
        } else {
          const v = new Uint8Array(1 + Math.floor(r() * 40)).map(() => Math.floor(r() * 256));
          t.put(key, v);
          m.set(toHex(key), v);
        }
        if (i % 50 === 0) snaps.push([t.snapshot(), toHex(t.root())]);
      }
      const e = new MerklePatriciaTrie();
      for (const [k, v] of m) await e.put(Buffer.from(k, 'hex'), v);
      expect(toHex(t.root())).toBe(toHex(e.root()));
      for (const [k, v] of m) {
        const key = new Uint8Array(Buffer.from(k, 'hex'));
        expect(t.get(key)).toEqual(new Uint8Array(v));
        expect(verifyProof(t.root(), key, t.prove(key))).toEqual(new Uint8Array(v));
      }
      for (const [s, root] of snaps) expect(toHex(s.root())).toBe(root);
    }
  });
});
