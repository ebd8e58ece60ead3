/**
 * The client's transaction pool: per sender, the transactions a miner has not taken yet, kept
 * in nonce order, as geth's txpool keeps them (core/txpool/legacypool). A transaction whose
 * nonce leaves a gap above the sender's next one waits here (queued) instead of being refused,
 * and goes to a miner once the gap fills; each sender has at most one transaction on its way to
 * a miner at a time, so a sender's transactions reach the miners in nonce order.
 *
 * An entry is `queued` (waiting for a gap to fill or for its predecessor's answer), `submitting`
 * (being pre-executed and submitted) or `sent` (a miner accepted it; kept until a block holds
 * it, for 'pending' nonces and lookups). A miner has no pool of its own: what it accepted is
 * executed into its pending block at once, so a `sent` transaction can no longer be replaced —
 * its nonce is used as far as the chain is concerned ("nonce too low"). Replacement (same
 * nonce, both fee caps raised by at least `priceBump` percent, geth's rule) applies to `queued`
 * ones. geth's queue limits (per-account and global) apply to `queued` entries; what a miner
 * accepted is bounded by the miner's block, not here.
 *
 * No I/O and no clock of its own: the caller passes the sender's account as proven at the state
 * head and a `now` function, and drives submissions (`promote`, `accepted`, `failed`).
 */
import { byteKey } from '@monsoon/dsm-tree';
import { ExecutionError, ExecutionErrorCode } from '@monsoon/execution';
import { ClientError, ClientErrorCode } from './clientError.js';

export interface TxPoolOptions {
  /** Minimum fee raise, in percent of both the fee cap and the tip cap, to replace a transaction (geth: 10). */
  priceBump: bigint;
  /** Queued transactions one sender may hold (geth's AccountQueue: 64). */
  accountQueue: number;
  /** Queued transactions all senders together may hold (geth's GlobalQueue: 1024). */
  globalQueue: number;
  /** How long a sender's queued transactions are kept without any activity of that sender, ms (geth: 3 h). */
  lifetimeMs: number;
}

export const defaultTxPoolOptions: TxPoolOptions = {
  priceBump: 10n,
  accountQueue: 64,
  globalQueue: 1024,
  lifetimeMs: 3 * 60 * 60 * 1000,
};

export interface TxPoolModules {
  /** The clock, ms (Date.now unless a test moves time). */
  readonly now: () => number;
}

/** What the pool needs to know of a transaction. */
export interface PoolTx {
  /** 32 bytes. */
  readonly hash: Uint8Array;
  /** 20 bytes: the recovered sender. */
  readonly sender: Uint8Array;
  readonly nonce: bigint;
  /** EIP-1559 fee cap (the gas price for legacy and EIP-2930). */
  readonly maxFeePerGas: bigint;
  /** EIP-1559 tip cap (the gas price for legacy and EIP-2930). */
  readonly maxPriorityFeePerGas: bigint;
  /** The most it can cost its sender: gas limit × fee cap + value. */
  readonly cost: bigint;
}

/** The sender's account at the state head: what its next nonce is and what it can pay. */
export interface PoolAccount {
  readonly nonce: bigint;
  readonly balance: bigint;
}

export type PoolTxState = 'queued' | 'submitting' | 'sent';

export interface PoolEntry<T extends PoolTx = PoolTx> {
  readonly tx: T;
  state: PoolTxState;
  /** When a miner accepted it (ms), once it did. */
  sentAt?: number;
}

/** What adding a transaction did. */
export interface Admission<T extends PoolTx = PoolTx> {
  readonly entry: PoolEntry<T>;
  /** The queued transaction of the same nonce it replaced. */
  readonly replaced?: PoolEntry<T>;
  /** A higher-nonce queued transaction of the same sender dropped to stay within `accountQueue`. */
  readonly dropped?: PoolEntry<T>;
  /** Whether it waits for a nonce the pool does not hold (a gap), rather than for its turn. */
  readonly gapped: boolean;
}

interface SenderTxs<T extends PoolTx> {
  readonly sender: Uint8Array;
  /** The next nonce of the sender's account as last seen (raised, never lowered, while it has entries). */
  stateNonce: bigint;
  readonly byNonce: Map<bigint, PoolEntry<T>>;
  /** Last activity (an addition or a promotion), ms: the lifetime counts from here, as geth's heartbeat. */
  beat: number;
  /** The newest block known to hold one of its transactions. */
  minedIn?: bigint;
}

