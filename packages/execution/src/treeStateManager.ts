/**
 * The EVM's view of a StateTree (DESIGN §5): ethereumjs' StateManagerInterface over a partial
 * tree whose missing nodes come from its resolver (a miner: the transaction's bag; a client:
 * what it has fetched so far). Writes go to journal layers (one per EVM checkpoint) and reach
 * the tree only when the caller `flush()`es a finished transaction, so a transaction that fails
 * half-way — a revert, or a node that is nowhere — leaves the tree as it was.
 *
 * Under the journal layers sits a cache of what was read from the tree or flushed to it:
 * accounts (with their trie keys), storage slots, code by hash, keccak256 of slots. The tree
 * changes only through flush(), which updates the cache too, so the cache never disagrees
 * with the tree; it saves hashing keys and walking and decoding the trie again for accounts a
 * block touches over and over (the coinbase on every transaction; a token contract on every
 * call). An account's storage root is computed only when asked for (a CREATE's collision
 * check): a contract whose storage a transaction wrote would otherwise re-hash its storage
 * trie on the next transaction's first read.
 *
 * A read that needs a node neither in memory nor from the resolver throws an ExecutionError
 * MISSING_NODE naming the account (and slot) it was for: the EVM does not treat it as an
 * exceptional halt of the contract but aborts the whole transaction, which is what a miner
 * must do (it never reads over the network on the critical path).
 */
import type { StateManagerInterface } from '@ethereumjs/common';
import { Account, type Address, bytesToHex } from '@ethereumjs/util';
import {
  bytesEqual,
  DsmError,
  DsmErrorCode,
  EMPTY_CODE_HASH,
  EMPTY_ROOT,
  type StateTree,
  withoutStack,
} from '@monsoon/dsm-tree';
import { ExecutionError, ExecutionErrorCode } from './executionError.js';

/**
 * Writes to accounts, storage and code: one per journal layer (what a checkpoint's span of
 * execution wrote), and the same shape folds a transaction's into its block's.
 */
export class WriteSet {
  /** By address (latin1); null = deleted. */
  readonly accounts = new Map<string, Account | null>();
  /** Addresses whose storage was wiped in this layer (before its own writes). */
  readonly cleared = new Set<string>();
  readonly storage = new Map<string, Map<string, Uint8Array>>();
  /** Code put, by address. */
  readonly code = new Map<string, Uint8Array>();

  slots(a: string): Map<string, Uint8Array> {
    let m = this.storage.get(a);
    if (m === undefined) {
      m = new Map();
      this.storage.set(a, m);
    }
    return m;
  }

  /**
   * Folds `top` (a later layer) into this one. An account `top` deletes loses the code and
   * slots written before (a block that destroys a contract and then sends value to its address
   * must not hand the old code on with the new account).
   */
  absorb(top: WriteSet): void {
    for (const [a, acct] of top.accounts) {
      this.accounts.set(a, acct);
      if (acct === null) this.code.delete(a);
    }
    for (const a of top.cleared) {
      this.cleared.add(a);
      this.storage.delete(a);
    }
    for (const [a, m] of top.storage) {
      const mine = this.slots(a);
      for (const [k, v] of m) mine.set(k, v);
    }
    for (const [a, c] of top.code) this.code.set(a, c);
  }

  get empty(): boolean {
    return (
      this.accounts.size === 0 && this.cleared.size === 0 && this.storage.size === 0 && this.code.size === 0
    );
  }
}

/** The keys an execution read, for a client's prefetch (addresses, and slots per address). */
export interface AccessSet {
  readonly accounts: Set<string>;
  readonly slots: Map<string, Set<string>>;
  /** Addresses whose code was read. */
  readonly code: Set<string>;
}

export interface TreeStateManagerOptions {
  /**
   * Code by hash when the tree does not hold it (a bag's code blobs); checked by hash here.
   * Default: the tree's resolver, which serves content-addressed blobs of every kind.
   */
  codeSource?: (codeHash: Uint8Array) => Uint8Array | undefined;
  /** Keep `accesses` (what a client proves; default true). A miner has no use for them. */
  recordAccesses?: boolean;
  /**
   * Put code read from outside the tree into it (default true: a miner's tree keeps it for later
   * blocks). A tree thrown away after one run (a client's pre-execution) need not: putting it
   * hashed the blob again and copied it, a contract's code at every call.
   */
  keepCode?: boolean;
}

