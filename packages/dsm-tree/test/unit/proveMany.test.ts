/** proveMany: the union of many proofs, each node once — what a storage node ships as a bag. */
import { describe, expect, it } from '@jest/globals';
import { DsmTree, makeAccount, NodeBag, StateTree, toHex } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';

describe('proveMany', () => {
  it('is exactly the distinct nodes of the single proofs, compact or not, and fills a pruned copy', () => {
    const r = new Prng(42);
    const t = new DsmTree();
    const keys: Uint8Array[] = [];
    for (let i = 0; i < 3000; i++) {
      const k = r.bytes(32);
      keys.push(k);
      t.put(k, r.bytes(r.range(1, 90)));
    }
    const asked = [...keys.slice(0, 200), r.bytes(32), r.bytes(32)]; // two absent keys too
    for (const c of [0, 2, 4]) {
      const union = new Set(asked.flatMap((k) => t.prove(k, c).map(toHex)));
      const many = t.proveMany(asked, c).map(toHex);
      expect(many.length).toBe(union.size); // no duplicates
      expect(new Set(many)).toEqual(union);
    }
    const pruned = t.snapshot();
    pruned.prune(3);
    pruned.fill(NodeBag.fromProofs([t.proveMany(asked, 3)]), asked);
    for (const k of asked) expect(pruned.get(k) && toHex(pruned.get(k)!)).toBe(t.get(k) && toHex(t.get(k)!));
  });

  it('StateTree.proveAccounts / proveStorageMany cover every account and slot asked', () => {
    const r = new Prng(7);
    const s = new StateTree();
    const addrs = Array.from({ length: 50 }, () => r.bytes(20));
    const slots = Array.from({ length: 5 }, () => r.bytes(32));
    for (const a of addrs) s.putAccount(a, makeAccount({ balance: 5n }));
    for (const slot of slots) s.putStorage(addrs[0]!, slot, Uint8Array.of(9));
    const bag = NodeBag.fromProofs([s.proveAccounts(addrs.slice(0, 10))]);
    for (const a of addrs.slice(0, 10))
      for (const n of s.proveAccount(a)) expect(bag.has(s.hashKey(n))).toBe(true);
    const sbag = NodeBag.fromProofs([s.proveStorageMany(addrs[0]!, slots)]);
    for (const slot of slots)
      for (const n of s.proveStorage(addrs[0]!, slot)) expect(sbag.has(s.hashKey(n))).toBe(true);
  });
});
