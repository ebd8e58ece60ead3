/**
 * The EVM's view of a StateTree (DESIGN §5): ethereumjs' StateManagerInterface over a partial
 * tree whose missing nodes come from its resolver (a miner: the transaction's bag; a client:
 * what it has fetched so far). Writes go to journal layers (one per EVM checkpoint) and reach
 * the tree only when the caller `flush()`es a finished transaction, so a transaction that fails
 * half-way — a revert, or a node that is nowhere — leaves the tree as it was.
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

  /** Folds `top` (a later layer) into this one. */
  absorb(top: WriteSet): void {
    for (const [a, acct] of top.accounts) this.accounts.set(a, acct);
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
}

const key = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
/** A latin1 key back to bytes. */
export const keyBytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));
const EMPTY = new Uint8Array(0);

function copyAccount(a: Account): Account {
  return new Account(a.nonce, a.balance, a.storageRoot, a.codeHash);
}

export class TreeStateManager implements StateManagerInterface {
  /** layers[0] is the transaction's; one more per open EVM checkpoint. */
  private layers: WriteSet[] = [new WriteSet()];
  private readonly codeSource: ((codeHash: Uint8Array) => Uint8Array | undefined) | undefined;
  /** Every key read since the last resetAccesses(). */
  accesses: AccessSet = { accounts: new Set(), slots: new Map(), code: new Set() };

  readonly originalStorageCache = {
    /** The value at the start of the transaction: the tree's (writes are flushed per transaction). */
    get: async (address: Address, slot: Uint8Array): Promise<Uint8Array> =>
      this.treeStorage(address.bytes, slot),
    clear: (): void => {},
  };

  constructor(
    readonly tree: StateTree,
    opts: TreeStateManagerOptions = {},
  ) {
    this.codeSource = opts.codeSource ?? tree.resolver;
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
        throw new ExecutionError(
          ExecutionErrorCode.MissingNode,
          `${where} needs a node that is neither in the top layer nor in the bag (${e.message})`,
          { address, ...(slot ? { slot } : {}), hash: e.meta.hash },
          e,
        );
      }
      throw e;
    }
  }

  private treeAccount(address: Uint8Array): Account | undefined {
    this.accesses.accounts.add(key(address));
    const a = this.guard(() => this.tree.getAccount(address), address);
    return a === undefined ? undefined : new Account(a.nonce, a.balance, a.storageRoot, a.codeHash);
  }

  private treeStorage(address: Uint8Array, slot: Uint8Array): Uint8Array {
    const a = key(address);
    const s = this.accesses.slots.get(a);
    if (s === undefined) this.accesses.slots.set(a, new Set([key(slot)]));
    else s.add(key(slot));
    return this.guard(() => this.tree.getStorage(address, slot), address, slot) ?? EMPTY;
  }

  // ------------------------------------------------------------ accounts

  async getAccount(address: Address): Promise<Account | undefined> {
    const k = key(address.bytes);
    for (let i = this.layers.length - 1; i >= 0; i--) {
      const a = this.layers[i]!.accounts.get(k);
      if (a !== undefined) return a === null ? undefined : copyAccount(a);
    }
    return this.treeAccount(address.bytes);
  }

  async putAccount(address: Address, account?: Account): Promise<void> {
    this.top.accounts.set(key(address.bytes), account === undefined ? null : copyAccount(account));
  }

  async deleteAccount(address: Address): Promise<void> {
    const k = key(address.bytes);
    const top = this.top;
    top.accounts.set(k, null);
    top.cleared.add(k);
    top.storage.delete(k);
    top.code.delete(k);
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

  async getCode(address: Address): Promise<Uint8Array> {
    const k = key(address.bytes);
    for (let i = this.layers.length - 1; i >= 0; i--) {
      const c = this.layers[i]!.code.get(k);
      if (c !== undefined) return c;
    }
    const a = await this.getAccount(address);
    if (a === undefined || bytesEqual(a.codeHash, EMPTY_CODE_HASH)) return EMPTY;
    this.accesses.code.add(k);
    const held = this.tree.getCode(a.codeHash);
    if (held !== undefined) return held;
    const fetched = this.codeSource?.(a.codeHash);
    if (fetched !== undefined && bytesEqual(this.tree.keccak.keccak256(fetched), a.codeHash)) {
      this.tree.putCode(fetched);
      return fetched;
    }
    throw new ExecutionError(
      ExecutionErrorCode.MissingNode,
      `code ${bytesToHex(a.codeHash)} of ${address.toString()} is neither held nor in the bag`,
      { address: address.bytes, hash: a.codeHash },
    );
  }

  async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length;
  }

  // ------------------------------------------------------------ storage

  async getStorage(address: Address, slot: Uint8Array): Promise<Uint8Array> {
    const k = key(address.bytes);
    const s = key(slot);
    for (let i = this.layers.length - 1; i >= 0; i--) {
      const l = this.layers[i]!;
      const v = l.storage.get(k)?.get(s);
      if (v !== undefined) return v;
      if (l.cleared.has(k)) return EMPTY;
    }
    return this.treeStorage(address.bytes, slot);
  }

  async putStorage(address: Address, slot: Uint8Array, value: Uint8Array): Promise<void> {
    let i = 0;
    while (i < value.length && value[i] === 0) i++;
    this.top.slots(key(address.bytes)).set(key(slot), value.slice(i));
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
   * Applies the finished transaction's writes to the tree and starts the next one. Deletions
   * first, then accounts, wiped storage, slots and code, so a re-created account ends right.
   */
  flush(): WriteSet {
    const w = this.writes();
    this.layers = [new WriteSet()];
    if (w.empty) return w;
    const t = this.tree;
    for (const [k, a] of w.accounts) {
      const address = keyBytes(k);
      if (a === null) this.guard(() => t.deleteAccount(address), address);
      else
        this.guard(
          () =>
            t.putAccount(address, {
              nonce: a.nonce,
              balance: a.balance,
              storageRoot: EMPTY_ROOT, // the tree keeps the account's own storage root
              codeHash: a.codeHash,
            }),
          address,
        );
    }
    for (const k of w.cleared) if (w.accounts.get(k) !== null) t.clearStorage(keyBytes(k));
    for (const [k, m] of w.storage) {
      const address = keyBytes(k);
      for (const [s, v] of m) {
        const slot = keyBytes(s);
        this.guard(() => t.putStorage(address, slot, v), address, slot);
      }
    }
    for (const c of w.code.values()) t.putCode(c);
    return w;
  }

  /** Drops whatever the current transaction wrote (it failed outside the EVM's own reverts). */
  discard(): void {
    this.layers = [new WriteSet()];
  }

  resetAccesses(): void {
    this.accesses = { accounts: new Set(), slots: new Map(), code: new Set() };
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