/**
 * An address, slot or hash (at most a few dozen bytes) as a latin1 map key. The two lengths
 * every read keys by (addresses, slots and hashes) name each byte: V8 builds that string
 * directly, where `apply` over a typed array first copies it into an argument list (~4x the
 * time; a plain transfer makes ~15 of these keys).
 */
export function bytesKey(b: Uint8Array): string {
  const f = String.fromCharCode;
  if (b.length === 20)
    // biome-ignore format: one argument per byte, on one line
    return f(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!);
  if (b.length === 32)
    // One call (two halves joined would make a cons string, flattened again by every Map lookup).
    // biome-ignore format: one argument per byte, on one line
    return f(b[0]!, b[1]!, b[2]!, b[3]!, b[4]!, b[5]!, b[6]!, b[7]!, b[8]!, b[9]!, b[10]!, b[11]!, b[12]!, b[13]!, b[14]!, b[15]!, b[16]!, b[17]!, b[18]!, b[19]!, b[20]!, b[21]!, b[22]!, b[23]!, b[24]!, b[25]!, b[26]!, b[27]!, b[28]!, b[29]!, b[30]!, b[31]!);
  return f.apply(null, b as unknown as number[]);
}
const key = bytesKey;
/** A latin1 key back to bytes. */
export function keyBytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
const EMPTY = new Uint8Array(0);

/**
 * An account as read from the tree whose storage root is computed on first use: reading it
 * after a transaction wrote the account's storage would hash the storage trie, and almost
 * nothing reads it (the EVM only for a CREATE's collision check; a flush ignores it).
 */
class TreeAccount extends Account {
  private pendingRoot: (() => Uint8Array) | undefined;

  constructor(nonce: bigint, balance: bigint, codeHash: Uint8Array, root: Uint8Array | (() => Uint8Array)) {
    super(nonce, balance, typeof root === 'function' ? EMPTY_ROOT : root, codeHash);
    this.pendingRoot = typeof root === 'function' ? root : undefined;
  }

  override get storageRoot(): Uint8Array {
    if (this.pendingRoot !== undefined) {
      const r = this.pendingRoot();
      this.pendingRoot = undefined;
      super.storageRoot = r;
    }
    return super.storageRoot;
  }

  override set storageRoot(root: Uint8Array) {
    this.pendingRoot = undefined;
    super.storageRoot = root;
  }

  /** Its storage root, or what computes it when that was not needed yet. */
  get root(): Uint8Array | (() => Uint8Array) {
    return this.pendingRoot ?? super.storageRoot;
  }

  /** A copy that still computes its root only when asked. */
  copy(): TreeAccount {
    return new TreeAccount(this.nonce, this.balance, this.codeHash, this.root);
  }
}

function copyAccount(a: Account): Account {
  return a instanceof TreeAccount ? a.copy() : new Account(a.nonce, a.balance, a.storageRoot, a.codeHash);
}

/**
 * `a` (or an empty account) with a new nonce and balance, as a fresh object; a storage root
 * not computed yet stays so.
 */
export function accountWith(a: Account | undefined, nonce: bigint, balance: bigint): Account {
  if (a === undefined) return new Account(nonce, balance);
  return new TreeAccount(nonce, balance, a.codeHash, a instanceof TreeAccount ? a.root : a.storageRoot);
}

/** What the tree holds for one address, as far as this manager has read or written it. */
interface CachedAccount {
  /** keccak256(address): the account's trie key. */
  readonly key: Uint8Array;
  /** The account the tree holds (undefined: none); meaningful once `loaded`. */
  account: TreeAccount | undefined;
  loaded: boolean;
}

export class TreeStateManager implements StateManagerInterface {
  /** layers[0] is the transaction's; one more per open EVM checkpoint. */
  private layers: WriteSet[] = [new WriteSet()];
  private readonly codeSource: ((codeHash: Uint8Array) => Uint8Array | undefined) | undefined;
  /** See TreeStateManagerOptions.keepCode. */
  private readonly keepCode: boolean;
  /** By address (latin1): the tree's accounts (see the file's comment). */
  private readonly accountCache = new Map<string, CachedAccount>();
  /** By address, then slot (latin1): the tree's slot values (no leading zeros; empty: unset). */
  private readonly storageCache = new Map<string, Map<string, Uint8Array>>();
  /** keccak256 of each slot seen, by slot (latin1). */
  private readonly slotKeys = new Map<string, Uint8Array>();
  /** Code by code hash (latin1), as the tree or the bag gave it. */
  private readonly codeCache = new Map<string, Uint8Array>();
  private record: boolean;
  /** Every key read since the last resetAccesses() (empty when not recording). */
  accesses: AccessSet = { accounts: new Set(), slots: new Map(), code: new Set() };

