/**
 * StateTree: Ethereum's state root, bit for bit. The reference builds each storage trie and the
 * account trie with @ethereumjs/mpt (fresh, inserts only) from a plain model of the state.
 */

import { RLP } from '@ethereumjs/rlp';
import { describe, expect, it } from '@jest/globals';
import {
  type Account,
  DsmErrorCode,
  decodeAccount,
  EMPTY_CODE_HASH,
  EMPTY_ROOT,
  encodeAccount,
  makeAccount,
  StateTree,
  verifyProof,
} from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { expectDsmError } from './helpers/errors.js';
import { EMPTY_ROOT_HEX, ethRoot, hex, type Model, refKeccak, unhex } from './helpers/reference.js';

interface RefAccount {
  nonce: bigint;
  balance: bigint;
  codeHash: Uint8Array;
  /** slot (hex) → value without leading zeros (never empty). */
  storage: Map<string, Uint8Array>;
}

/** The state as plain data: address (hex) → account. */
type RefState = Map<string, RefAccount>;

function minimal(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0);
  const h = n.toString(16);
  return unhex(h.length % 2 ? `0${h}` : h);
}

function stripped(v: Uint8Array): Uint8Array {
  let i = 0;
  while (i < v.length && v[i] === 0) i++;
  return v.slice(i);
}

async function refStorageRoot(a: RefAccount): Promise<string> {
  if (a.storage.size === 0) return EMPTY_ROOT_HEX;
  const m: Model = new Map();
  for (const [slot, v] of a.storage) m.set(hex(refKeccak(unhex(slot))), RLP.encode(v));
  return ethRoot(m);
}

async function refAccountRlp(a: RefAccount): Promise<Uint8Array> {
  return RLP.encode([minimal(a.nonce), minimal(a.balance), unhex(await refStorageRoot(a)), a.codeHash]);
}

async function refStateRoot(state: RefState): Promise<string> {
  const m: Model = new Map();
  for (const [addr, a] of state) m.set(hex(refKeccak(unhex(addr))), await refAccountRlp(a));
  return ethRoot(m);
}

/** Everything the state says about `addr` matches the reference (and its proofs verify). */
async function expectAccount(st: StateTree, state: RefState, addr: string): Promise<void> {
  const a = state.get(addr);
  const address = unhex(addr);
  const proof = st.proveAccount(address);
  const proved = verifyProof(st.root(), refKeccak(address), proof);
  if (a === undefined) {
    expect(st.getAccount(address)).toBeUndefined();
    expect(proved).toBeUndefined();
    return;
  }
  const got = st.getAccount(address)!;
  const storageRoot = await refStorageRoot(a);
  expect({ addr, nonce: got.nonce, balance: got.balance, storageRoot: hex(got.storageRoot) }).toEqual({
    addr,
    nonce: a.nonce,
    balance: a.balance,
    storageRoot,
  });
  expect(hex(got.codeHash)).toBe(hex(a.codeHash));
  expect(hex(proved!)).toBe(hex(await refAccountRlp(a)));
  for (const [slot, v] of a.storage) {
    expect(st.getStorage(address, unhex(slot))).toEqual(v);
    const p = st.proveStorage(address, unhex(slot));
    expect(hex(verifyProof(got.storageRoot, refKeccak(unhex(slot)), p)!)).toBe(hex(RLP.encode(v)));
  }
}

/** A random workload on a StateTree and the reference alike. */
class Workload {
  readonly st = new StateTree();
  readonly state: RefState = new Map();
  readonly code = new Map<string, Uint8Array>();
  /** Slots ever written per address, to check that deleted ones read as absent. */
  readonly slotsSeen = new Map<string, Set<string>>();
  /** How often each kind of step ran. */
  readonly done = { storage: 0, zero: 0, update: 0, delete: 0, clear: 0, revive: 0 };

  constructor(readonly r: Prng) {}

  nonce(): bigint {
    return this.r.pick([0n, 1n, (1n << 64n) - 1n, this.r.bigint(64), this.r.bigint(16)]);
  }

  balance(): bigint {
    return this.r.pick([0n, 1n, (1n << 256n) - 1n, this.r.bigint(256), this.r.bigint(80)]);
  }

  /** A slot: often a small index (as contracts use), else random. */
  slot(): Uint8Array {
    if (this.r.chance(0.5)) return this.r.bytes(32);
    const s = new Uint8Array(32);
    s[31] = this.r.int(8);
    return s;
  }

