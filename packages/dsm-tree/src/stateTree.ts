/**
 * The Ethereum state view over DSM-Trees: accounts by address (key keccak256(address)), one
 * storage trie per account (key keccak256(slot), value rlp(value without leading zeros)), code by
 * hash. `root()` is Ethereum's state root for the same accounts.
 *
 * An account's storageRoot always follows its storage trie: putStorage marks the account, and
 * the new root is written into it before any read of the account or of the state root. On
 * putAccount the storageRoot field is only taken for a new account with no storage trie loaded;
 * otherwise the account keeps the root of the storage it has.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { bytesEqual, bytesToHex, type RlpValue, rlpDecode, rlpEncode, toHex } from '@monsoon/util';
import { type Account, decodeAccount, EMPTY_CODE_HASH, encodeAccount } from './account.js';
import { type Bin, fromBin, toBin } from './bytes.js';
import { asTreeError, DsmError, DsmErrorCode } from './dsmError.js';
import {
  DsmTree,
  type DsmTreeOptions,
  EMPTY_ROOT,
  type EvictRule,
  type NodeListener,
  type NodeResolver,
  type VerifiedNodeSource,
} from './dsmTree.js';
import { hashOne } from './hashOne.js';

export interface StateTreeOptions {
  hash?: Keccak;
  /** Resolves stubs in the account trie and every storage trie (nodes are content-addressed). */
  resolver?: NodeResolver;
  /** Tried before `resolver`: nodes (and code) already checked against their hashes, used as they are. */
  source?: VerifiedNodeSource;
  /** Told of every node the account trie and the storage tries hash (see NodeListener). */
  onHashed?: NodeListener;
}

function checkLength(what: string, b: Uint8Array, n: number): void {
  if (!(b instanceof Uint8Array) || b.length !== n) {
    throw new DsmError(DsmErrorCode.BadKey, `${what} must be ${n} bytes, got ${b?.length}`, {
      what,
      length: b?.length,
    });
  }
}

export class StateTree {
  readonly accounts: DsmTree;
  private storage: Map<Bin, DsmTree>;
  /** Storage tries this state may write in place (not shared with a snapshot). */
  private owned = new Set<Bin>();
  /** Accounts whose storage trie changed since their storageRoot was last written. */
  private dirty = new Set<Bin>();
  private code: Map<Bin, Uint8Array>;
  private codeShared = false;
  private treeOpts: DsmTreeOptions;
  readonly keccak: Keccak;

  constructor(opts: StateTreeOptions = {}, accounts?: DsmTree) {
    this.keccak = opts.hash ?? defaultKeccak;
    this.treeOpts = {
      hash: this.keccak,
      ...(opts.resolver ? { resolver: opts.resolver } : {}),
      ...(opts.source ? { source: opts.source } : {}),
      ...(opts.onHashed ? { onHashed: opts.onHashed } : {}),
    };
    this.accounts = accounts ?? new DsmTree(this.treeOpts);
    this.storage = new Map();
    this.code = new Map();
  }

  /** A state known only by its root; accounts and storage fault in through `opts.resolver`. */
  static fromRootHash(root: Uint8Array, opts: StateTreeOptions = {}): StateTree {
    const s = new StateTree(opts);
    return new StateTree(opts, DsmTree.fromRootHash(root, s.treeOpts));
  }

  /** Where stubs are resolved from (content-addressed: code by hash comes from it too). */
  get resolver(): NodeResolver | undefined {
    return this.treeOpts.resolver;
  }

  /** The verified source tried before the resolver (nodes and code by hash), if any. */
  get source(): VerifiedNodeSource | undefined {
    return this.treeOpts.source;
  }

  /** keccak256 of an address or slot: the trie key. */
  hashKey(b: Uint8Array): Uint8Array {
    return hashOne(this.keccak, b);
  }

  // ------------------------------------------------------------ accounts

  getAccount(address: Uint8Array): Account | undefined {
    checkLength('address', address, 20);
    return this.getAccountAtKey(this.hashKey(address));
  }

  /**
   * The account whose trie key (keccak256 of its address) is `key`: getAccount for callers
   * that hashed the address already (they keep keys; hashing is most of a cached read).
   */
  getAccountAtKey(key: Uint8Array): Account | undefined {
    checkLength('account key', key, 32);
    const hb = toBin(key);
    if (this.dirty.has(hb)) this.flushStorageRoot(hb, key);
    const enc = this.accounts.get(key);
    return enc === undefined ? undefined : decodeAccount(enc);
  }