/** Whether `next` may replace `old`: both caps strictly higher and at least `bump` percent higher (geth's list.Add). */
export function isReplacement(old: PoolTx, next: PoolTx, bump: bigint): boolean {
  if (next.maxFeePerGas <= old.maxFeePerGas || next.maxPriorityFeePerGas <= old.maxPriorityFeePerGas)
    return false;
  const feeCap = (old.maxFeePerGas * (100n + bump)) / 100n;
  const tip = (old.maxPriorityFeePerGas * (100n + bump)) / 100n;
  return next.maxFeePerGas >= feeCap && next.maxPriorityFeePerGas >= tip;
}

export class TxPool<T extends PoolTx = PoolTx> {
  private readonly senders = new Map<string, SenderTxs<T>>();
  private readonly byHash = new Map<string, PoolEntry<T>>();
  private queuedTotal = 0;

  constructor(
    readonly opts: TxPoolOptions = defaultTxPoolOptions,
    private readonly modules: TxPoolModules = { now: Date.now },
  ) {}

  /**
   * Admits `tx`, whose sender's account at the state head is `account` (undefined: no account).
   * The new entry is `queued`; `promote` says when it is its turn. Throws, with geth's message:
   * ALREADY_KNOWN, BAD_NONCE ("nonce too low"), REPLACE_UNDERPRICED, INSUFFICIENT_FUNDS (the
   * sender cannot pay for it on top of what it has pooled), ACCOUNT_LIMIT, TXPOOL_FULL.
   */
  add(tx: T, account: PoolAccount | undefined): Admission<T> {
    const hashKey = byteKey(tx.hash);
    if (this.byHash.has(hashKey))
      throw new ClientError(ClientErrorCode.AlreadyKnown, 'already known', { hash: tx.hash });
    const key = byteKey(tx.sender);
    const known = this.senders.get(key);
    const stateNonce = maxOf(account?.nonce ?? 0n, known?.stateNonce ?? 0n);
    const balance = account?.balance ?? 0n;
    if (tx.nonce < stateNonce) throw nonceTooLow(stateNonce, tx.nonce);
    const old = known?.byNonce.get(tx.nonce);
    let spent = 0n;
    for (const e of known?.byNonce.values() ?? []) if (e.tx.nonce >= stateNonce) spent += e.tx.cost;
    let dropped: PoolEntry<T> | undefined;
    if (old !== undefined) {
      if (!isReplacement(old.tx, tx, this.opts.priceBump)) {
        throw new ClientError(ClientErrorCode.ReplaceUnderpriced, 'replacement transaction underpriced', {
          hash: tx.hash,
          replacing: old.tx.hash,
        });
      }
      // A miner already executed the old one into its pending block: its nonce is used.
      if (old.state !== 'queued') throw nonceTooLow(this.pendingNonce(tx.sender, stateNonce), tx.nonce);
      const bump = tx.cost - old.tx.cost;
      if (balance < spent + bump) {
        throw insufficientFunds(
          `balance ${balance}, queued cost ${spent}, tx bumped ${bump}, overshot ${spent + bump - balance}`,
          { balance, spent, bump },
        );
      }
    } else {
      if (balance < tx.cost) {
        throw insufficientFunds(`balance ${balance}, tx cost ${tx.cost}, overshot ${tx.cost - balance}`, {
          balance,
          cost: tx.cost,
        });
      }
      if (balance < spent + tx.cost) {
        throw insufficientFunds(
          `balance ${balance}, queued cost ${spent}, tx cost ${tx.cost}, overshot ${spent + tx.cost - balance}`,
          { balance, spent, cost: tx.cost },
        );
      }
      dropped = this.makeRoom(tx, known);
    }
    const s = known ?? this.senderOf(tx.sender, key);
    s.stateNonce = stateNonce;
    s.beat = this.modules.now();
    if (old !== undefined) this.remove(s, old);
    if (dropped !== undefined) this.remove(s, dropped);
    const entry: PoolEntry<T> = { tx, state: 'queued' };
    s.byNonce.set(tx.nonce, entry);
    this.byHash.set(hashKey, entry);
    this.queuedTotal++;
    return {
      entry,
      ...(old !== undefined ? { replaced: old } : {}),
      ...(dropped !== undefined ? { dropped } : {}),
      gapped: this.isGapped(entry),
    };
  }