  /** A 32-byte-or-shorter value: random, with leading zeros, or zero (which deletes). */
  value(): Uint8Array {
    const x = this.r.next();
    if (x < 0.1) return new Uint8Array(32);
    if (x < 0.15) return new Uint8Array(0);
    if (x < 0.5) {
      const v = new Uint8Array(32);
      v.set(this.r.bytes(this.r.range(1, 4)), 32 - 4);
      v[31] = v[31]! | 1;
      return v;
    }
    return this.r.bytes(this.r.range(1, 32));
  }

  newAccount(): string {
    const address = this.r.bytes(20);
    const addr = hex(address);
    let codeHash = EMPTY_CODE_HASH;
    if (this.r.chance(0.3)) {
      const code = this.r.bytes(this.r.range(1, 200));
      codeHash = this.st.putCode(code);
      expect(hex(codeHash)).toBe(hex(refKeccak(code)));
      this.code.set(hex(codeHash), code);
    }
    const a: RefAccount = { nonce: this.nonce(), balance: this.balance(), codeHash, storage: new Map() };
    this.st.putAccount(address, makeAccount({ nonce: a.nonce, balance: a.balance, codeHash }));
    this.state.set(addr, a);
    return addr;
  }

  putStorage(addr: string, slot: Uint8Array, v: Uint8Array): void {
    this.st.putStorage(unhex(addr), slot, v);
    const s = stripped(v);
    const a = this.state.get(addr)!;
    if (s.length === 0) a.storage.delete(hex(slot));
    else a.storage.set(hex(slot), s);
    const seen = this.slotsSeen.get(addr) ?? new Set<string>();
    seen.add(hex(slot));
    this.slotsSeen.set(addr, seen);
  }

  /** A random write to an account or its storage. */
  step(): void {
    const addrs = [...this.state.keys()];
    const x = this.r.next();
    if (addrs.length === 0 || x < 0.08) {
      this.newAccount();
    } else if (x < 0.6) {
      const addr = this.r.pick(addrs);
      const a = this.state.get(addr)!;
      const slot =
        a.storage.size > 0 && this.r.chance(0.4) ? unhex(this.r.pick([...a.storage.keys()])) : this.slot();
      const v = this.value();
      this.putStorage(addr, slot, v);
      this.done.storage++;
      if (stripped(v).length === 0) this.done.zero++;
    } else if (x < 0.8) {
      // Nonce/balance update. The storageRoot given is ignored for an existing account
      // (documented): the account keeps the root of the storage it has.
      const addr = this.r.pick(addrs);
      const a = this.state.get(addr)!;
      a.nonce = this.nonce();
      a.balance = this.balance();
      const storageRoot = this.r.chance(0.5) ? EMPTY_ROOT : this.r.bytes(32);
      this.st.putAccount(unhex(addr), {
        nonce: a.nonce,
        balance: a.balance,
        storageRoot,
        codeHash: a.codeHash,
      });
      this.done.update++;
    } else if (x < 0.88) {
      const addr = this.r.pick(addrs);
      this.st.deleteAccount(unhex(addr));
      this.state.delete(addr);
      this.done.delete++;
    } else if (x < 0.92) {
      const addr = this.r.pick(addrs);
      this.st.clearStorage(unhex(addr));
      this.state.get(addr)!.storage.clear();
      this.done.clear++;
    } else {
      // A deleted account comes back: with empty storage, whatever it had before.
      const gone = [...this.slotsSeen.keys()].filter((a) => !this.state.has(a));
      if (gone.length === 0) return;
      const addr = this.r.pick(gone);
      const a: RefAccount = { nonce: 1n, balance: 2n, codeHash: EMPTY_CODE_HASH, storage: new Map() };
      this.st.putAccount(unhex(addr), makeAccount({ nonce: 1n, balance: 2n }));
      this.state.set(addr, a);
      this.done.revive++;
    }
  }

  async check(sample = Infinity): Promise<void> {
    expect(hex(this.st.root())).toBe(await refStateRoot(this.state));
    const addrs = [...this.state.keys(), ...this.slotsSeen.keys()];
    for (const addr of this.r.shuffle([...new Set(addrs)]).slice(0, sample)) {
      await expectAccount(this.st, this.state, addr);
      for (const slot of this.slotsSeen.get(addr) ?? []) {
        if (this.state.get(addr)?.storage.has(slot)) continue;
        expect(this.st.getStorage(unhex(addr), unhex(slot))).toBeUndefined();
      }
    }
    for (const [h, c] of this.code) expect(this.st.getCode(unhex(h))).toEqual(c);
  }
}