  readonly originalStorageCache = {
    /** The value at the start of the transaction: the tree's (writes are flushed per transaction). */
    get: async (address: Address, slot: Uint8Array): Promise<Uint8Array> =>
      this.treeStorage(address.bytes, key(address.bytes), slot, key(slot)),
    clear: (): void => {},
  };

  constructor(
    readonly tree: StateTree,
    opts: TreeStateManagerOptions = {},
  ) {
    this.codeSource = opts.codeSource ?? tree.resolver;
    this.record = opts.recordAccesses ?? true;
    this.keepCode = opts.keepCode ?? true;
  }

  // ------------------------------------------------------------ the tree, with missing nodes named

  private guard<T>(what: () => T, address: Uint8Array, slot?: Uint8Array): T {
    try {
      return what();
    } catch (e) {
      if (
        e instanceof DsmError &&
        (e.code === DsmErrorCode.MissingNode || e.code === DsmErrorCode.HashMismatch)
      ) {
        const where = `account ${bytesToHex(address)}${slot ? ` slot ${bytesToHex(slot)}` : ''}`;
        throw withoutStack(
          () =>
            new ExecutionError(
              ExecutionErrorCode.MissingNode,
              `${where} needs a node that is neither in the top layer nor in the bag (${e.message})`,
              { address, ...(slot ? { slot } : {}), hash: e.meta.hash },
              e,
            ),
        );
      }
      throw e;
    }
  }

  /** The cache entry of an address (latin1 `k`), made with its trie key on first use. */
  private entry(address: Uint8Array, k: string): CachedAccount {
    let c = this.accountCache.get(k);
    if (c === undefined) {
      c = { key: this.tree.hashKey(address), account: undefined, loaded: false };
      this.accountCache.set(k, c);
    }
    return c;
  }

  /** The tree's account (recorded as read), from the cache when there. Not a copy: do not change it. */
  private treeAccount(address: Uint8Array, k: string): TreeAccount | undefined {
    if (this.record) this.accesses.accounts.add(k);
    return this.cachedAccount(address, k);
  }

  private cachedAccount(address: Uint8Array, k: string): TreeAccount | undefined {
    const c = this.entry(address, k);
    if (!c.loaded) {
      // A root the tree has yet to compute (its storage written since) stays so until asked.
      const t = this.tree;
      const a = this.guard(() => t.getAccountFieldsAtKey(c.key), address);
      c.account =
        a === undefined
          ? undefined
          : new TreeAccount(
              a.nonce,
              a.balance,
              a.codeHash,
              t.storageRootStale(c.key) ? this.rootOf(c.key) : a.storageRoot,
            );
      c.loaded = true;
    }
    return c.account;
  }

  private slotKey(slot: Uint8Array, s: string): Uint8Array {
    let h = this.slotKeys.get(s);
    if (h === undefined) {
      h = this.tree.hashKey(slot);
      this.slotKeys.set(s, h);
    }
    return h;
  }

  private treeStorage(address: Uint8Array, a: string, slot: Uint8Array, s: string): Uint8Array {
    if (this.record) {
      const seen = this.accesses.slots.get(a);
      if (seen === undefined) this.accesses.slots.set(a, new Set([s]));
      else seen.add(s);
    }
    let m = this.storageCache.get(a);
    const cached = m?.get(s);
    if (cached !== undefined) return cached;
    const c = this.entry(address, a);
    const v =
      this.guard(() => this.tree.getStorageAtKey(c.key, this.slotKey(slot, s)), address, slot) ?? EMPTY;
    if (m === undefined) {
      m = new Map();
      this.storageCache.set(a, m);
    }
    m.set(s, v);
    return v;
  }

