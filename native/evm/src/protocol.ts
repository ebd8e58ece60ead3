/**
 * The addon's binary protocol (src/lib.rs): what crosses into the engine in one call and what
 * comes back. Integers are little-endian, 256-bit words big-endian. Keeping it to one byte
 * array per call each way is what makes a call cost a few hundred nanoseconds, not tens of
 * microseconds of object conversion.
 */

/** The forks the engine runs, in order (index = the byte the addon reads). */
export const ENGINE_FORKS = ['shanghai', 'cancun', 'prague', 'osaka'] as const;
export type EngineFork = (typeof ENGINE_FORKS)[number];

/** The block a transaction runs in, with the chain's rules. */
export interface EngineConfig {
  readonly fork: EngineFork;
  readonly chainId: bigint;
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly gasLimit: bigint;
  readonly baseFee: bigint;
  /** 20 bytes. */
  readonly coinbase: Uint8Array;
  /**
   * `execute` answers with what each run read of the state handed over (EngineResult's
   * `reads`): a caller that records accesses hands guesses over and records what was used.
   */
  readonly reportReads?: boolean;
}

/** One transaction, sender recovered. */
export interface EngineTx {
  /** EIP-2718 type: 0 legacy, 1 EIP-2930, 2 EIP-1559. */
  readonly type: number;
  readonly caller: Uint8Array;
  /** Undefined: a creation. */
  readonly to: Uint8Array | undefined;
  readonly value: bigint;
  readonly gasLimit: bigint;
  /** Gas price (legacy, EIP-2930) or max fee per gas. */
  readonly maxFee: bigint;
  /** Max priority fee per gas (EIP-1559; ignored for older types). */
  readonly priorityFee: bigint;
  readonly nonce: bigint;
  readonly chainId: bigint;
  readonly data: Uint8Array;
  readonly accessList: readonly (readonly [Uint8Array, readonly Uint8Array[]])[];
}

/** A key of the state the engine asks JS for. */
export type StateKey =
  | { readonly kind: 'account'; readonly address: Uint8Array }
  | { readonly kind: 'slot'; readonly address: Uint8Array; readonly slot: Uint8Array }
  /** Code by hash, for `address` (JS resolves code by account). */
  | { readonly kind: 'code'; readonly hash: Uint8Array; readonly address: Uint8Array };

/** One log a transaction emitted. */
export interface EngineLog {
  readonly address: Uint8Array;
  readonly topics: readonly Uint8Array[];
  readonly data: Uint8Array;
}

/** What a transaction did to one account. */
export type AccountChange =
  | { readonly address: Uint8Array; readonly deleted: true }
  | {
      readonly address: Uint8Array;
      readonly deleted: false;
      /** Made in this transaction: its storage starts empty. */
      readonly created: boolean;
      readonly nonce: bigint;
      readonly balance: bigint;
      readonly codeHash: Uint8Array;
      /** The code a creation deployed. */
      readonly code: Uint8Array | undefined;
      /** Slots written, 32-byte words (a zero value deletes). */
      readonly storage: readonly (readonly [Uint8Array, Uint8Array])[];
    };

/** The engine's answer to one execute call. */
export type EngineResult =
  /** The run needed keys the engine lacks: resolve them and run again. */
  | { readonly kind: 'lacking'; readonly keys: readonly StateKey[] }
  /** The run reached a key JS said it cannot resolve, with nothing unresolved before it. */
  | { readonly kind: 'unresolvable'; readonly key: StateKey }
  /** revm refused the transaction or a precompile failed fatally: nothing executed. */
  | { readonly kind: 'refused'; readonly message: string }
  | (EngineOutcome & {
      readonly kind: 'executed';
      readonly changes: readonly AccountChange[];
      /** Every account and slot the run read of what the engine held (with `reportReads` only). */
      readonly reads?: readonly StateKey[];
    });

