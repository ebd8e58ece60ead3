/** Shards as subtrees: a tree that holds some shards and only the roots of the others. */
import { describe, expect, it } from '@jest/globals';
import { DsmErrorCode, DsmTree, toHex } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { expectDsmError } from './helpers/errors.js';

type Layout = { count: 16 | 256 };
const pathOf = (shard: number, l: Layout) => (l.count === 16 ? [shard] : [shard >> 4, shard & 15]);
const shardOfKey = (k: Uint8Array, l: Layout) => (l.count === 16 ? k[0]! >> 4 : k[0]!);

function randomEntries(r: Prng, n: number): [Uint8Array, Uint8Array][] {
  const out: [Uint8Array, Uint8Array][] = [];
  for (let i = 0; i < n; i++) out.push([r.bytes(32), r.bytes(r.range(1, 80))]);
  return out;
}

describe.each([{ count: 16 as const }, { count: 256 as const }])(
  'graft / refAt with $count shards',
  (layout) => {
    it('a tree holding only its shards, with the others grafted as roots, has the full root — through updates', () => {
      const r = new Prng(layout.count);
      const entries = randomEntries(r, layout.count === 16 ? 600 : 6000);
      const full = new DsmTree();
      for (const [k, v] of entries) full.put(k, v);
      const owned = new Set(layout.count === 16 ? [0, 3, 4, 9] : [0, 1, 17, 200, 255]);
      const mine = new DsmTree();
      const syncForeign = () => {
        for (let s = 0; s < layout.count; s++) {
          if (!owned.has(s)) mine.graft(pathOf(s, layout), full.refAt(pathOf(s, layout)));
        }
      };
      // The skeleton first (foreign shards as roots), then the node's own keys.
      syncForeign();
      for (const [k, v] of entries) if (owned.has(shardOfKey(k, layout))) mine.put(k, v);
      expect(toHex(mine.root())).toBe(toHex(full.root()));
      for (let s = 0; s < layout.count; s++) {
        expect(toHex(mine.refAt(pathOf(s, layout)) ?? new Uint8Array())).toBe(
          toHex(full.refAt(pathOf(s, layout)) ?? new Uint8Array()),
        );
      }
      for (let round = 0; round < 5; round++) {
        for (let i = 0; i < 200; i++) {
          const [k] = entries[r.int(entries.length)]!;
          const v = r.bytes(r.range(1, 80));
          const del = r.chance(0.2);
          if (del) full.del(k);
          else full.put(k, v);
          if (owned.has(shardOfKey(k, layout))) {
            if (del) mine.del(k);
            else mine.put(k, v);
          }
        }
        syncForeign();
        expect(toHex(mine.root())).toBe(toHex(full.root()));
      }
      // Reads of owned keys work; a key in a grafted shard is a stub away.
      const ownedKey = entries.find(
        ([k]) => owned.has(shardOfKey(k, layout)) && full.get(k) !== undefined,
      )![0];
      expect(toHex(mine.get(ownedKey)!)).toBe(toHex(full.get(ownedKey)!));
      const foreignKey = entries.find(([k]) => !owned.has(shardOfKey(k, layout)))![0];
      expectDsmError(() => mine.get(foreignKey), DsmErrorCode.MissingNode);
    });

    it('grafting the ref a slot already has changes nothing; a path through a non-branch is refused', () => {
      const r = new Prng(7);
      const full = new DsmTree();
      for (const [k, v] of randomEntries(r, layout.count === 16 ? 300 : 4000)) full.put(k, v);
      const root = toHex(full.root());
      full.graft(pathOf(5, layout), full.refAt(pathOf(5, layout)));
      expect(toHex(full.root())).toBe(root);
      const small = new DsmTree();
      small.put(new Uint8Array(32).fill(0x11), Uint8Array.of(1));
      expectDsmError(() => small.graft([1, 2, 3], new Uint8Array(32)), DsmErrorCode.BadPath);
      expectDsmError(() => small.refAt(pathOf(1, layout)), DsmErrorCode.BadPath);
    });
  },
);
