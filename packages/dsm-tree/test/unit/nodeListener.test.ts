/**
 * The node store seam (onHashed + forEachNode): a content-addressed store filled once from a
 * state's resident nodes and then only from what its commits hash must answer every read and
 * proof of every later version through a resolver, with deletes, storage, and snapshots that
 * branch (forks). If a commit left a node untold, a version would fault on a missing node.
 */

import { describe, expect, it } from '@jest/globals';
import { makeAccount, StateTree } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { Prng } from '@monsoon/test-utils';

const bin = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

describe('onHashed and forEachNode feed a content-addressed store', () => {
  it('every version reads back through the store alone, on two forks, with deletes', () => {
    const rng = new Prng(7);
    const store = new Map<string, string>();
    let told = 0;
    const onHashed = (h: string, enc: string): void => {
      told++;
      expect(bin(keccak.keccak256(Buffer.from(enc, 'latin1')))).toBe(h);
      store.set(h, enc);
    };
    const addrs = Array.from({ length: 300 }, () => rng.bytes(20));
    const slots = Array.from({ length: 8 }, () => rng.bytes(32));
    const base = new StateTree({});
    for (const a of addrs.slice(0, 200)) base.putAccount(a, makeAccount({ balance: rng.bigint(64) }));
    for (const a of addrs.slice(0, 20))
      for (const s of slots) base.putStorage(a, s, rng.bytes(1 + rng.int(31)));
    base.rootBin();
    // Filled once from the resident tree (as after genesis or a checkpoint)…
    base.forEachNode((h, enc) => store.set(h, enc));
    // …then only from commits, on two forks off the same base.
    const tips: StateTree[] = [];
    for (const fork of [0, 1]) {
      let st = base.snapshot();
      st.listen(onHashed);
      for (let block = 0; block < 12; block++) {
        st = st.snapshot();
        for (let k = 0; k < 25; k++) {
          const a = addrs[rng.int(addrs.length)]!;
          const r = rng.int(10);
          if (r < 2 && st.getAccount(a) !== undefined) st.deleteAccount(a);
          else if (r < 4 && st.getAccount(a) !== undefined)
            st.putStorage(a, slots[rng.int(slots.length)]!, r === 2 ? new Uint8Array(0) : rng.bytes(4));
          else st.putAccount(a, makeAccount({ nonce: BigInt(block + fork), balance: rng.bigint(64) }));
        }
        st.rootBin();
      }
      tips.push(st);
    }
    expect(told).toBeGreaterThan(0);
    for (const st of [base, ...tips]) {
      const remote = StateTree.fromRootHash(st.root(), {
        resolver: (h) => {
          const e = store.get(bin(h));
          return e === undefined ? undefined : new Uint8Array(Buffer.from(e, 'latin1'));
        },
      });
      for (const a of addrs) {
        expect(remote.getAccount(a)).toEqual(st.getAccount(a));
        expect(remote.proveAccount(a)).toEqual(st.proveAccount(a));
        if (st.getAccount(a) !== undefined)
          for (const s of slots) expect(remote.getStorage(a, s)).toEqual(st.getStorage(a, s));
      }
    }
  });

  it('forEachNode tells each resident node once, each proof node among them', () => {
    const rng = new Prng(11);
    const st = new StateTree({});
    const addrs = Array.from({ length: 500 }, () => rng.bytes(20));
    for (const a of addrs) st.putAccount(a, makeAccount({ balance: 1n }));
    const seen = new Map<string, number>();
    st.forEachNode((h) => seen.set(h, (seen.get(h) ?? 0) + 1));
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    for (const a of addrs)
      for (const n of st.proveAccount(a)) expect(seen.has(bin(keccak.keccak256(n)))).toBe(true);
  });

  it('a seen set shared across versions still tells every node of each, leaves moved by deletes included', () => {
    const rng = new Prng(13);
    const v1 = new StateTree({});
    const addrs = Array.from({ length: 400 }, () => rng.bytes(20));
    for (const a of addrs) v1.putAccount(a, makeAccount({ balance: 1n }));
    v1.rootBin();
    const v2 = v1.snapshot();
    // Deleting collapses branches: a surviving leaf moves up a level, the same object at a new depth.
    for (const a of addrs.slice(0, 150)) v2.deleteAccount(a);
    v2.rootBin();
    const told = new Set<string>();
    const seen = new Set<object>();
    v1.forEachNode((h) => told.add(h), seen);
    v2.forEachNode((h) => told.add(h), seen);
    for (const st of [v1, v2])
      for (const a of addrs)
        for (const n of st.proveAccount(a)) expect(told.has(bin(keccak.keccak256(n)))).toBe(true);
  });
});
