/**
 * DsmTree.putWith (one walk: the new value made from the old) held to put(key, make(get(key)))
 * on a twin tree, and StateTree.putAccountFieldsAtKey held to the read-then-write it replaces
 * (getAccountFieldsAtKey, then putAccountAtKey with the root read): same roots, same values,
 * byte for byte, over prefix keys (values in branches), splits of leaves and extensions,
 * snapshots, stubs faulted in through a resolver, and accounts with storage tries, code and
 * scalars at their limits.
 */
import { describe, expect, it } from '@jest/globals';
import {
  type Account,
  DsmError,
  DsmErrorCode,
  DsmTree,
  EMPTY_CODE_HASH,
  EMPTY_ROOT,
  encodeAccount,
  makeAccount,
  StateTree,
} from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { Prng } from '@monsoon/test-utils';
import { key32, shortKey, value } from './helpers/keys.js';
import { hex } from './helpers/reference.js';

const bin = (b: Uint8Array): string => Buffer.from(b).toString('latin1');
const bytes = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'latin1'));

/** A new value from the old: sometimes the old one itself (a no-op write), else derived from it. */
function maker(r: Prng): (old: string | undefined) => string {
  const kind = r.int(4);
  return (old) => {
    if (old !== undefined && kind === 0) return old;
    return `${old === undefined ? 'new' : old.slice(0, 5)}${bin(value(r, 1, 40))}`;
  };
}

/** Both trees' nodes, by hash (what a resolver serves), collected from committed trees. */
function resolverOf(trees: DsmTree[]): (h: Uint8Array) => Uint8Array | undefined {
  const nodes = new Map<string, Uint8Array>();
  for (const t of trees) t.forEachNode((h, enc) => nodes.set(h, bytes(enc)));
  return (h) => nodes.get(bin(h));
}

describe('DsmTree.putWith', () => {
  it.each([
    ['short keys (values in branches)', 1],
    ['32-byte keys, neighbours', 2],
    ['stubs faulted in', 3],
  ])('equals put(key, make(get(key))): %s', (name, seed) => {
    const r = new Prng(900 + seed);
    let a = new DsmTree();
    let b = new DsmTree();
    const keys: Uint8Array[] = [];
    const newKey = () => (seed === 1 ? shortKey(r, 3) : key32(r, keys.length > 0 ? r.pick(keys) : undefined));
    for (let i = 0; i < 40; i++) {
      const k = newKey();
      keys.push(k);
      const v = value(r, 1, 40);
      a.put(k, v);
      b.put(k, v);
    }
    if (name === 'stubs faulted in') {
      const resolver = resolverOf([a]);
      a = DsmTree.fromRootHash(a.root(), { resolver });
      b = DsmTree.fromRootHash(b.root(), { resolver });
    }
    let calls = 0;
    for (let i = 0; i < 400; i++) {
      if (r.chance(0.05)) {
        // Snapshots: the trees go on from copies, the old versions must not change.
        const ra = hex(a.root());
        const oldA = a;
        a = a.snapshot();
        b = b.snapshot();
        a.put(keys[0]!, Uint8Array.of(7));
        b.put(keys[0]!, Uint8Array.of(7));
        expect(hex(oldA.root())).toBe(ra);
      }
      const k = r.chance(0.3) ? newKey() : r.pick(keys);
      keys.push(k);
      const make = maker(r);
      const seenOld: (string | undefined)[] = [];
      a.putWith(k, (old) => {
        calls++;
        seenOld.push(old);
        return make(old);
      });
      const before = b.get(k);
      expect(seenOld).toEqual([before === undefined ? undefined : bin(before)]);
      // The same maker's second answer would differ (fresh random bytes): give b the one a got.
      b.put(k, a.get(k)!);
      if (r.chance(0.2)) expect(hex(a.root())).toBe(hex(b.root()));
    }
    expect(calls).toBe(400);
    expect(hex(a.root())).toBe(hex(b.root()));
    for (const k of keys) expect(a.get(k)).toEqual(b.get(k));
  });

  it('a maker that throws leaves the tree as it was', () => {
    const r = new Prng(990);
    const t = new DsmTree();
    const keys = Array.from({ length: 30 }, () => shortKey(r, 3));
    for (const k of keys) t.put(k, value(r, 1, 40));
    const root = hex(t.root());
    for (const k of [...keys, ...Array.from({ length: 30 }, () => shortKey(r, 4))]) {
      expect(() =>
        t.putWith(k, () => {
          throw new Error('no');
        }),
      ).toThrow('no');
      expect(hex(t.root())).toBe(root);
    }
  });
});

/** The read-then-write putAccountFieldsAtKey replaces. */
function twoWalks(st: StateTree, key: Uint8Array, nonce: bigint, balance: bigint, code?: Uint8Array): void {
  const cur = st.getAccountFieldsAtKey(key);
  st.putAccountAtKey(
    key,
    makeAccount({
      nonce,
      balance,
      codeHash: code ?? cur?.codeHash ?? EMPTY_CODE_HASH,
      storageRoot: cur?.storageRoot ?? EMPTY_ROOT,
    }),
    true,
  );
}

const MAX64 = (1n << 64n) - 1n;
const MAX256 = (1n << 256n) - 1n;