  /**
   * getAccountAtKey that leaves a storage root this tree's writes made stale as it is (the
   * account's `storageRoot` is then the old one: see storageRootStale): a reader that rarely
   * needs the root (an executor) need not hash a storage trie to learn a balance. A state built
   * by writes (a genesis) has every root stale until asked.
   */
  getAccountFieldsAtKey(key: Uint8Array): Account | undefined {
    checkLength('account key', key, 32);
    const enc = this.accounts.get(key);
    return enc === undefined ? undefined : decodeAccount(enc);
  }

  /** Whether the account's storage root in the tree awaits its storage trie's (see getAccountFieldsAtKey). */
  storageRootStale(key: Uint8Array): boolean {
    return this.dirty.has(toBin(key));
  }

  putAccount(address: Uint8Array, account: Account): void {
    checkLength('address', address, 20);
    this.putAccountAtKey(this.hashKey(address), account);
  }

  /**
   * putAccount by trie key (see getAccountAtKey). With `rootIsCurrent`, `account.storageRoot`
   * is taken as the root the tree has for the account (the caller read it from this tree, or
   * EMPTY_ROOT for an account that does not exist), which saves reading the account again; a
   * wrong one corrupts the state. A storage trie the tree holds still wins either way.
   */
  putAccountAtKey(key: Uint8Array, account: Account, rootIsCurrent = false): void {
    checkLength('account key', key, 32);
    const hb = toBin(key);
    let storageRoot = account.storageRoot;
    if (this.storage.has(hb)) {
      this.dirty.add(hb); // the trie's root replaces whatever was given, before the next read
    } else if (!rootIsCurrent) {
      const cur = this.accounts.get(key);
      if (cur !== undefined) storageRoot = decodeAccount(cur).storageRoot;
    }
    this.accounts.put(key, encodeAccount({ ...account, storageRoot }));
  }

  /**
   * The account at `key` given a new nonce and balance, and a new code hash when `codeHash` is
   * given, keeping the rest of what the tree holds for it (its code hash, its storage root as
   * the tree has it: a storage trie the state holds replaces it before the next read), or a new
   * account with empty storage (and empty code unless given): the same as reading the account
   * with getAccountFieldsAtKey and writing it back with putAccountAtKey(…, true), in one walk and
   * without decoding it. A stored account that is not valid RLP throws BadAccount, as that read would.
   */
  putAccountFieldsAtKey(
    key: Uint8Array,
    nonce: bigint,
    balance: bigint,
    codeHash: Uint8Array | undefined,
  ): void {
    checkLength('account key', key, 32);
    if (codeHash !== undefined) checkLength('code hash', codeHash, 32);
    // A storage trie's root is in the account unless the trie is marked dirty (then it replaces
    // the root before the next read, as it would have anyway): the root kept is never staler.
    this.accounts.putWith(key, (old) => accountWithFields(old, nonce, balance, codeHash));
  }

  /** Removes the account and all its storage. */
  deleteAccount(address: Uint8Array): void {
    checkLength('address', address, 20);
    this.deleteAccountAtKey(this.hashKey(address));
  }

  /** deleteAccount by trie key (see getAccountAtKey). */
  deleteAccountAtKey(key: Uint8Array): void {
    checkLength('account key', key, 32);
    const hb = toBin(key);
    this.accounts.del(key);
    this.storage.delete(hb);
    this.owned.delete(hb);
    this.dirty.delete(hb);
  }

  // ------------------------------------------------------------ storage

  /** The slot's value (no leading zeros), or undefined when unset or the account is absent. */
  getStorage(address: Uint8Array, slot: Uint8Array): Uint8Array | undefined {
    checkLength('address', address, 20);
    checkLength('storage slot', slot, 32);
    return this.getStorageAtKey(this.hashKey(address), this.hashKey(slot));
  }