/** What one executed transaction gave (without its state changes). */
export interface EngineOutcome {
  readonly status: 0 | 1;
  /** Gas used, after the refund and the EIP-7623 floor (the receipt's). */
  readonly gasUsed: bigint;
  readonly refund: bigint;
  readonly created: Uint8Array | undefined;
  readonly logs: readonly EngineLog[];
  /** The logs' bloom (256 bytes, as a receipt has it), undefined when there are no logs. */
  readonly bloom: Uint8Array | undefined;
}

/** The engine's answer to one executeBatch call. */
export interface EngineBatchResult {
  /** The transactions executed by this call, in order from its `from`. */
  readonly executed: readonly EngineOutcome[];
  readonly end: /**
   * Transaction `index` read keys the engine lacks: resolve them and call again from it. The
   * keys include what the transactions after it were found to lack when run ahead.
   */
    | { readonly kind: 'lacking'; readonly index: number; readonly keys: readonly StateKey[] }
    /**
     * The batch stopped before transaction `index`, left to a call of its own (or the batch
     * ended: `index` undefined); `changes` is everything the batch changed, to apply once.
     */
    | {
        readonly kind: 'done';
        readonly index: number | undefined;
        readonly changes: readonly AccountChange[];
      };
}

import type { EngineBinding } from './loadEvm.js';

/** keccak256 of empty code: every externally owned account's code hash. */
const EMPTY_CODE_HASH = new Uint8Array(
  Buffer.from('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470', 'hex'),
);

const MASK64 = (1n << 64n) - 1n;

/** Appends little-endian integers, words and bytes to a growing buffer. */
class Writer {
  buf = new Uint8Array(512);
  view = new DataView(this.buf.buffer);
  at = 0;

  protected room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.at++] = v;
  }

  u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.at, v, true);
    this.at += 4;
  }

  u64(v: bigint): void {
    this.room(8);
    this.view.setBigUint64(this.at, v & MASK64, true);
    this.at += 8;
  }

  u128(v: bigint): void {
    this.u64(v);
    this.u64(v >> 64n);
  }

  /** A 256-bit big-endian word. */
  word(v: bigint): void {
    this.room(32);
    for (let i = 3; i >= 0; i--) {
      this.view.setBigUint64(this.at + 8 * i, v & MASK64, false);
      v >>= 64n;
    }
    this.at += 32;
  }

  /** Bytes as given; with `size`, exactly that many (a shorter value is left-padded with zeros). */
  bytes(b: Uint8Array, size = b.length): void {
    const pad = size - b.length;
    if (pad < 0) throw new RangeError(`at most ${size} bytes, found ${b.length}`);
    this.room(size);
    if (pad > 0) this.buf.fill(0, this.at, this.at + pad);
    this.buf.set(b, this.at + pad);
    this.at += size;
  }

  /** What was written, as a copy-free view; the writer starts over (the view stays valid until the next write). */
  take(): Uint8Array {
    const out = this.buf.subarray(0, this.at);
    this.at = 0;
    return out;
  }
}

/** The engine's constructor argument. */
export function encodeConfig(c: EngineConfig): Uint8Array {
  const fork = ENGINE_FORKS.indexOf(c.fork);
  if (fork < 0) throw new RangeError(`a fork the engine runs (${ENGINE_FORKS.join(', ')}), found ${c.fork}`);
  const w = new Writer();
  w.u8(fork);
  w.u64(c.chainId);
  w.u64(c.number);
  w.u64(c.timestamp);
  w.u64(c.gasLimit);
  w.u64(c.baseFee);
  w.bytes(c.coinbase, 20);
  if (c.reportReads === true) w.u8(1);
  return w.take().slice();
}

/** Encodes transactions; one per engine, its buffer reused. */
export class TxWriter extends Writer {
  encode(tx: EngineTx): Uint8Array {
    this.at = 0;
    this.tx(tx);
    return this.take();
  }