function scalar(r: Prng, max: bigint): bigint {
  switch (r.int(5)) {
    case 0:
      return 0n;
    case 1:
      return BigInt(r.int(0x80));
    case 2:
      return max;
    case 3:
      return BigInt(r.u32()) * BigInt(r.u32());
    default:
      return BigInt(`0x${hex(r.bytes(r.range(1, 32)))}`) & max;
  }
}

describe('StateTree.putAccountFieldsAtKey', () => {
  it('equals the read-then-write: roots and accounts, with storage tries, code and limit scalars', () => {
    const r = new Prng(995);
    let a = new StateTree();
    let b = new StateTree();
    const keys: Uint8Array[] = [];
    const codes = Array.from({ length: 4 }, () => r.bytes(r.range(1, 50)));
    // Accounts whose storage root and code hash only the account trie holds (as in a state
    // restored from a checkpoint, its storage tries not loaded): their bytes must carry over.
    const bare = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const key = r.bytes(32);
      const enc = encodeAccount({ nonce: 1n, balance: 2n, storageRoot: r.bytes(32), codeHash: r.bytes(32) });
      a.accounts.put(key, enc);
      b.accounts.put(key, enc);
      bare.add(hex(key));
      keys.push(key);
    }
    let storageWrites = 0;
    for (let i = 0; i < 400; i++) {
      if (r.chance(0.05)) {
        a.root();
        a = a.snapshot();
        b = b.snapshot();
      }
      const key = r.chance(0.7) ? r.pick(keys) : r.bytes(32);
      keys.push(key);
      const nonce = scalar(r, MAX64);
      const balance = scalar(r, MAX256);
      const code = r.chance(0.2) ? r.pick(codes) : undefined;
      const codeHash = code === undefined ? undefined : a.putCode(code);
      if (code !== undefined) b.putCode(code);
      a.putAccountFieldsAtKey(key, nonce, balance, codeHash);
      twoWalks(b, key, nonce, balance, code === undefined ? undefined : keccak.keccak256(code));
      // Storage written now and then: the account's storage root is then stale until read.
      if (!bare.has(hex(key)) && r.chance(0.3)) {
        const slot = r.bytes(32);
        const v = r.chance(0.2) ? new Uint8Array(0) : value(r, 1, 32);
        a.putStorageAtKey(key, slot, v);
        b.putStorageAtKey(key, slot, v);
        storageWrites++;
      }
      if (r.chance(0.1)) expect(hex(a.root())).toBe(hex(b.root()));
    }
    expect(hex(a.root())).toBe(hex(b.root()));
    const fields = (x: Account | undefined) => x && [x.nonce, x.balance, hex(x.storageRoot), hex(x.codeHash)];
    let withCode = 0;
    for (const k of keys) {
      expect(hex(a.accounts.get(k)!)).toBe(hex(b.accounts.get(k)!));
      if (bare.has(hex(k))) continue; // their storage roots name no nodes
      const got = a.getAccountAtKey(k);
      expect(fields(got)).toEqual(fields(b.getAccountAtKey(k)));
      if (hex(got!.codeHash) !== hex(EMPTY_CODE_HASH)) withCode++;
    }
    expect(storageWrites).toBeGreaterThan(50);
    expect(withCode).toBeGreaterThan(0);
  });

  it('refuses what encodeAccount refuses, and a stored value that is no account, as the two walks do', () => {
    const key = new Uint8Array(32).fill(3);
    const outcome = (f: () => void) => {
      try {
        f();
      } catch (e) {
        return e instanceof DsmError ? e.code : String(e);
      }
      return 'written';
    };
    const hashes = Buffer.concat([Buffer.of(0xa0), EMPTY_ROOT, Buffer.of(0xa0), EMPTY_CODE_HASH]);
    const stored = (head: number[]) => Uint8Array.from(Buffer.concat([Buffer.from(head), hashes]));
    const cases: [string, bigint, bigint, Uint8Array | undefined, string][] = [
      ['nonce 2^64', MAX64 + 1n, 5n, undefined, DsmErrorCode.BadAccount],
      ['balance 2^256', 1n, MAX256 + 1n, undefined, DsmErrorCode.BadAccount],
      ['a list stored', 1n, 5n, Uint8Array.of(0xc1, 0x80), DsmErrorCode.BadAccount],
      ['70 bytes of 0xa0 stored', 1n, 5n, new Uint8Array(70).fill(0xa0), DsmErrorCode.BadAccount],
      ['a nonce 0x00 stored', 1n, 5n, stored([0xf8, 68, 0x00, 0x80]), DsmErrorCode.BadAccount],
      ['a nonce 0x81 0x05 stored', 1n, 5n, stored([0xf8, 69, 0x81, 0x05, 0x80]), DsmErrorCode.BadAccount],
      ['an account stored', 1n, 5n, stored([0xf8, 68, 0x05, 0x80]), 'written'],
    ];
    for (const [name, nonce, balance, old, want] of cases) {
      const a = new StateTree();
      const b = new StateTree();
      if (old !== undefined) {
        a.accounts.put(key, old);
        b.accounts.put(key, old);
      }
      const ea = outcome(() => a.putAccountFieldsAtKey(key, nonce, balance, undefined));
      const eb = outcome(() => twoWalks(b, key, nonce, balance));
      expect({ name, e: ea }).toEqual({ name, e: eb });
      expect({ name, e: ea }).toEqual({ name, e: want });
      expect(hex(a.root())).toBe(hex(b.root()));
    }
  });
});