  /** getStorage by trie keys: keccak256 of the address and of the slot (see getAccountAtKey). */
  getStorageAtKey(key: Uint8Array, slotKey: Uint8Array): Uint8Array | undefined {
    checkLength('account key', key, 32);
    checkLength('slot key', slotKey, 32);
    const t = this.storageTrieOfKey(key, false, undefined);
    const v = t?.get(slotKey);
    if (v === undefined) return undefined;
    let d: RlpValue;
    try {
      d = rlpDecode(v);
    } catch (e) {
      throw asTreeError(e);
    }
    if (!(d instanceof Uint8Array))
      throw new DsmError(DsmErrorCode.BadValue, 'storage value is not an RLP string');
    return d;
  }

  /** Sets a slot; a value that is empty or all zeros deletes it. The account must exist. */
  putStorage(address: Uint8Array, slot: Uint8Array, value: Uint8Array): void {
    checkLength('address', address, 20);
    checkLength('storage slot', slot, 32);
    this.putStorageAt(this.hashKey(address), this.hashKey(slot), value, address);
  }

  /** putStorage by trie keys (see getStorageAtKey). */
  putStorageAtKey(key: Uint8Array, slotKey: Uint8Array, value: Uint8Array): void {
    checkLength('account key', key, 32);
    checkLength('slot key', slotKey, 32);
    this.putStorageAt(key, slotKey, value, undefined);
  }

  private putStorageAt(
    key: Uint8Array,
    slotKey: Uint8Array,
    value: Uint8Array,
    address: Uint8Array | undefined,
  ): void {
    if (value.length > 32)
      throw new DsmError(DsmErrorCode.BadValue, `storage value over 32 bytes (${value.length})`);
    const t = this.storageTrieOfKey(key, true, address)!;
    let i = 0;
    while (i < value.length && value[i] === 0) i++;
    if (i === value.length) t.del(slotKey);
    else t.put(slotKey, rlpEncode(value.subarray(i)));
  }

  /**
   * Faults in whatever deleteAccountAtKey(key) will need, changing no content; throws
   * MissingNode where it would (see DsmTree.prepareDelete).
   */
  prepareDeleteAccountAtKey(key: Uint8Array): void {
    checkLength('account key', key, 32);
    this.accounts.prepareDelete(key);
  }

  /** Faults in whatever zeroing a slot (putStorageAtKey with 0) will need, changing no content. */
  prepareDeleteStorageAtKey(key: Uint8Array, slotKey: Uint8Array): void {
    checkLength('account key', key, 32);
    checkLength('slot key', slotKey, 32);
    this.storageTrieOfKey(key, false, undefined)?.prepareDelete(slotKey);
  }

  /** Removes all storage of an account (it keeps nonce, balance and code). */
  clearStorage(address: Uint8Array): void {
    checkLength('address', address, 20);
    this.clearStorageAtKey(this.hashKey(address));
  }

  /** clearStorage by trie key (see getAccountAtKey). */
  clearStorageAtKey(key: Uint8Array): void {
    checkLength('account key', key, 32);
    const hb = toBin(key);
    if (this.accounts.get(key) === undefined) return;
    this.storage.set(hb, new DsmTree(this.treeOpts));
    this.owned.add(hb);
    this.dirty.add(hb);
  }

  /**
   * The account's storage trie. With `forWrite`, one this state owns (a snapshot's is copied
   * first) and the account is marked for a storageRoot update; throws UnknownAccount when the
   * account does not exist.
   */
  storageTrie(address: Uint8Array, forWrite: boolean): DsmTree | undefined {
    return this.storageTrieOfKey(this.hashKey(address), forWrite, address);
  }

  /** The storage trie of the account with hashed key `key`, for reading; undefined if no account. */
  storageTrieAt(key: Uint8Array): DsmTree | undefined {
    return this.storageTrieOfKey(key, false, undefined);
  }

  private storageTrieOfKey(
    h: Uint8Array,
    forWrite: boolean,
    address: Uint8Array | undefined,
  ): DsmTree | undefined {
    const hb = toBin(h);
    let t = this.storage.get(hb);
    if (t === undefined) {
      const enc = this.accounts.get(h);
      if (enc === undefined) {
        if (!forWrite) return undefined;
        throw new DsmError(
          DsmErrorCode.UnknownAccount,
          `no account ${address === undefined ? 'with key ' : ''}${bytesToHex(address ?? h)}`,
          { key: toHex(h) },
        );
      }
      t = DsmTree.fromRootHash(decodeAccount(enc).storageRoot, this.treeOpts);
      this.storage.set(hb, t);
      this.owned.add(hb);
    }
    if (forWrite) {
      if (!this.owned.has(hb)) {
        t = t.snapshot();
        this.storage.set(hb, t);
        this.owned.add(hb);
      }
      this.dirty.add(hb);
    }
    return t;
  }