  /**
   * A batch for `executeBatch`: the block's gas left (see {@link setBatchGasLeft}), the count,
   * then each transaction with its length.
   */
  encodeBatch(txs: readonly EngineTx[], gasLeft: bigint): Uint8Array {
    this.at = 0;
    this.u64(gasLeft);
    this.u32(txs.length);
    for (const tx of txs) {
      const at = this.at;
      this.u32(0);
      this.tx(tx);
      this.view.setUint32(at, this.at - at - 4, true);
    }
    return this.take();
  }

  private tx(tx: EngineTx): void {
    this.u8(tx.type);
    this.bytes(tx.caller, 20);
    if (tx.to === undefined) this.u8(0);
    else {
      this.u8(1);
      this.bytes(tx.to, 20);
    }
    this.word(tx.value);
    this.u64(tx.gasLimit);
    this.u128(tx.maxFee);
    this.u128(tx.priorityFee);
    this.u64(tx.nonce);
    this.u64(tx.chainId);
    this.u32(tx.data.length);
    this.bytes(tx.data);
    this.u32(tx.accessList.length);
    for (const [address, keys] of tx.accessList) {
      this.bytes(address, 20);
      this.u32(keys.length);
      for (const k of keys) this.bytes(k, 32);
    }
  }
}

/** Sets the block's gas left in an encoded batch (it falls as the batch's transactions execute). */
export function setBatchGasLeft(batch: Uint8Array, gasLeft: bigint): void {
  new DataView(batch.buffer, batch.byteOffset, 8).setBigUint64(0, gasLeft & MASK64, true);
}

/** State records for the engine (`feed`, or with `execute`). */
export class RecordWriter extends Writer {
  /** An account as the tree holds it. */
  account(address: Uint8Array, nonce: bigint, balance: bigint, codeHash: Uint8Array): void {
    this.u8(1);
    this.bytes(address, 20);
    this.u64(nonce);
    this.word(balance);
    this.bytes(codeHash, 32);
  }

  /** No account at `address`. */
  noAccount(address: Uint8Array): void {
    this.u8(2);
    this.bytes(address, 20);
  }

  code(hash: Uint8Array, code: Uint8Array): void {
    this.u8(3);
    this.bytes(hash, 32);
    this.u32(code.length);
    this.bytes(code);
  }

  /** A slot's value (any length up to 32 bytes, big-endian; empty: zero). */
  slot(address: Uint8Array, slot: Uint8Array, value: Uint8Array): void {
    this.u8(4);
    this.bytes(address, 20);
    this.bytes(slot, 32);
    this.bytes(value, 32);
  }

  /** A key JS cannot resolve: a run that needs it stops on it. */
  unresolvable(key: StateKey): void {
    if (key.kind === 'account') {
      this.u8(5);
      this.bytes(key.address, 20);
    } else if (key.kind === 'slot') {
      this.u8(6);
      this.bytes(key.address, 20);
      this.bytes(key.slot, 32);
    } else {
      this.u8(7);
      this.bytes(key.hash, 32);
      this.bytes(key.address, 20);
    }
  }

  /** Drop what the engine holds for an account JS wrote itself. */
  forget(address: Uint8Array): void {
    this.u8(8);
    this.bytes(address, 20);
  }

  /** Drop every account, slot and code the engine holds: it asks for all of it again. */
  forgetAll(): void {
    this.u8(9);
  }

  /** Forget which keys were unresolvable (a new transaction, a new bag). */
  clearUnresolvable(): void {
    this.u8(10);
  }

  /** Commit the last executed transaction's changes (saves a call of its own). */
  commitPending(): void {
    this.u8(11);
  }

  get size(): number {
    return this.at;
  }
}

/**
 * Where an engine's answers land: a buffer JS owns, reused, grown when an answer is longer.
 * The addon copies into it rather than handing out buffers over its own memory, so no finalizer
 * of the addon runs inside V8's garbage collector or at shutdown.
 */
export class ResultBuffer {
  private buf = new Uint8Array(4096);