  /**
   * Hashes the trie keys of these addresses and slots that are not hashed yet in one call into
   * the hash, not one per key: what a batch of keys the engine lacks needs before it is read.
   */
  hashKeys(addresses: readonly Uint8Array[], slots: readonly Uint8Array[]): void {
    const todo: Uint8Array[] = [];
    const names: string[] = [];
    const gather = (inputs: readonly Uint8Array[], hashed: Map<string, unknown>): void => {
      for (const b of inputs) {
        const k = key(b);
        if (hashed.has(k)) continue;
        todo.push(b);
        names.push(k);
      }
    };
    gather(addresses, this.accountCache);
    const accounts = todo.length;
    gather(slots, this.slotKeys);
    if (todo.length < 2) return;
    // One call: the native batch packs its inputs back to back itself.
    const digests = this.tree.keccak.keccak256Batch(todo);
    for (let i = 0; i < todo.length; i++) {
      const h = digests.slice(32 * i, 32 * i + 32);
      // An address seen twice in the list is hashed twice; the second entry is the same.
      if (i < accounts) {
        if (!this.accountCache.has(names[i]!))
          this.accountCache.set(names[i]!, { key: h, account: undefined, loaded: false });
      } else this.slotKeys.set(names[i]!, h);
    }
  }

  /** keccak256 of `address` (latin1 `k`): its key in the account trie (hashed once per manager). */
  trieKey(address: Uint8Array, k: string): Uint8Array {
    return this.entry(address, k).key;
  }

  /**
   * The account at `address` (latin1) as the tree holds it now, without recording a read: for
   * the block's logical updates after its transactions were flushed.
   */
  committedAccount(k: string): Account | undefined {
    const a = this.cachedAccount(keyBytes(k), k);
    return a === undefined ? undefined : a.copy();
  }

  // ------------------------------------------------------------ accounts

  /**
   * The account at `address` (latin1 `k`) as the journal and the tree have it, recorded as
   * read like getAccount but not copied: the caller must not change it (see stageAccount).
   */
  readAccount(address: Uint8Array, k: string): Account | undefined {
    for (let i = this.layers.length - 1; i >= 0; i--) {
      const a = this.layers[i]!.accounts.get(k);
      if (a !== undefined) return a === null ? undefined : a;
    }
    return this.treeAccount(address, k);
  }

  /**
   * putAccount of an object the caller made for it and will not touch again (not copied), or
   * deleteAccount when `account` is undefined; `k` is the address as latin1.
   */
  stageAccount(k: string, account: Account | undefined): void {
    if (account !== undefined) {
      this.top.accounts.set(k, account);
      return;
    }
    const top = this.top;
    top.accounts.set(k, null);
    top.cleared.add(k);
    top.storage.delete(k);
    top.code.delete(k);
  }

  async getAccount(address: Address): Promise<Account | undefined> {
    const k = key(address.bytes);
    for (let i = this.layers.length - 1; i >= 0; i--) {
      const a = this.layers[i]!.accounts.get(k);
      if (a !== undefined) return a === null ? undefined : copyAccount(a);
    }
    const a = this.treeAccount(address.bytes, k);
    return a === undefined ? undefined : a.copy();
  }

  async putAccount(address: Address, account?: Account): Promise<void> {
    this.top.accounts.set(key(address.bytes), account === undefined ? null : copyAccount(account));
  }

  async deleteAccount(address: Address): Promise<void> {
    this.stageAccount(key(address.bytes), undefined);
  }

  async modifyAccountFields(
    address: Address,
    fields: Partial<Pick<Account, 'nonce' | 'balance' | 'storageRoot' | 'codeHash'>>,
  ): Promise<void> {
    const a = (await this.getAccount(address)) ?? new Account();
    if (fields.nonce !== undefined) a.nonce = fields.nonce;
    if (fields.balance !== undefined) a.balance = fields.balance;
    if (fields.storageRoot !== undefined) a.storageRoot = fields.storageRoot;
    if (fields.codeHash !== undefined) a.codeHash = fields.codeHash;
    await this.putAccount(address, a);
  }

  // ------------------------------------------------------------ code

  async putCode(address: Address, value: Uint8Array): Promise<void> {
    const codeHash = this.tree.keccak.keccak256(value);
    this.top.code.set(key(address.bytes), value.slice());
    await this.modifyAccountFields(address, { codeHash });
  }

  /** The account's code. Shared with the cache, not copied: callers must not change it. */
  async getCode(address: Address): Promise<Uint8Array> {
    return this.readCode(address.bytes);
  }

  /** getCode without an Address object or a promise (the revm engine's reads). */
  readCode(address: Uint8Array): Uint8Array {
    const k = key(address);
    for (let i = this.layers.length - 1; i >= 0; i--) {
      const c = this.layers[i]!.code.get(k);
      if (c !== undefined) return c;
    }
    const a = this.readAccount(address, k);
    if (a === undefined || bytesEqual(a.codeHash, EMPTY_CODE_HASH)) return EMPTY;
    if (this.record) this.accesses.code.add(k);
    const h = key(a.codeHash);
    const cached = this.codeCache.get(h);
    if (cached !== undefined) return cached;
    const code = this.loadCode(a.codeHash, h);
    if (code === undefined) {
      throw new ExecutionError(
        ExecutionErrorCode.MissingNode,
        `code ${bytesToHex(a.codeHash)} of ${bytesToHex(address)} is neither held nor in the bag`,
        { address, hash: a.codeHash },
      );
    }
    this.codeCache.set(h, code);
    return code;
  }