  private flushStorageRoot(hb: Bin, h: Uint8Array): void {
    this.dirty.delete(hb);
    const t = this.storage.get(hb);
    const enc = this.accounts.get(h);
    if (t === undefined || enc === undefined) return;
    const a = decodeAccount(enc);
    const r = t.root();
    if (!bytesEqual(r, a.storageRoot)) this.accounts.put(h, encodeAccount({ ...a, storageRoot: r }));
  }

  // ------------------------------------------------------------ code

  /** Stores code; returns its hash. */
  putCode(code: Uint8Array): Uint8Array {
    const h = this.keccak.keccak256(code);
    if (code.length === 0) return h;
    if (this.codeShared) {
      this.code = new Map(this.code);
      this.codeShared = false;
    }
    this.code.set(toBin(h), code.slice());
    return h;
  }

  /** Tells `visit` of every code blob this state holds: its keccak256 (binary string) and bytes. */
  forEachCode(visit: (hash: string, code: Uint8Array) => void): void {
    for (const [h, c] of this.code) visit(h, c);
  }

  /** Code by hash; the empty code hash gives empty code. */
  getCode(codeHash: Uint8Array): Uint8Array | undefined {
    checkLength('code hash', codeHash, 32);
    if (bytesEqual(codeHash, EMPTY_CODE_HASH)) return new Uint8Array(0);
    const c = this.code.get(toBin(codeHash));
    return c === undefined ? undefined : c.slice();
  }

  // ------------------------------------------------------------ roots, proofs, versions

  /**
   * Ethereum's state root. `onHashed` is told of every node this commit hashes (besides the
   * trees' own listener): the nodes on the paths written since the last root, which a miner
   * keeps as they are instead of proving those paths again.
   */
  root(onHashed?: NodeListener): Uint8Array {
    return fromBin(this.rootBin(onHashed));
  }

  rootBin(onHashed?: NodeListener): Bin {
    for (const hb of [...this.dirty]) {
      const t = onHashed === undefined ? undefined : this.storage.get(hb);
      if (t === undefined) this.flushStorageRoot(hb, fromBin(hb));
      else telling(t, onHashed!, () => this.flushStorageRoot(hb, fromBin(hb)));
    }
    return onHashed === undefined
      ? this.accounts.rootBin()
      : telling(this.accounts, onHashed, () => this.accounts.rootBin());
  }

  /** Proof of an account (eth_getProof accountProof). */
  proveAccount(address: Uint8Array, omitLevels = 0): Uint8Array[] {
    checkLength('address', address, 20);
    this.rootBin();
    return this.accounts.prove(this.hashKey(address), omitLevels);
  }

  /** The union of the proofs of these accounts, each node once (a node bag). */
  proveAccounts(addresses: readonly Uint8Array[], omitLevels = 0): Uint8Array[] {
    for (const a of addresses) checkLength('address', a, 20);
    this.rootBin();
    return this.accounts.proveMany(
      addresses.map((a) => this.hashKey(a)),
      omitLevels,
    );
  }

  /** The union of the proofs of these slots of one account's storage trie. */
  proveStorageMany(address: Uint8Array, slots: readonly Uint8Array[]): Uint8Array[] {
    checkLength('address', address, 20);
    for (const s of slots) checkLength('storage slot', s, 32);
    const t = this.storageTrie(address, false);
    if (t === undefined) return [];
    return t.proveMany(slots.map((s) => this.hashKey(s)));
  }

  /** Proof of a slot in an account's storage trie (eth_getProof storageProof). */
  proveStorage(address: Uint8Array, slot: Uint8Array, omitLevels = 0): Uint8Array[] {
    checkLength('address', address, 20);
    checkLength('storage slot', slot, 32);
    const t = this.storageTrie(address, false);
    if (t === undefined) return [];
    return t.prove(this.hashKey(slot), omitLevels);
  }

