/**
 * applyAccountUpdate (what a storage node does with each account of a block) against a model:
 * random blocks of changes, deletes, slot writes and deletes, code creations and re-creations
 * over a cleared storage, applied block after block on snapshots as ShardState does (with the
 * key the caller hashed, or hashed inside); after every block the root equals that of a state
 * built afresh from the model, and the accounts read back as the model says.
 */
import { describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, makeAccount, StateTree } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { type AccountUpdate, applyAccountUpdate } from '@monsoon/protocol';
import { Prng } from '@monsoon/test-utils';

interface Model {
  nonce: bigint;
  balance: bigint;
  code: Uint8Array;
  storage: Map<string, Uint8Array>;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** The state the model describes, written from nothing. */
function stateOf(model: Map<string, Model>): StateTree {
  const st = new StateTree();
  for (const [a, m] of model) {
    const address = Buffer.from(a, 'hex');
    const codeHash = m.code.length > 0 ? st.putCode(m.code) : EMPTY_CODE_HASH;
    st.putAccount(address, makeAccount({ nonce: m.nonce, balance: m.balance, codeHash }));
    for (const [s, v] of m.storage) st.putStorage(address, Buffer.from(s, 'hex'), v);
  }
  return st;
}

/**
 * `st` as a storage node restored from a checkpoint holds it: the account trie, and each storage
 * trie only by the root its account names, faulted in when first read.
 */
function withoutStorageTries(st: StateTree): StateTree {
  const nodes = new Map<string, Uint8Array>();
  const parts = st.exportParts();
  for (const [, t] of parts.storage) t.forEachNode((h, enc) => nodes.set(h, Buffer.from(enc, 'latin1')));
  const resolver = (h: Uint8Array) => nodes.get(Buffer.from(h).toString('latin1'));
  return StateTree.restore(st.accounts.snapshot(), { storage: [], code: parts.code }, { resolver });
}

/** A random block's updates (each account once), applied to the model as they are made. */
function block(r: Prng, model: Map<string, Model>, addresses: Uint8Array[]): AccountUpdate[] {
  const updates: AccountUpdate[] = [];
  const touched = new Set<string>();
  for (let i = 0; i < 30; i++) {
    const fresh = r.int(8) === 0;
    const address = fresh ? r.bytes(20) : addresses[r.int(addresses.length)]!;
    const id = hex(address);
    if (touched.has(id)) continue;
    touched.add(id);
    if (fresh) addresses.push(address);
    const old = model.get(id);
    if (old !== undefined && r.int(12) === 0) {
      model.delete(id);
      updates.push({ deleted: true, address });
      continue;
    }
    // A re-creation: storage wiped, new code (or none), as after a self-destruct in the block.
    const clearStorage = old !== undefined && r.int(6) === 0;
    const code = (old === undefined || clearStorage) && r.int(3) === 0 ? r.bytes(1 + r.int(40)) : undefined;
    const m: Model = {
      nonce: (old?.nonce ?? 0n) + 1n,
      balance: BigInt(r.u32()) * 7n,
      code: code ?? (clearStorage ? new Uint8Array(0) : (old?.code ?? new Uint8Array(0))),
      storage: clearStorage || old === undefined ? new Map() : new Map(old.storage),
    };
    const storage: { slot: Uint8Array; value: Uint8Array }[] = [];
    const known = [...m.storage.keys()];
    for (let k = r.int(4); k > 0; k--) {
      const slot =
        known.length > 0 && r.int(2) === 0 ? Buffer.from(known[r.int(known.length)]!, 'hex') : r.bytes(32);
      if (storage.some((w) => hex(w.slot) === hex(slot))) continue;
      const value = r.int(4) === 0 ? new Uint8Array(0) : Uint8Array.of(1 + r.int(255), r.int(256));
      if (value.length === 0) m.storage.delete(hex(slot));
      else m.storage.set(hex(slot), value);
      storage.push({ slot, value });
    }
    model.set(id, m);
    updates.push({
      deleted: false,
      address,
      nonce: m.nonce,
      balance: m.balance,
      code,
      clearStorage,
      storage,
    });
  }
  return updates;
}

describe('applyAccountUpdate', () => {
  it.each([
    ['keys hashed by the caller, storage tries held', true, false],
    ['keys hashed inside, storage tries held', false, false],
    ['keys hashed by the caller, storage tries faulted in', true, true],
  ])(
    'block after block on snapshots, %s: the root of a state written afresh',
    (_name, batchKeys, restored) => {
      const r = new Prng(batchKeys ? (restored ? 43 : 41) : 42);
      const model = new Map<string, Model>();
      const addresses: Uint8Array[] = [];
      for (let i = 0; i < 50; i++) {
        const address = r.bytes(20);
        addresses.push(address);
        const storage = new Map<string, Uint8Array>();
        if (i % 3 === 0)
          for (let k = 0; k < 3; k++) storage.set(hex(r.bytes(32)), Uint8Array.of(1 + r.int(255)));
        const code = i % 5 === 0 ? r.bytes(1 + r.int(30)) : new Uint8Array(0);
        model.set(hex(address), { nonce: BigInt(r.int(4)), balance: BigInt(r.u32()), code, storage });
      }
      let state = restored ? withoutStorageTries(stateOf(model)) : stateOf(model);
      let deletes = 0;
      let clears = 0;
      let slotDeletes = 0;
      for (let b = 0; b < 40; b++) {
        const updates = block(r, model, addresses);
        const next = state.snapshot();
        const keys = keccak.keccak256Batch(updates.map((u) => u.address));
        updates.forEach((u, i) => {
          if (u.deleted) deletes++;
          else {
            if (u.clearStorage) clears++;
            slotDeletes += u.storage.filter((w) => w.value.length === 0).length;
          }
          if (batchKeys) applyAccountUpdate(next, u, keys.subarray(32 * i, 32 * i + 32));
          else applyAccountUpdate(next, u);
        });
        expect(hex(next.root())).toBe(hex(stateOf(model).root()));
        // The snapshot it came from is as it was.
        expect(hex(state.root())).not.toBe(hex(next.root()));
        state = next;
      }
      for (const a of addresses) {
        const m = model.get(hex(a));
        const got = state.getAccount(a);
        expect(got?.nonce).toBe(m?.nonce);
        if (m !== undefined)
          expect(hex(got!.codeHash)).toBe(
            hex(m.code.length > 0 ? keccak.keccak256(m.code) : EMPTY_CODE_HASH),
          );
      }
      // The run went through every kind of update.
      expect(deletes).toBeGreaterThan(0);
      expect(clears).toBeGreaterThan(0);
      expect(slotDeletes).toBeGreaterThan(0);
    },
  );
});