  /** Code by hash: the tree's, else the verified source's, else the code source's (checked by hash). */
  private loadCode(codeHash: Uint8Array, h: string): Uint8Array | undefined {
    const held = this.tree.getCode(codeHash);
    if (held !== undefined) return held;
    const verified = this.tree.source?.getBin(h);
    const fetched = verified ?? this.codeSource?.(codeHash);
    if (fetched === undefined) return undefined;
    if (verified === undefined && !bytesEqual(this.tree.keccak.keccak256(fetched), codeHash))
      return undefined;
    if (this.keepCode) this.tree.putCode(fetched);
    return fetched;
  }

  async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length;
  }

  // ------------------------------------------------------------ storage

  async getStorage(address: Address, slot: Uint8Array): Promise<Uint8Array> {
    return this.readStorage(address.bytes, slot);
  }

  /**
   * Runs `reads` without recording what they read: a guess handed to an engine before the
   * transaction runs, recorded (`noteRead`) only where the run used it, so the accesses stay
   * what the transaction read.
   */
  unrecorded(reads: () => void): void {
    const record = this.record;
    this.record = false;
    try {
      reads();
    } finally {
      this.record = record;
    }
  }

  /** Records a read of `address`'s account, or of its `slot`, made `unrecorded`. */
  noteRead(address: Uint8Array, slot?: Uint8Array): void {
    if (!this.record) return;
    const a = key(address);
    if (slot === undefined) {
      this.accesses.accounts.add(a);
      return;
    }
    const seen = this.accesses.slots.get(a);
    if (seen === undefined) this.accesses.slots.set(a, new Set([key(slot)]));
    else seen.add(key(slot));
  }

  /** getStorage without an Address object or a promise (the revm engine's reads). */
  readStorage(address: Uint8Array, slot: Uint8Array): Uint8Array {
    const k = key(address);
    const s = key(slot);
    for (let i = this.layers.length - 1; i >= 0; i--) {
      const l = this.layers[i]!;
      const v = l.storage.get(k)?.get(s);
      if (v !== undefined) return v;
      if (l.cleared.has(k)) return EMPTY;
    }
    return this.treeStorage(address, k, slot, s);
  }

  async putStorage(address: Address, slot: Uint8Array, value: Uint8Array): Promise<void> {
    this.stageStorage(key(address.bytes), slot, value);
  }

  /** putStorage of the account at latin1 address `k`, without a promise (the revm engine's writes). */
  stageStorage(k: string, slot: Uint8Array, value: Uint8Array): void {
    let i = 0;
    while (i < value.length && value[i] === 0) i++;
    this.top.slots(k).set(key(slot), value.slice(i));
  }

  async clearStorage(address: Address): Promise<void> {
    const k = key(address.bytes);
    this.top.cleared.add(k);
    this.top.storage.delete(k);
  }

  // ------------------------------------------------------------ checkpoints

  private get top(): WriteSet {
    return this.layers[this.layers.length - 1]!;
  }

  async checkpoint(): Promise<void> {
    this.layers.push(new WriteSet());
  }

  async commit(): Promise<void> {
    if (this.layers.length < 2) throw new Error('commit without a checkpoint');
    const top = this.layers.pop()!;
    this.top.absorb(top);
  }

  async revert(): Promise<void> {
    if (this.layers.length < 2) throw new Error('revert without a checkpoint');
    this.layers.pop();
  }

  /** What the finished transaction wrote (its layer), without applying it. */
  writes(): WriteSet {
    if (this.layers.length !== 1) throw new Error(`${this.layers.length - 1} checkpoints still open`);
    return this.layers[0]!;
  }

  /**
   * Applies the finished transaction's writes to the tree (and the cache) and starts the next
   * one. Deletions first, then accounts, wiped storage, slots and code, so a re-created account
   * ends right. The tree must not be written other than through this.
   */
  flush(): WriteSet {
    const w = this.writes();
    this.layers = [new WriteSet()];
    if (w.empty) return w;
    const t = this.tree;
    this.prepareDeletions(w);
    for (const [k, a] of w.accounts) {
      const address = keyBytes(k);
      const c = this.entry(address, k);
      if (a === null) {
        this.guard(() => t.deleteAccountAtKey(c.key), address);
        c.account = undefined;
        this.storageCache.delete(k);
      } else {
        // Its root stays what the tree had (a new account's: empty), unless storage changes
        // below. When this manager has read the account, the tree need not read it again for
        // it (a root not computed yet means the tree holds the storage trie and uses its root).
        const root = c.loaded ? (c.account?.root ?? EMPTY_ROOT) : this.rootOf(c.key);
        const known = typeof root !== 'function';
        this.guard(
          () =>
            t.putAccountAtKey(
              c.key,
              {
                nonce: a.nonce,
                balance: a.balance,
                storageRoot: known ? root : EMPTY_ROOT,
                codeHash: a.codeHash,
              },
              known,
            ),
          address,
        );
        c.account = new TreeAccount(a.nonce, a.balance, a.codeHash, root);
      }
      c.loaded = true;
    }
    for (const k of w.cleared) {
      if (w.accounts.get(k) === null) continue;
      const c = this.entry(keyBytes(k), k);
      t.clearStorageAtKey(c.key);
      this.storageCache.delete(k);
      this.staleRoot(c);
    }
    for (const [k, m] of w.storage) {
      const address = keyBytes(k);
      const c = this.entry(address, k);
      let cached = this.storageCache.get(k);
      if (cached === undefined) {
        cached = new Map();
        this.storageCache.set(k, cached);
      }
      for (const [s, v] of m) {
        const slot = keyBytes(s);
        this.guard(() => t.putStorageAtKey(c.key, this.slotKey(slot, s), v), address, slot);
        cached.set(s, v);
      }
      this.staleRoot(c);
    }
    for (const code of w.code.values()) t.putCode(code);
    return w;
  }

  /**
   * Deletions (an account, a slot set to zero) are the only writes that can need a node no read
   * brought in: the sibling a collapsing branch merges with. They are faulted in before anything
   * is written, so a missing one fails the transaction with the tree as it was.
   */
  private prepareDeletions(w: WriteSet): void {
    const t = this.tree;
    for (const [k, a] of w.accounts) {
      if (a !== null) continue;
      const address = keyBytes(k);
      const c = this.entry(address, k);
      this.guard(() => t.prepareDeleteAccountAtKey(c.key), address);
    }
    for (const [k, m] of w.storage) {
      if (w.cleared.has(k) || w.accounts.get(k) === null) continue; // its trie starts empty
      let c: CachedAccount | undefined;
      for (const [s, v] of m) {
        if (v.length !== 0) continue;
        const address = keyBytes(k);
        c ??= this.entry(address, k);
        const slot = keyBytes(s);
        const accountKey = c.key;
        this.guard(() => t.prepareDeleteStorageAtKey(accountKey, this.slotKey(slot, s)), address, slot);
      }
    }
  }

  /** The tree's storage root for the account with trie key `key`, computed when first asked. */
  private rootOf(accountKey: Uint8Array): () => Uint8Array {
    return () => this.tree.getAccountAtKey(accountKey)?.storageRoot ?? EMPTY_ROOT;
  }

  /** The account's storage changed: its root is the tree's, computed when first asked. */
  private staleRoot(c: CachedAccount): void {
    const a = c.account;
    c.account =
      a === undefined ? undefined : new TreeAccount(a.nonce, a.balance, a.codeHash, this.rootOf(c.key));
    c.loaded = true;
  }

  /** Drops whatever the current transaction wrote (it failed outside the EVM's own reverts). */
  discard(): void {
    this.layers = [new WriteSet()];
  }

  resetAccesses(): void {
    if (this.record) this.accesses = { accounts: new Set(), slots: new Map(), code: new Set() };
  }

  // ------------------------------------------------------------ roots

  async getStateRoot(): Promise<Uint8Array> {
    return this.tree.root();
  }

  async setStateRoot(): Promise<void> {
    throw new Error('a TreeStateManager is bound to its tree; it cannot switch roots');
  }

  async hasStateRoot(root: Uint8Array): Promise<boolean> {
    return bytesEqual(this.tree.root(), root);
  }

  clearCaches(): void {}

  shallowCopy(): StateManagerInterface {
    throw new Error('a TreeStateManager is not copied; make another over a snapshot of the tree');
  }
}