  /**
   * What a checkpoint needs besides the account trie: every storage trie held (by account
   * key, keccak256(address)) and every code. Storage roots are written into their accounts first.
   */
  exportParts(): { storage: [Uint8Array, DsmTree][]; code: Uint8Array[] } {
    this.rootBin();
    return {
      storage: [...this.storage].map(([k, t]) => [fromBin(k), t] as [Uint8Array, DsmTree]),
      code: [...this.code.values()],
    };
  }

  /**
   * From now on, `onHashed` is told of every node this state and the snapshots taken from it
   * hash (see NodeListener): how a node store attached to a state built elsewhere (genesis, a
   * checkpoint) follows it. Storage tries already loaded are shared with older versions, which
   * are clean: they commit nothing more, so telling the same listener there changes nothing.
   */
  listen(onHashed: NodeListener | undefined): void {
    const { onHashed: _, ...rest } = this.treeOpts;
    this.treeOpts = onHashed === undefined ? rest : { ...rest, onHashed };
    this.accounts.onHashed = onHashed;
    for (const t of this.storage.values()) t.onHashed = onHashed;
  }

  /**
   * From now on, stubs in this state and the snapshots taken from it fault in from `source`
   * (see VerifiedNodeSource): how a tiered node store becomes the backing of a state built
   * elsewhere (genesis, a checkpoint). Storage tries already loaded get it too.
   */
  useSource(source: VerifiedNodeSource | undefined): void {
    const { source: _, ...rest } = this.treeOpts;
    this.treeOpts = source === undefined ? rest : { ...rest, source };
    this.accounts.source = source;
    for (const t of this.storage.values()) t.source = source;
  }

  /**
   * How many trie nodes this state holds in memory (stubs not counted): the account trie's and
   * each loaded storage trie's, each node once per `seen` (shared across versions, as above).
   * A walk of the resident nodes, no hashing: what a memory budget is accounted by.
   */
  residentNodes(seen: Set<object> = new Set()): number {
    return this.overTries(seen, (t) => t.residentNodes(seen));
  }

  /** `f` summed over the account trie and each loaded storage trie `seen` does not hold yet (adding it). */
  private overTries(seen: Set<object>, f: (t: DsmTree, isAccounts: boolean) => number): number {
    let n = f(this.accounts, true);
    for (const t of this.storage.values()) {
      if (seen.has(t)) continue;
      seen.add(t);
      n += f(t, false);
    }
    return n;
  }

  /**
   * One CLOCK pass over this state's resident nodes (see DsmTree.evictCold): the account trie's
   * below its top `keep` levels, and every loaded storage trie's, its root included. Returns the
   * bytes left resident that `seen` had not counted (shared nodes and storage tries once).
   */
  evictCold(keep: number, seen: Set<object>, rule: EvictRule): number {
    return this.overTries(seen, (t, isAccounts) => t.evictCold(isAccounts ? keep : 0, seen, rule));
  }

  /**
   * evictCold a part at a time (see DsmTree.evictColdPart): the account trie's part `part`; the
   * storage tries go whole with the first part (its nibbles all zero).
   */
  evictColdPart(part: readonly number[], keep: number, seen: Set<object>, rule: EvictRule): number {
    if (part.some((x) => x !== 0)) return this.accounts.evictColdPart(part, keep, seen, rule);
    return this.overTries(seen, (t, isAccounts) =>
      isAccounts ? t.evictColdPart(part, keep, seen, rule) : t.evictCold(0, seen, rule),
    );
  }

  /** The bytes of the trie nodes this state holds in memory (as residentNodes counts them). */
  residentBytes(seen: Set<object> = new Set()): number {
    return this.overTries(seen, (t) => t.residentBytes(seen));
  }

  /**
   * Every hashed node this state holds in memory: the account trie's and each loaded storage
   * trie's (see DsmTree.forEachNode), each node once per `seen` (share one Set across the
   * versions of a sweep: they share most nodes and storage tries).
   */
  forEachNode(visit: NodeListener, seen: Set<object> = new Set()): void {
    this.rootBin();
    this.accounts.forEachNode(visit, seen);
    for (const t of this.storage.values()) {
      if (seen.has(t)) continue;
      seen.add(t);
      t.forEachNode(visit, seen);
    }
  }

  /** A state from an account trie and the parts exportParts() gave. */
  static restore(
    accounts: DsmTree,
    parts: { storage: readonly (readonly [Uint8Array, DsmTree])[]; code: readonly Uint8Array[] },
    opts: StateTreeOptions = {},
  ): StateTree {
    const s = new StateTree(opts, accounts);
    for (const [k, t] of parts.storage) s.storage.set(toBin(k), t);
    for (const c of parts.code) s.putCode(c);
    return s;
  }