  /**
   * The sender's next transaction to submit, marked `submitting`: its nonce is the next after
   * the sender's state and `sent` ones, and nothing of the sender is being submitted. Undefined
   * when it is not that transaction's turn yet (or the sender has none).
   */
  promote(sender: Uint8Array): PoolEntry<T> | undefined {
    const s = this.senders.get(byteKey(sender));
    if (s === undefined) return undefined;
    let n = s.stateNonce;
    for (let e = s.byNonce.get(n); e !== undefined; e = s.byNonce.get(++n)) {
      if (e.state === 'submitting') return undefined;
      if (e.state === 'queued') {
        e.state = 'submitting';
        this.queuedTotal--;
        s.beat = this.modules.now();
        return e;
      }
    }
    return undefined;
  }

  /** A miner accepted the transaction: it stays (`sent`) until a block holds it. */
  accepted(hash: Uint8Array): void {
    const e = this.byHash.get(byteKey(hash));
    if (e === undefined || e.state !== 'submitting') return;
    e.state = 'sent';
    e.sentAt = this.modules.now();
  }

  /**
   * The transaction was refused (by the client's pre-execution or a miner) or given up: it
   * leaves the pool, and its nonce is a gap again. Returns the sender's queued transactions,
   * all now waiting behind that gap.
   */
  failed(hash: Uint8Array): PoolEntry<T>[] {
    const e = this.byHash.get(byteKey(hash));
    if (e === undefined || e.state !== 'submitting') return [];
    const s = this.senders.get(byteKey(e.tx.sender))!;
    this.remove(s, e);
    this.forgetIfEmpty(s);
    return [...s.byNonce.values()].filter((x) => x.state === 'queued' && x.tx.nonce > e.tx.nonce);
  }

  /**
   * Block `blockNumber` of the canonical chain holds the transaction: it leaves the pool, and
   * its sender's next nonce is past it. The sender's record (its next nonce) is kept until
   * `forgetMined` says the state head reached that block: until then the state head's nonce
   * is behind. Returns the entry it was, if the pool held it.
   */
  included(hash: Uint8Array, blockNumber: bigint): PoolEntry<T> | undefined {
    return this.includedKey(byteKey(hash), blockNumber);
  }

  /** `included` by the hash's binary string (byteKey's): a block's hashes come as such (ClientBlock.txKeys). */
  includedKey(hashKey: string, blockNumber: bigint): PoolEntry<T> | undefined {
    const e = this.byHash.get(hashKey);
    if (e === undefined) return undefined;
    const s = this.senders.get(byteKey(e.tx.sender))!;
    this.remove(s, e);
    if (s.stateNonce <= e.tx.nonce) s.stateNonce = e.tx.nonce + 1n;
    if (s.minedIn === undefined || s.minedIn < blockNumber) s.minedIn = blockNumber;
    return e;
  }

  /** The state head is block `stateNumber`: forgets the senders with nothing pooled whose last mined transaction it holds. */
  forgetMined(stateNumber: bigint): void {
    for (const s of [...this.senders.values()]) {
      if (s.byNonce.size === 0 && (s.minedIn === undefined || s.minedIn <= stateNumber))
        this.senders.delete(byteKey(s.sender));
    }
  }

  /**
   * The sender's account as the state head now proves it: entries below its nonce (used by
   * transactions the pool did not see mined) leave the pool, except one being submitted (its
   * answer is on its way). Returns the entries removed.
   */
  stateMoved(sender: Uint8Array, account: PoolAccount | undefined): PoolEntry<T>[] {
    const s = this.senders.get(byteKey(sender));
    if (s === undefined) return [];
    s.stateNonce = maxOf(s.stateNonce, account?.nonce ?? 0n);
    const gone = [...s.byNonce.values()].filter((e) => e.tx.nonce < s.stateNonce && e.state !== 'submitting');
    for (const e of gone) this.remove(s, e);
    this.forgetIfEmpty(s);
    return gone;
  }

  /** Removes the queued transactions of every sender idle for longer than the lifetime; returns them. */
  evictStale(): PoolEntry<T>[] {
    const before = this.modules.now() - this.opts.lifetimeMs;
    const gone: PoolEntry<T>[] = [];
    for (const s of [...this.senders.values()]) {
      if (s.beat >= before) continue;
      for (const e of [...s.byNonce.values()]) {
        if (e.state !== 'queued') continue;
        this.remove(s, e);
        gone.push(e);
      }
      this.forgetIfEmpty(s);
    }
    return gone;
  }