describe('StateTree vs an @ethereumjs/mpt reference', () => {
  it('the empty state', () => {
    const st = new StateTree();
    expect(hex(st.root())).toBe(EMPTY_ROOT_HEX);
    expect(st.getAccount(new Uint8Array(20))).toBeUndefined();
    expect(st.getStorage(new Uint8Array(20), new Uint8Array(32))).toBeUndefined();
    expect(st.proveAccount(new Uint8Array(20))).toEqual([]);
    expect(hex(EMPTY_CODE_HASH)).toBe(hex(refKeccak(new Uint8Array(0))));
    expect(st.getCode(EMPTY_CODE_HASH)).toEqual(new Uint8Array(0));
    expect(st.getCode(new Uint8Array(32).fill(1))).toBeUndefined();
  });

  it.each([1, 2])('random accounts, code and storage; updates and deletes (seed %i)', async (seed) => {
    const w = new Workload(new Prng(1000 + seed));
    for (let i = 0; i < 40; i++) w.newAccount();
    const addrs = [...w.state.keys()];
    for (const addr of addrs.slice(0, 20)) {
      for (let j = w.r.range(1, 25); j > 0; j--) w.putStorage(addr, w.slot(), w.value());
    }
    await w.check();
    // The edge values made it in.
    const balances = [...w.state.values()].map((a) => a.balance);
    expect(balances).toContain(0n);
    expect(balances).toContain((1n << 256n) - 1n);
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 60; i++) w.step();
      await w.check(25);
    }
    await w.check();
    for (const n of Object.values(w.done)) expect(n).toBeGreaterThan(0);
  });

  it('getAccount follows storage writes before any root() is asked for', async () => {
    const w = new Workload(new Prng(1010));
    const addr = w.newAccount();
    expect(hex(w.st.getAccount(unhex(addr))!.storageRoot)).toBe(EMPTY_ROOT_HEX);
    for (let i = 0; i < 20; i++) {
      w.putStorage(addr, w.slot(), w.r.bytes(w.r.range(1, 32)));
      expect(hex(w.st.getAccount(unhex(addr))!.storageRoot)).toBe(await refStorageRoot(w.state.get(addr)!));
    }
    // Deleting every slot brings the storage root back to empty.
    for (const slot of [...w.state.get(addr)!.storage.keys()])
      w.putStorage(addr, unhex(slot), new Uint8Array(32));
    expect(hex(w.st.getAccount(unhex(addr))!.storageRoot)).toBe(EMPTY_ROOT_HEX);
    await w.check();
  });

  it('getAccountFieldsAtKey reads an account without computing the storage root its writes left stale', async () => {
    const w = new Workload(new Prng(1015));
    const addr = w.newAccount();
    const key = w.st.hashKey(unhex(addr));
    expect(w.st.storageRootStale(key)).toBe(false);
    w.putStorage(addr, w.slot(), Uint8Array.of(7));
    expect(w.st.storageRootStale(key)).toBe(true);
    const fields = w.st.getAccountFieldsAtKey(key)!;
    expect(hex(fields.storageRoot)).toBe(EMPTY_ROOT_HEX); // the root before the write
    expect(w.st.storageRootStale(key)).toBe(true);
    expect(fields.balance).toBe(w.st.getAccountAtKey(key)!.balance);
    expect(w.st.storageRootStale(key)).toBe(false); // getAccountAtKey computed it
    expect(hex(w.st.getAccountFieldsAtKey(key)!.storageRoot)).toBe(await refStorageRoot(w.state.get(addr)!));
    await w.check();
  });
  it('a new account takes the storageRoot it is given; its storage then reads through it', async () => {
    // Build a storage trie elsewhere, then create an account that points at it, with a resolver.
    const w = new Workload(new Prng(1020));
    const donor = w.newAccount();
    for (let i = 0; i < 10; i++) w.putStorage(donor, w.slot(), w.r.bytes(20));
    const donorAcc = w.st.getAccount(unhex(donor))!;
    const nodes = new Map<string, Uint8Array>();
    for (const slot of w.state.get(donor)!.storage.keys()) {
      for (const n of w.st.proveStorage(unhex(donor), unhex(slot))) nodes.set(hex(refKeccak(n)), n);
    }
    const st = new StateTree({ resolver: (h) => nodes.get(hex(h)) });
    const address = w.r.bytes(20);
    st.putAccount(address, makeAccount({ nonce: 5n, storageRoot: donorAcc.storageRoot }));
    expect(hex(st.getAccount(address)!.storageRoot)).toBe(hex(donorAcc.storageRoot));
    for (const [slot, v] of w.state.get(donor)!.storage)
      expect(st.getStorage(address, unhex(slot))).toEqual(v);
    const ref: RefState = new Map([
      [
        hex(address),
        { nonce: 5n, balance: 0n, codeHash: EMPTY_CODE_HASH, storage: new Map(w.state.get(donor)!.storage) },
      ],
    ]);
    expect(hex(st.root())).toBe(await refStateRoot(ref));
  });

  it('a state known by its root, faulting nodes in through a resolver, reads and writes like the full one', async () => {
    const w = new Workload(new Prng(1030));
    for (let i = 0; i < 30; i++) w.newAccount();
    for (const addr of [...w.state.keys()].slice(0, 10)) {
      for (let j = 0; j < 8; j++) w.putStorage(addr, w.slot(), w.r.bytes(w.r.range(1, 32)));
    }
    const nodes = new Map<string, Uint8Array>();
    for (const [addr, a] of w.state) {
      for (const n of w.st.proveAccount(unhex(addr))) nodes.set(hex(refKeccak(n)), n);
      for (const slot of a.storage.keys()) {
        for (const n of w.st.proveStorage(unhex(addr), unhex(slot))) nodes.set(hex(refKeccak(n)), n);
      }
    }
    const remote = StateTree.fromRootHash(w.st.root(), { resolver: (h) => nodes.get(hex(h)) });
    expect(hex(remote.root())).toBe(hex(w.st.root()));
    for (const addr of w.state.keys()) await expectAccount(remote, w.state, addr);
    // The same writes on both give the same root.
    const r = new Prng(1031);
    for (const addr of [...w.state.keys()].slice(0, 10)) {
      const slot = unhex(r.pick([...w.state.get(addr)!.storage.keys()]));
      const v = r.bytes(8);
      w.putStorage(addr, slot, v);
      remote.putStorage(unhex(addr), slot, v);
    }
    expect(hex(remote.root())).toBe(hex(w.st.root()));
    expect(hex(remote.root())).toBe(await refStateRoot(w.state));
  });

  it('snapshots are isolated: later writes (storage included) show in neither direction', async () => {
    const w = new Workload(new Prng(1040));
    for (let i = 0; i < 20; i++) w.newAccount();
    const addrs = [...w.state.keys()];
    for (const addr of addrs.slice(0, 8)) {
      for (let j = 0; j < 6; j++) w.putStorage(addr, w.slot(), w.r.bytes(w.r.range(1, 32)));
    }
    const snap = w.st.snapshot();
    const snapState: RefState = new Map(
      [...w.state].map(([k, a]) => [k, { ...a, storage: new Map(a.storage) }] as [string, RefAccount]),
    );
    const snapRoot = hex(snap.root());
    expect(snapRoot).toBe(await refStateRoot(snapState));

    // Live: storage of accounts the snapshot shares, a nonce, a deletion, new code.
    for (const addr of addrs.slice(0, 8)) {
      const slot = unhex(w.r.pick([...w.state.get(addr)!.storage.keys()]));
      w.putStorage(addr, slot, w.r.bytes(5));
      w.putStorage(addr, w.slot(), w.r.bytes(7));
    }
    w.st.deleteAccount(unhex(addrs[9]!));
    w.state.delete(addrs[9]!);
    w.st.clearStorage(unhex(addrs[1]!));
    w.state.get(addrs[1]!)!.storage.clear();
    const code = w.r.bytes(50);
    const codeHash = w.st.putCode(code);

    expect(hex(snap.root())).toBe(snapRoot);
    for (const addr of snapState.keys()) await expectAccount(snap, snapState, addr);
    expect(snap.getCode(codeHash)).toBeUndefined();
    expect(w.st.getCode(codeHash)).toEqual(code);
    await w.check();

    // And the snapshot's own writes stay in the snapshot.
    const liveRoot = hex(w.st.root());
    for (const addr of addrs.slice(0, 8)) {
      const slot = w.slot();
      const v = w.r.bytes(3);
      snap.putStorage(unhex(addr), slot, v);
      snapState.get(addr)!.storage.set(hex(slot), v);
    }
    expect(hex(snap.root())).toBe(await refStateRoot(snapState));
    expect(hex(w.st.root())).toBe(liveRoot);
    await w.check();

    // A snapshot of the snapshot.
    const snap2 = snap.snapshot();
    snap.deleteAccount(unhex(addrs[0]!));
    expect(hex(snap2.root())).toBe(await refStateRoot(snapState));
  });
});