  /**
   * A miner's top layer (DESIGN §3.6): keeps the account trie's top `r` levels (deeper nodes
   * become hash stubs) and forgets every storage trie; all of it faults back in through the
   * resolver, checked by hash. Code is kept (it is small and shared by many accounts).
   */
  prune(r: number): void {
    this.rootBin();
    this.accounts.prune(r);
    this.storage = new Map();
    this.owned = new Set();
    this.dirty = new Set();
  }

  /** A copy that shares all structure; O(storage tries) map copies, no trie is copied. */
  snapshot(): StateTree {
    this.rootBin();
    const s = new StateTree(this.treeOpts, this.accounts.snapshot());
    s.storage = new Map(this.storage);
    s.code = this.code;
    s.codeShared = true;
    this.codeShared = true;
    this.owned = new Set();
    return s;
  }
}

/** Runs `f` with `t` telling `onHashed` too of what it hashes. */
function telling<T>(t: DsmTree, onHashed: NodeListener, f: () => T): T {
  const own = t.onHashed;
  t.onHashed =
    own === undefined
      ? onHashed
      : (h, enc) => {
          own(h, enc);
          onHashed(h, enc);
        };
  try {
    return f();
  } finally {
    t.onHashed = own;
  }
}

/**
 * The encoding (a binary string) of the account `old` encodes (none: a new one) with `nonce`,
 * `balance`, and `codeHash` when given: the storage root and, unless given, the code hash are
 * copied from `old`'s last 65 bytes. An `old` in another shape than encodeAccount's goes through
 * decodeAccount (which throws BadAccount for what is no account).
 */
function accountWithFields(
  old: Bin | undefined,
  nonce: bigint,
  balance: bigint,
  codeHash: Uint8Array | undefined,
): Bin {
  if (old !== undefined && !usualAccount(old)) {
    const a = decodeAccount(fromBin(old));
    return toBin(
      encodeAccount({ nonce, balance, storageRoot: a.storageRoot, codeHash: codeHash ?? a.codeHash }),
    );
  }
  // The scalars written by encodeAccount (which checks their ranges), the two hashes placed after.
  const out = encodeAccount({
    nonce,
    balance,
    storageRoot: EMPTY_ROOT,
    codeHash: codeHash ?? EMPTY_CODE_HASH,
  });
  if (old !== undefined) {
    const at = out.length - 65; // the storage root's first byte; the code hash starts 33 later
    const from = old.length - 65;
    for (let i = 0; i < 32; i++) out[at + i] = old.charCodeAt(from + i);
    if (codeHash === undefined) for (let i = 33; i < 65; i++) out[at + i] = old.charCodeAt(from + i);
  }
  return toBin(out);
}

/**
 * Whether `enc` is an account encoding as encodeAccount writes it (0xf8, its length, a nonce and
 * a balance minimal and at most 32 bytes, then 0xa0 and 32 bytes twice): what decodeAccount reads
 * on its fast path, checked without decoding the scalars.
 */
function usualAccount(enc: Bin): boolean {
  const len = enc.length;
  if (len < 68 || enc.charCodeAt(0) !== 0xf8 || enc.charCodeAt(1) !== len - 2) return false;
  const afterNonce = scalarEnd(enc, 2);
  if (afterNonce < 0) return false;
  return (
    scalarEnd(enc, afterNonce) === len - 66 &&
    enc.charCodeAt(len - 66) === 0xa0 &&
    enc.charCodeAt(len - 33) === 0xa0
  );
}

/** Where the canonical RLP scalar (no leading zero, at most 32 bytes) at `pos` ends; −1 if it is not one. */
function scalarEnd(enc: Bin, pos: number): number {
  if (pos >= enc.length) return -1;
  const x = enc.charCodeAt(pos);
  if (x < 0x80) return x === 0 ? -1 : pos + 1;
  const n = x - 0x80;
  if (n > 32) return -1;
  if (n === 0) return pos + 1;
  const first = enc.charCodeAt(pos + 1);
  if (first === 0 || (n === 1 && first < 0x80)) return -1;
  return pos + 1 + n;
}
