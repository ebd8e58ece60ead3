/**
 * Where a checked transaction enters the client: it is admitted into the TxPool against its
 * sender's account at the state head, and each sender's transactions are handed to the
 * SubmitQueue one at a time, in nonce order. A transaction with a nonce gap waits in the pool
 * and goes out when the gap fills — by a later `send`, by a block (ours or another client's),
 * or when the state head moves — instead of being refused with "nonce too high".
 *
 * Two ways to wait, chosen per call:
 * - `'queued'` (eth_sendRawTransaction, as geth): resolves as soon as the transaction waits
 *   behind a gap (the hash is the answer; its later fate is only logged), else once a miner
 *   accepted it; rejects with the refusal otherwise.
 * - `'accepted'` (gRPC SendTransactions, the load generators' path): resolves only once a
 *   miner accepted it; rejects when it is refused, or dropped from the pool (replaced, evicted
 *   after the lifetime, its nonce used by another transaction).
 */
import { byteKey, toHex } from '@monsoon/dsm-tree';
import { type Logger, silentLogger } from '@monsoon/edge';
import type { SignedTx } from '@monsoon/execution';
import type { ChainView, ClientBlock } from './chain.js';
import type { ChainFollower } from './chainFollower.js';
import { ClientError, ClientErrorCode } from './clientError.js';
import { type ReadBackend, stateAt } from './readBackend.js';
import type { PriorRead } from './remoteState.js';
import type { SlotPredictor } from './slotPredictor.js';
import { firstReads } from './speculate.js';
import type { SubmitQueue } from './submitQueue.js';
import type { PoolEntry, PoolTx, TxPool } from './txPool.js';

/** A pooled transaction with what submitting it needs. */
export interface PooledTx extends PoolTx {
  readonly signed: SignedTx;
  readonly raw: Uint8Array;
  /** The state head its admission read the sender (and the pre-execution's first keys) at. */
  readonly readAt: ClientBlock;
  /**
   * What read them (the tree, or a plain transfer's walked paths), while its admission runs: a
   * pre-execution starting at once (the sender's turn) starts from it; one that waits reads
   * anew, and it is let go.
   */
  readTree: PriorRead | undefined;
}

export interface PoolSubmitterOptions {
  /** How often queued transactions past their lifetime are looked for, ms (geth: every minute). */
  evictEveryMs: number;
  logger: Logger;
}

export const defaultPoolSubmitterOptions: PoolSubmitterOptions = {
  evictEveryMs: 60_000,
  logger: silentLogger,
};

export interface PoolSubmitterModules {
  readonly pool: TxPool<PooledTx>;
  readonly submitter: SubmitQueue;
  readonly follower: ChainFollower;
  readonly chain: ChainView;
  /** Reads senders' accounts at the state head. */
  readonly reads: ReadBackend;
  /** Guesses contract calls' slots, read with the sender at admission (see slotPredictor.ts). */
  readonly slots?: SlotPredictor;
  /** Counts refusals by the pool as rejected early. */
  readonly counters: { rejectedEarly: number };
  /** Told the submit→inclusion latency (ms) of each transaction a miner accepted from here. */
  readonly onInclusion?: (ms: number) => void;
}

/** How long `send` waits: see the file's comment. */
export type SendWait = 'queued' | 'accepted';

interface Waiter {
  readonly accepted: Promise<void>;
  /** Settled when the transaction waits behind a gap: made only for a `'queued'` wait. */
  readonly queued: Promise<void> | undefined;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
  readonly markQueued: () => void;
}

/** What an `'accepted'` waiter does when its transaction waits behind a gap: nothing. */
const STAYS_WAITING = (): void => {};

export class PoolSubmitter {
  private readonly waiters = new Map<string, Waiter>();
  private readonly timer: NodeJS.Timeout;
  private refreshing = false;
  private refreshAgain = false;
  private closed = false;

  constructor(
    readonly opts: PoolSubmitterOptions,
    private readonly modules: PoolSubmitterModules,
  ) {
    modules.follower.onStateMoved(() => void this.refresh());
    modules.chain.onHead((b) => {
      for (const k of b.txKeys) {
        const e = modules.pool.includedKey(k, b.header.number);
        if (e === undefined) continue;
        if (e.sentAt !== undefined) modules.onInclusion?.(Date.now() - e.sentAt);
        // Mined without us submitting it (another client did): nothing more to wait for.
        if (e.state === 'queued') this.settleKey(k);
        this.pump(e.tx.sender);
      }
    });
    this.timer = setInterval(() => this.evict(), opts.evictEveryMs).unref();
  }