  /** `engine.execute(tx, records)`: its answer, valid until the next call. */
  execute(engine: EngineBinding, tx: Uint8Array, records: Uint8Array): Uint8Array {
    return this.fetch(engine, engine.execute(tx, records, this.buf));
  }

  /** `engine.executeBatch(batch, from, records)`: its answer, valid until the next call. */
  executeBatch(engine: EngineBinding, batch: Uint8Array, from: number, records: Uint8Array): Uint8Array {
    return this.fetch(engine, engine.executeBatch(batch, from, records, this.buf));
  }

  /** The answer of `n` bytes the engine just gave, fetched again into a longer buffer when it did not fit. */
  private fetch(engine: EngineBinding, n: number): Uint8Array {
    if (n > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < n) size *= 2;
      this.buf = new Uint8Array(size);
      engine.result(this.buf);
    }
    return this.buf.subarray(0, n);
  }
}

/** Reads the engine's answer. */
export function decodeResult(b: Uint8Array): EngineResult {
  const r = new Reader(b);
  const kind = r.u8();
  if (kind === 0) {
    const n = r.u32();
    const keys: StateKey[] = [];
    for (let i = 0; i < n; i++) keys.push(r.key());
    return { kind: 'lacking', keys };
  }
  if (kind === 2) return { kind: 'unresolvable', key: r.key() };
  if (kind === 3) {
    const n = r.u32();
    return { kind: 'refused', message: Buffer.from(r.bytes(n)).toString('utf8') };
  }
  if (kind !== 1) throw new RangeError(`an engine result kind 0–3, found ${kind}`);
  const outcome = r.outcome();
  const changes = r.changes();
  if (r.done()) return { kind: 'executed', ...outcome, changes };
  const reads: StateKey[] = [];
  for (let i = r.u32(); i > 0; i--) reads.push(r.key());
  return { kind: 'executed', ...outcome, changes, reads };
}

/** Reads the engine's answer to `executeBatch`. */
export function decodeBatchResult(b: Uint8Array): EngineBatchResult {
  const r = new Reader(b);
  const executed: EngineOutcome[] = [];
  for (;;) {
    const kind = r.u8();
    if (kind === 1) {
      executed.push(r.outcome());
      continue;
    }
    if (kind === 0) {
      const index = r.u32();
      const n = r.u32();
      const keys: StateKey[] = [];
      for (let i = 0; i < n; i++) keys.push(r.key());
      return { executed, end: { kind: 'lacking', index, keys } };
    }
    if (kind === 4) {
      const index = r.u32();
      return { executed, end: { kind: 'done', index, changes: r.changes() } };
    }
    if (kind === 5) return { executed, end: { kind: 'done', index: undefined, changes: r.changes() } };
    throw new RangeError(`an engine batch entry kind 0, 1, 4 or 5, found ${kind}`);
  }
}

class Reader {
  private at = 0;
  private readonly view: DataView;

  constructor(
    private readonly b: Uint8Array,
    /** `bytes` gives views into `b` (a copy this reader owns), not copies of its own. */
    private readonly views = false,
  ) {
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  u8(): number {
    return this.b[this.at++]!;
  }

  done(): boolean {
    return this.at >= this.b.length;
  }

  u32(): number {
    const v = this.view.getUint32(this.at, true);
    this.at += 4;
    return v;
  }

  u64(): bigint {
    const v = this.view.getBigUint64(this.at, true);
    this.at += 8;
    return v;
  }

  word(): bigint {
    let v = 0n;
    for (let i = 0; i < 4; i++) v = (v << 64n) | this.view.getBigUint64(this.at + 8 * i, false);
    this.at += 32;
    return v;
  }

  /** A copy (the engine's buffer is not kept), or a view into the reader's own copy. */
  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.views ? this.b.subarray(this.at, this.at + n) : this.b.slice(this.at, this.at + n);
    this.at += n;
    return out;
  }

  private need(n: number): void {
    if (this.at + n > this.b.length) {
      throw new RangeError(
        `an engine result with ${n} more bytes at ${this.at}, found ${this.b.length - this.at}`,
      );
    }
  }