  /**
   * The sender's next nonce counting what the pool holds (geth's pending nonce): from the
   * account's nonce `stateNonce` up, past every pooled nonce without a gap.
   */
  pendingNonce(sender: Uint8Array, stateNonce: bigint): bigint {
    const s = this.senders.get(byteKey(sender));
    if (s === undefined) return stateNonce;
    let n = maxOf(stateNonce, s.stateNonce);
    while (s.byNonce.has(n)) n++;
    return n;
  }

  /** Whether the entry waits for a nonce the pool does not hold (rather than for its turn). */
  isGapped(entry: PoolEntry<T>): boolean {
    const s = this.senders.get(byteKey(entry.tx.sender));
    if (s === undefined) return false;
    return this.pendingNonce(entry.tx.sender, s.stateNonce) < entry.tx.nonce;
  }

  get(hash: Uint8Array): PoolEntry<T> | undefined {
    return this.byHash.get(byteKey(hash));
  }

  /** Senders holding queued transactions: the ones whose account a moved state head may unblock. */
  queuedSenders(): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (const s of this.senders.values()) {
      for (const e of s.byNonce.values()) {
        if (e.state === 'queued') {
          out.push(s.sender);
          break;
        }
      }
    }
    return out;
  }

  /** Entries per state. */
  counts(): Record<PoolTxState, number> {
    const c = { queued: 0, submitting: 0, sent: 0 };
    for (const e of this.byHash.values()) c[e.state]++;
    return c;
  }

  /** Queued entries (cheaper than `counts`). */
  get queuedCount(): number {
    return this.queuedTotal;
  }

  /** Every entry, then forgets them all (the client is closing). */
  clear(): PoolEntry<T>[] {
    const all = [...this.byHash.values()];
    this.byHash.clear();
    this.senders.clear();
    this.queuedTotal = 0;
    return all;
  }

  /**
   * Makes room for a new queued transaction of `known`'s sender, or throws: the sender's queue
   * is full (its highest-nonce queued transaction makes way for a lower nonce, as geth keeps
   * the lowest), or all queues together are.
   */
  private makeRoom(tx: T, known: SenderTxs<T> | undefined): PoolEntry<T> | undefined {
    let dropped: PoolEntry<T> | undefined;
    const queued = [...(known?.byNonce.values() ?? [])].filter((e) => e.state === 'queued');
    if (queued.length >= this.opts.accountQueue) {
      const highest = queued.reduce((a, b) => (b.tx.nonce > a.tx.nonce ? b : a));
      if (highest.tx.nonce < tx.nonce) {
        throw new ClientError(ClientErrorCode.AccountLimit, 'account limit exceeded', {
          sender: tx.sender,
          queued: queued.length,
          limit: this.opts.accountQueue,
        });
      }
      dropped = highest;
    }
    if (dropped === undefined && this.queuedTotal >= this.opts.globalQueue) {
      throw new ClientError(ClientErrorCode.PoolFull, 'txpool is full', {
        queued: this.queuedTotal,
        limit: this.opts.globalQueue,
      });
    }
    return dropped;
  }

  private senderOf(sender: Uint8Array, key: string): SenderTxs<T> {
    const s: SenderTxs<T> = { sender, stateNonce: 0n, byNonce: new Map(), beat: this.modules.now() };
    this.senders.set(key, s);
    return s;
  }

  private remove(s: SenderTxs<T>, e: PoolEntry<T>): void {
    if (s.byNonce.get(e.tx.nonce) === e) s.byNonce.delete(e.tx.nonce);
    this.byHash.delete(byteKey(e.tx.hash));
    if (e.state === 'queued') this.queuedTotal--;
  }

  /** Drops the record of a sender with nothing pooled, unless a block not yet in the state head used its nonces. */
  private forgetIfEmpty(s: SenderTxs<T>): void {
    if (s.byNonce.size === 0 && s.minedIn === undefined) this.senders.delete(byteKey(s.sender));
  }
}

function maxOf(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** geth's core.ErrNonceTooLow as its pool words it. */
function nonceTooLow(next: bigint, nonce: bigint): ExecutionError {
  return new ExecutionError(
    ExecutionErrorCode.BadNonce,
    `nonce too low: next nonce ${next}, tx nonce ${nonce}`,
    {
      expected: next,
      found: nonce,
    },
  );
}

/** geth's core.ErrInsufficientFunds with the pool's detail. */
function insufficientFunds(detail: string, meta: Record<string, unknown>): ExecutionError {
  return new ExecutionError(
    ExecutionErrorCode.InsufficientFunds,
    `insufficient funds for gas * price + value: ${detail}`,
    meta,
  );
}