describe('StateTree: bad input', () => {
  const st = new StateTree();
  const addr = new Uint8Array(20).fill(1);
  st.putAccount(addr, makeAccount({ nonce: 1n }));
  st.putStorage(addr, new Uint8Array(32), Uint8Array.of(1));
  const root = hex(st.root());

  it('addresses that are not 20 bytes, slots that are not 32: BadKey', () => {
    for (const len of [0, 19, 21, 32]) {
      const a = new Uint8Array(len).fill(1);
      const slot = new Uint8Array(32);
      expectDsmError(() => st.getAccount(a), DsmErrorCode.BadKey);
      expectDsmError(() => st.putAccount(a, makeAccount()), DsmErrorCode.BadKey);
      expectDsmError(() => st.deleteAccount(a), DsmErrorCode.BadKey);
      expectDsmError(() => st.clearStorage(a), DsmErrorCode.BadKey);
      expectDsmError(() => st.getStorage(a, slot), DsmErrorCode.BadKey);
      expectDsmError(() => st.putStorage(a, slot, Uint8Array.of(1)), DsmErrorCode.BadKey);
      expectDsmError(() => st.proveAccount(a), DsmErrorCode.BadKey);
      expectDsmError(() => st.proveStorage(a, slot), DsmErrorCode.BadKey);
    }
    for (const len of [0, 20, 31, 33]) {
      const slot = new Uint8Array(len);
      expectDsmError(() => st.getStorage(addr, slot), DsmErrorCode.BadKey);
      expectDsmError(() => st.putStorage(addr, slot, Uint8Array.of(1)), DsmErrorCode.BadKey);
      expectDsmError(() => st.proveStorage(addr, slot), DsmErrorCode.BadKey);
    }
    expectDsmError(() => st.getCode(new Uint8Array(31)), DsmErrorCode.BadKey);
    expect(hex(st.root())).toBe(root);
  });

  it('storage for a missing account: UnknownAccount, and nothing changes', () => {
    const missing = new Uint8Array(20).fill(2);
    expectDsmError(
      () => st.putStorage(missing, new Uint8Array(32), Uint8Array.of(1)),
      DsmErrorCode.UnknownAccount,
    );
    expect(st.getAccount(missing)).toBeUndefined();
    expect(hex(st.root())).toBe(root);
  });

  it('a storage value over 32 bytes: BadValue', () => {
    expectDsmError(
      () => st.putStorage(addr, new Uint8Array(32), new Uint8Array(33).fill(1)),
      DsmErrorCode.BadValue,
    );
    expect(st.getStorage(addr, new Uint8Array(32))).toEqual(Uint8Array.of(1));
    expect(hex(st.root())).toBe(root);
  });

  it('decodeAccount of garbage, truncated or malformed RLP: BadAccount', () => {
    const good: Account = makeAccount({ nonce: 7n, balance: 1n << 200n });
    const enc = encodeAccount(good);
    expect(decodeAccount(enc)).toEqual(good);
    expect(hex(enc)).toBe(hex(RLP.encode([minimal(7n), minimal(1n << 200n), EMPTY_ROOT, EMPTY_CODE_HASH])));
    const r = new Prng(1050);
    const bad: Uint8Array[] = [
      new Uint8Array(0),
      ...Array.from({ length: enc.length - 1 }, (_, i) => enc.subarray(0, i)),
      Uint8Array.of(...enc, 0),
      RLP.encode([minimal(7n), minimal(1n), EMPTY_ROOT]), // 3 fields
      RLP.encode([minimal(7n), minimal(1n), EMPTY_ROOT, EMPTY_CODE_HASH, new Uint8Array(0)]), // 5
      RLP.encode([minimal(7n), minimal(1n), EMPTY_ROOT.subarray(0, 31), EMPTY_CODE_HASH]),
      RLP.encode([minimal(7n), minimal(1n), EMPTY_ROOT, Uint8Array.of(...EMPTY_CODE_HASH, 0)]),
      RLP.encode([Uint8Array.of(0, 7), minimal(1n), EMPTY_ROOT, EMPTY_CODE_HASH]), // leading zero
      RLP.encode([[minimal(7n)], minimal(1n), EMPTY_ROOT, EMPTY_CODE_HASH]), // a list for a field
      RLP.encode(EMPTY_ROOT), // not a list
      RLP.encode([minimal(7n), new Uint8Array(33).fill(1), EMPTY_ROOT, EMPTY_CODE_HASH]), // balance > 2^256
      ...Array.from({ length: 50 }, () => r.bytes(r.range(1, 90))),
    ];
    for (const b of bad) expectDsmError(() => decodeAccount(b), DsmErrorCode.BadAccount);
  });

  it('encodeAccount at every scalar length (nonce 0-8 bytes, balance 0-32, each length at its bounds and a random value): what @ethereumjs/rlp writes', () => {
    const r = new Prng(1051);
    const values = (bytes: number): bigint[] => {
      const out: bigint[] = [];
      for (let n = 0; n <= bytes; n++) {
        const lo = n === 0 ? 0n : 1n << BigInt(8 * (n - 1));
        const hi = (1n << BigInt(8 * n)) - 1n;
        out.push(lo, hi, lo + (BigInt(`0x${hex(r.bytes(n)) || '0'}`) % (hi - lo + 1n)));
      }
      // Both sides of 2^53 (where the encoder stops using number arithmetic) and of 0x80.
      out.push((1n << 53n) - 1n, 1n << 53n, (1n << 53n) + 1n, 0x7fn, 0x80n);
      return out.filter((v) => v < 1n << BigInt(8 * bytes));
    };
    const roots = r.bytes(32);
    const code = r.bytes(32);
    for (const nonce of values(8))
      for (const balance of values(32)) {
        const a: Account = { nonce, balance, storageRoot: roots, codeHash: code };
        const enc = encodeAccount(a);
        expect(hex(enc)).toBe(hex(RLP.encode([minimal(nonce), minimal(balance), roots, code])));
        expect(decodeAccount(enc)).toEqual(a);
      }
  });

  it('decodeAccount: an account without storage or code shares the empty root and code hash; any other keeps its own', () => {
    const r = new Prng(1052);
    const other = r.bytes(32);
    const eoa = decodeAccount(
      encodeAccount({ nonce: 7n, balance: 10n ** 20n, storageRoot: EMPTY_ROOT, codeHash: EMPTY_CODE_HASH }),
    );
    expect(eoa.storageRoot).toBe(EMPTY_ROOT);
    expect(eoa.codeHash).toBe(EMPTY_CODE_HASH);
    expect(eoa.nonce).toBe(7n);
    expect(eoa.balance).toBe(10n ** 20n);
    // One of the two empty, or each equal to the other's constant: read as written, not shared.
    for (const [storageRoot, codeHash] of [
      [EMPTY_ROOT, other],
      [other, EMPTY_CODE_HASH],
      [EMPTY_CODE_HASH, EMPTY_ROOT],
      [other, other],
    ] as const) {
      const a = decodeAccount(encodeAccount({ nonce: 1n, balance: 2n, storageRoot, codeHash }));
      expect(hex(a.storageRoot)).toBe(hex(storageRoot));
      expect(hex(a.codeHash)).toBe(hex(codeHash));
      expect(a.storageRoot).not.toBe(EMPTY_ROOT);
      expect(a.codeHash).not.toBe(EMPTY_CODE_HASH);
    }
  });

  it('encodeAccount refuses values Ethereum cannot hold: BadAccount', () => {
    for (const a of [
      makeAccount({ balance: 1n << 256n }),
      makeAccount({ balance: -1n }),
      makeAccount({ nonce: 1n << 64n }),
      makeAccount({ nonce: -1n }),
      makeAccount({ storageRoot: new Uint8Array(31) }),
      makeAccount({ codeHash: new Uint8Array(33) }),
    ]) {
      expectDsmError(() => encodeAccount(a), DsmErrorCode.BadAccount);
      expectDsmError(() => st.putAccount(new Uint8Array(20).fill(3), a), DsmErrorCode.BadAccount);
    }
    expect(hex(st.root())).toBe(root);
  });
});