  /** Admits `tx` (from `from`, encoded as `raw`) and resolves as `wait` says; throws the pool's or the submission's refusal. */
  async send(signed: SignedTx, from: Uint8Array, raw: Uint8Array, wait: SendWait): Promise<void> {
    const { pool, reads, follower, chain } = this.modules;
    // The pre-execution's first reads come in the same storage round: it then finds them cached.
    const readAt = follower.stateHead();
    // The next block's coinbase (nextEnv's), without building the rest of its environment.
    const coinbase = chain.requireHead().header.miner;
    const { account, read } = await reads.accountRead(
      from,
      stateAt(readAt),
      firstReads(signed, from, coinbase, this.modules.slots?.predict(signed, from)),
    );
    const tx: PooledTx = {
      hash: signed.hash,
      sender: from,
      nonce: signed.nonce,
      maxFeePerGas: signed.maxFeePerGas,
      maxPriorityFeePerGas: signed.maxPriorityFeePerGas,
      cost: signed.gasLimit * signed.maxFeePerGas + signed.value,
      signed,
      raw,
      readAt,
      readTree: read,
    };
    let admitted: ReturnType<TxPool<PooledTx>['add']>;
    try {
      admitted = pool.add(tx, account);
    } catch (e) {
      this.modules.counters.rejectedEarly++;
      throw e;
    }
    if (admitted.replaced !== undefined)
      this.drop(admitted.replaced, `replaced by transaction ${toHex(tx.hash)} with a higher fee`);
    if (admitted.dropped !== undefined)
      this.drop(
        admitted.dropped,
        `its sender's queue is full (${pool.opts.accountQueue}): lower nonces came`,
      );
    const w = this.waiterOf(tx.hash, wait);
    if (admitted.gapped) w.markQueued();
    this.pump(from);
    tx.readTree = undefined;
    await (w.queued === undefined ? w.accepted : Promise.race([w.accepted, w.queued]));
  }

  /** Refuses every waiting caller (CLOSED) and stops looking for stale transactions. */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    const err = new ClientError(ClientErrorCode.Closed, 'the client is closing');
    for (const w of this.waiters.values()) w.reject(err);
    this.waiters.clear();
    this.modules.pool.clear();
  }

  /** Starts submitting the sender's next transaction, if it is its turn. */
  private pump(sender: Uint8Array): void {
    if (this.closed) return;
    const e = this.modules.pool.promote(sender);
    if (e !== undefined) void this.submit(e);
  }

  private async submit(e: PoolEntry<PooledTx>): Promise<void> {
    const { pool, submitter } = this.modules;
    const { tx } = e;
    // Taken once: a tree is the pre-execution's to change.
    const readTree = tx.readTree;
    tx.readTree = undefined;
    try {
      await submitter.send(tx.signed, tx.sender, tx.raw, tx.readAt, readTree);
    } catch (err) {
      // Its nonce is free again: what the sender queued above it now waits behind a gap.
      for (const q of pool.failed(tx.hash)) this.waiters.get(byteKey(q.tx.hash))?.markQueued();
      this.opts.logger.debug?.('pooled transaction refused', {
        hash: toHex(tx.hash),
        error: (err as Error).message,
      });
      this.settle(tx.hash, err);
      return;
    }
    pool.accepted(tx.hash);
    this.settle(tx.hash);
    this.pump(tx.sender);
  }

  /** After the state head moved: rereads the accounts of senders with queued transactions, drops what their nonces made obsolete, promotes what is now next. */
  private async refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    try {
      do {
        this.refreshAgain = false;
        if (this.closed) return;
        this.evict();
        const { pool, reads, follower } = this.modules;
        const head = follower.stateHead();
        pool.forgetMined(head.header.number);
        const senders = pool.queuedSenders();
        const accounts = await Promise.allSettled(senders.map((s) => reads.accountAt(s, stateAt(head))));
        senders.forEach((s, i) => {
          const a = accounts[i]!;
          if (a.status === 'rejected') return; // storage unreachable: tried again on the next move
          for (const gone of pool.stateMoved(s, a.value)) {
            if (gone.state !== 'queued') continue;
            this.drop(
              gone,
              `nonce too low: next nonce ${a.value?.nonce ?? 0n}, tx nonce ${gone.tx.nonce} (used by another transaction)`,
            );
          }
          this.pump(s);
        });
      } while (this.refreshAgain);
    } catch (e) {
      // No head yet: nothing can be unblocked.
      this.opts.logger.debug?.('pool refresh skipped', { error: (e as Error).message });
    } finally {
      this.refreshing = false;
    }
  }

  /** Drops queued transactions of senders idle past the lifetime. */
  private evict(): void {
    for (const e of this.modules.pool.evictStale())
      this.drop(
        e,
        `queued longer than ${this.modules.pool.opts.lifetimeMs} ms without its sender's nonce gap filling`,
      );
  }

  /** A pooled transaction left the pool without reaching a miner. */
  private drop(e: PoolEntry<PooledTx>, why: string): void {
    this.opts.logger.debug?.('pooled transaction dropped', { hash: toHex(e.tx.hash), why });
    this.settle(e.tx.hash, new ClientError(ClientErrorCode.Dropped, why, { hash: e.tx.hash }));
  }

  private settle(hash: Uint8Array, err?: unknown): void {
    this.settleKey(byteKey(hash), err);
  }

  /** `settle` by the hash's binary string. */
  private settleKey(k: string, err?: unknown): void {
    const w = this.waiters.get(k);
    if (w === undefined) return;
    this.waiters.delete(k);
    if (err === undefined) w.resolve();
    else w.reject(err);
  }

  private waiterOf(hash: Uint8Array, wait: SendWait): Waiter {
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const accepted = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    let queued: Promise<void> | undefined;
    let markQueued = STAYS_WAITING;
    if (wait === 'queued') {
      // Nobody may be listening any more (the caller took the hash when it was queued).
      accepted.catch(() => {});
      queued = new Promise<void>((res) => {
        markQueued = res;
      });
    }
    const w = { accepted, queued, resolve, reject, markQueued };
    this.waiters.set(byteKey(hash), w);
    return w;
  }
}