  /**
   * A reader over a copy of the next `n` bytes whose `bytes` are views into that copy (this
   * reader moves past them): one allocation for many small fields, where a copy each costs
   * more, and the bloom's 256 bytes an off-heap buffer of their own.
   */
  private copyOf(n: number): Reader {
    this.need(n);
    const r = new Reader(this.b.slice(this.at, this.at + n), true);
    this.at += n;
    return r;
  }

  /** An executed transaction's outcome (after its kind byte). */
  outcome(): EngineOutcome {
    const status = this.u8() === 1 ? 1 : 0;
    const gasUsed = this.u64();
    const refund = this.u64();
    const created = this.u8() === 1 ? this.bytes(20) : undefined;
    const logCount = this.u32();
    const logs: EngineLog[] = [];
    if (logCount === 0) return { status, gasUsed, refund, created, logs, bloom: undefined };
    // The logs and their bloom live as long as the receipt: one copy of them all, views into it.
    let end = this.at;
    for (let i = 0; i < logCount; i++) {
      end += 20;
      if (end + 1 > this.b.length) break; // (need() below names the shortfall)
      end += 1 + 32 * this.b[end]!;
      if (end + 4 > this.b.length) break;
      end += 4 + this.view.getUint32(end, true);
    }
    const r = this.copyOf(end + 256 - this.at);
    for (let i = 0; i < logCount; i++) {
      const address = r.bytes(20);
      const nt = r.u8();
      const topics: Uint8Array[] = [];
      for (let t = 0; t < nt; t++) topics.push(r.bytes(32));
      logs.push({ address, topics, data: r.bytes(r.u32()) });
    }
    return { status, gasUsed, refund, created, logs, bloom: r.bytes(256) };
  }

  /** Account changes: a count, then each account (the answer's last part: views into one copy of it). */
  changes(): AccountChange[] {
    if (!this.views) {
      // What follows them (a single run's reads) is read here, from this reader, after them.
      const r = new Reader(this.b.slice(this.at), true);
      const changes = r.changes();
      this.at += r.at;
      return changes;
    }
    const count = this.u32();
    const changes: AccountChange[] = [];
    for (let i = 0; i < count; i++) {
      const address = this.bytes(20);
      const flags = this.u8();
      if (flags & 1) {
        changes.push({ address, deleted: true });
        continue;
      }
      const nonce = this.u64();
      const balance = this.word();
      const codeHash = this.codeHash();
      const code = flags & 4 ? this.bytes(this.u32()) : undefined;
      const n = this.u32();
      const storage: [Uint8Array, Uint8Array][] = [];
      for (let s = 0; s < n; s++) storage.push([this.bytes(32), this.bytes(32)]);
      changes.push({
        address,
        deleted: false,
        created: (flags & 2) !== 0,
        nonce,
        balance,
        codeHash,
        code,
        storage,
      });
    }
    return changes;
  }

  /**
   * A changed account's code hash: the one empty code has, shared (what an externally owned
   * account has; callers never write into it), else a view or copy as `bytes` gives. A view per
   * changed account lived in a miner's block until its seal.
   */
  private codeHash(): Uint8Array {
    const b = this.b;
    const at = this.at;
    if (at + 32 <= b.length) {
      let i = 0;
      while (i < 32 && b[at + i] === EMPTY_CODE_HASH[i]) i++;
      if (i === 32) {
        this.at = at + 32;
        return EMPTY_CODE_HASH;
      }
    }
    return this.bytes(32);
  }

  key(): StateKey {
    const tag = this.u8();
    if (tag === 1) return { kind: 'account', address: this.bytes(20) };
    if (tag === 2) return { kind: 'slot', address: this.bytes(20), slot: this.bytes(32) };
    if (tag === 3) {
      const hash = this.bytes(32);
      return { kind: 'code', hash, address: this.bytes(20) };
    }
    throw new RangeError(`a state key tag 1–3, found ${tag}`);
  }
}
