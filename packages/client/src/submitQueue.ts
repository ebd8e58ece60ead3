/**
 * The path from a checked transaction to a miner (RainBlock §4, DESIGN §6): pre-execute it on
 * the state head to learn its witness, batch what was pre-executed against the same root (up
 * to `maxBatch`, or what arrives within `batchWindowMs`) into one `Submit` with one merged bag
 * (account-trie nodes above the compaction level left out: the miners hold them), and read the
 * miner's verdict. A stale verdict is answered by waiting for the state head to move and
 * pre-executing again, a bounded number of times; a miner that is down by the next one.
 *
 * Back-pressure, not deadlines (issue 15): at most `maxInFlight` Submit calls are outstanding;
 * what is pre-executed meanwhile waits here and goes out in fuller batches as calls return, so
 * an overloaded miner's queue stays a few batches long instead of outgrowing the deadline. A
 * call that still gets no answer (deadline, unreachable) is sent again as it was, up to
 * `submitAttempts` times, moving on through the miners: a miner answers a transaction it already
 * took accepted without executing it again, so only what was not taken is executed, and each
 * transaction gets its own outcome instead of the whole call failing.
 *
 * Pre-execution just in time: at most `maxWaiting` transactions are being pre-executed or wait
 * pre-executed for a Submit call; the rest wait their turn before pre-executing. A witness is
 * read at the state of its pre-execution and the miner revises it only while what it proves has
 * not changed since: with thousands in flight per client, transactions pre-executed at once and
 * then queued behind a few Submit calls reached the miner blocks later, and one in nine came
 * back stale (pre-executed again, submitted again) where one in a thousand did at 2,000.
 */
import type { Common } from '@ethereumjs/common';
import { type ServiceError, status } from '@grpc/grpc-js';
import { bytesEqual, NodeBag, toHex } from '@monsoon/dsm-tree';
import { unary } from '@monsoon/edge';
import {
  type BlockEnv,
  type ChainRules,
  type EvmPool,
  recoveredSenderKey,
  type SignedTx,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { submitRequestToProto, submitResponseFromProto, type TxResult, TxStatus } from '@monsoon/protocol';
import type { ChainView, ClientBlock } from './chain.js';
import type { ChainFollower } from './chainFollower.js';
import { ClientError, ClientErrorCode } from './clientError.js';
import type { MinerPool } from './minerPool.js';
import { MinerRefused } from './minerRefused.js';
import { nextEnv, stateAt } from './readBackend.js';
import type { PriorRead, RemoteState, StateRef, Witness } from './remoteState.js';
import { RpcError, RpcErrorCode } from './rpc/rpcError.js';
import type { SlotPredictor } from './slotPredictor.js';
import { speculate } from './speculate.js';
import { withoutCode } from './txRefusal.js';

export interface SubmitQueueOptions {
  rules: ChainRules;
  /** Most transactions batched into one submission. */
  maxBatch: number;
  /** Resubmissions of a transaction answered stale before it is given up. */
  maxStaleRetries: number;
  /** After a stale answer, how long to wait for the state head to move before trying again, ms. */
  staleWaitMs: number;
  /** Per-call deadline towards miners, ms. */
  deadlineMs: number;
  /** Most Submit calls outstanding at once, towards all miners together (see the file's comment). */
  maxInFlight: number;
  /**
   * Calls made for one batch whose answer does not come (deadline, miner unreachable) before its
   * transactions fail MINER_UNAVAILABLE; each tries the next miner (the same one if it is alone).
   */
  submitAttempts: number;
  /**
   * How long a pre-executed transaction waits for others to join its submission, ms (0: only
   * those of the same event-loop turn); a full batch goes at once. One Submit per turn was one
   * per transaction at a few hundred transactions/s, each ~0.1–0.2 ms of the client's CPU.
   */
  batchWindowMs: number;
  /**
   * Most transactions being pre-executed or waiting pre-executed for a Submit call; more wait
   * before pre-executing (see the file's comment). Two full calls' worth by default: enough to
   * fill every call that returns.
   */
  maxWaiting: number;
}

export const defaultSubmitQueueOptions: Omit<SubmitQueueOptions, 'rules'> = {
  maxBatch: 256,
  maxStaleRetries: 4,
  staleWaitMs: 500,
  deadlineMs: 10_000,
  maxInFlight: 2,
  submitAttempts: 4,
  batchWindowMs: 2,
  maxWaiting: 1024,
};

/** What the submit path counts (a part of ClientCounters: the same object is passed in). */
export interface SubmitCounters {
  accepted: number;
  /** Refused here, before any miner saw them. */
  rejectedEarly: number;
  /** Refused by a miner. */
  rejectedByMiner: number;
  staleReplies: number;
  /** Given up after too many stale replies. */
  abandoned: number;
  /** Submissions sent to miners, and the bag bytes they carried. */
  submissions: number;
  /** Submit calls sent again after no answer came (deadline, unreachable miner). */
  resubmissions: number;
  bagBytes: number;
  /** Witness bytes before bagging: the sum over transactions of what each alone needed, compacted. */
  unbaggedWitnessBytes: number;
  /** The same before compaction too: each transaction's full proofs (and code). */
  rawWitnessBytes: number;
}

export interface SubmitQueueModules {
  readonly remote: RemoteState;
  readonly chain: ChainView;
  readonly follower: ChainFollower;
  readonly miners: MinerPool;
  readonly common: Common;
  /** EVMs reused by pre-executions (building one costs more than running a transaction). */
  readonly evms: EvmPool;
  readonly counters: SubmitCounters;
  /** Guesses contract calls' slots for their first reads (see slotPredictor.ts). */
  readonly slots?: SlotPredictor;
  /** Told each pre-execution's time (ms) and fetch rounds. */
  readonly onPreExecuted?: (ms: number, rounds: number) => void;
}

/** A transaction pre-executed and waiting for the next submission. */
interface Batched {
  readonly raw: Uint8Array;
  /** The public key its sender was recovered to here, sent along so the miner checks, not recovers. */
  readonly key: Uint8Array | undefined;
  readonly at: StateRef;
  readonly served: Witness;
  readonly resolve: (r: TxResult) => void;
  readonly reject: (e: unknown) => void;
}

/** The group's sender keys packed in order (64 bytes each), if every one of them is known. */
function senderKeys(group: readonly Batched[]): Uint8Array | undefined {
  const keys = new Uint8Array(64 * group.length);
  for (let i = 0; i < group.length; i++) {
    const key = group[i]!.key;
    if (key === undefined) return undefined;
    keys.set(key, 64 * i);
  }
  return keys;
}

export class SubmitQueue {
  private batch: Batched[] = [];
  private flushScheduled = false;
  /** Submit calls outstanding. */
  private inFlight = 0;
  /** Transactions being pre-executed or waiting in `batch` (at most `maxWaiting`). */
  private held = 0;
  /** Transactions waiting for room to pre-execute, in arrival order. */
  private turns: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  /** The last environment `env` made, for the head and the second it was made at. */
  private lastEnv: BlockEnv | undefined;
  private envHead: ClientBlock | undefined;
  private envSecond = -1;

  constructor(
    readonly opts: SubmitQueueOptions,
    private readonly modules: SubmitQueueModules,
  ) {}

  /**
   * Pre-executes `tx` (from `from`, encoded as `raw`) and submits it; resolves once a miner
   * accepted it. Throws the ExecutionError of a pre-execution that ends invalid (no miner sees
   * it), MinerRefused for a miner's refusal, STALE_RETRIES when it stayed stale.
   *
   * `readAt`: a state the caller just read the transaction's first keys at (its admission).
   * The first pre-execution runs there while the state head is at most one block past it: the
   * reads are cached, where the newer head would cost a storage round (a block changes the
   * upper trie nodes of every path), and the miner revises a witness a block old. `readTree`:
   * the tree that read them, unchanged, which that pre-execution then runs on (it is changed), or
   * a plain transfer's walked paths, which it takes as its reads.
   */
  async send(
    tx: SignedTx,
    from: Uint8Array,
    raw: Uint8Array,
    readAt?: ClientBlock,
    readTree?: PriorRead,
  ): Promise<void> {
    const { follower, counters } = this.modules;
    for (let attempt = 0; ; attempt++) {
      // A stale answer's retry goes at once: sent to the back of the line it would wait there
      // while the state moves on, and come back stale again. With room, no promise is awaited.
      if (!this.takeTurn(attempt > 0)) await this.waitTurn();
      const head = follower.stateHead();
      const first =
        attempt === 0 &&
        readAt !== undefined &&
        (readAt === head || readAt.header.number + 1n >= head.header.number);
      const state = first ? readAt : head;
      const at = stateAt(state);
      const t0 = performance.now();
      let spec: Awaited<ReturnType<typeof speculate>>;
      try {
        spec = await speculate(
          this.modules.remote,
          at,
          // The block it lands in follows the chain head (which may be ahead of the state head).
          this.env(this.modules.chain.requireHead()),
          this.opts.rules,
          this.modules.common,
          tx,
          from,
          this.modules.evms,
          first ? readTree : undefined,
          this.modules.slots,
        );
      } catch (e) {
        this.release(1);
        throw e;
      }
      this.modules.onPreExecuted?.(performance.now() - t0, spec.rounds);
      if (spec.outcome.status === 'invalid') {
        this.release(1);
        counters.rejectedEarly++;
        throw spec.outcome.error;
      }
      const result = await this.enqueue(raw, recoveredSenderKey(tx), at, spec.served);
      if (result.status === TxStatus.Accepted) {
        counters.accepted++;
        return;
      }
      if (result.status === TxStatus.Invalid) {
        counters.rejectedByMiner++;
        throw new MinerRefused(result.reason);
      }
      counters.staleReplies++;
      if (attempt >= this.opts.maxStaleRetries) {
        counters.abandoned++;
        throw new ClientError(
          ClientErrorCode.StaleRetries,
          `transaction ${toHex(tx.hash)} was still stale after ${attempt + 1} submissions: ${withoutCode(result.reason)}`,
          { hash: tx.hash, submissions: attempt + 1 },
        );
      }
      // The miner is ahead of the state read here: wait until it moves (or a moment).
      await follower.stateChange(state, this.opts.staleWaitMs);
    }
  }

  /** Refuses what waits for a submission or for its turn to pre-execute (CLOSED). */
  close(): void {
    const err = new ClientError(ClientErrorCode.Closed, 'the client is closing');
    for (const q of this.batch) q.reject(err);
    this.held -= this.batch.length;
    this.batch = [];
    for (const t of this.turns) t.reject(err);
    this.turns = [];
  }

  /**
   * Takes a place to pre-execute where there is room (fewer than `maxWaiting` held, nobody in
   * line) or `now` (a retry: past the limit); false where the transaction must wait its turn.
   */
  private takeTurn(now: boolean): boolean {
    if (!now && (this.held >= this.opts.maxWaiting || this.turns.length > 0)) return false;
    this.held++;
    return true;
  }

  /** Resolves once this transaction's turn to pre-execute came, its place held (see release). */
  private waitTurn(): Promise<void> {
    return new Promise((resolve, reject) => this.turns.push({ resolve, reject }));
  }

  /**
   * The environment of the block after `head` (nextEnv's), kept while the head and the second
   * are the same: every pre-execution of a block's time built its own, bigints and all.
   */
  private env(head: ClientBlock): BlockEnv {
    const second = Math.floor(Date.now() / 1000);
    if (head !== this.envHead || second !== this.envSecond) {
      this.envHead = head;
      this.envSecond = second;
      this.lastEnv = nextEnv(head);
    }
    return this.lastEnv!;
  }

  /** `n` held places are free again (handed to a Submit call, or refused): the next in line take them. */
  private release(n: number): void {
    this.held -= n;
    while (this.held < this.opts.maxWaiting && this.turns.length > 0) {
      this.held++;
      this.turns.shift()!.resolve();
    }
  }

  /** Transactions waiting for their turn to pre-execute. */
  get queued(): number {
    return this.turns.length;
  }

  private enqueue(
    raw: Uint8Array,
    key: Uint8Array | undefined,
    at: StateRef,
    served: Witness,
  ): Promise<TxResult> {
    return new Promise((resolve, reject) => {
      this.batch.push({ raw, key, at, served, resolve, reject });
      if (this.batch.length >= this.opts.maxBatch) this.flush();
      else if (!this.flushScheduled) {
        this.flushScheduled = true;
        if (this.opts.batchWindowMs > 0) setTimeout(() => this.flush(), this.opts.batchWindowMs);
        else setImmediate(() => this.flush());
      }
    });
  }

  /** Submit calls outstanding now (at most `maxInFlight`). */
  get submitting(): number {
    return this.inFlight;
  }

  /** Transactions pre-executed and waiting for a Submit call. */
  get waiting(): number {
    return this.batch.length;
  }

  /**
   * Sends what is batched while fewer than `maxInFlight` calls are outstanding: one submission
   * per state root (the oldest waiting transaction's first), each with one merged bag; the rest
   * waits for a call to return.
   */
  private flush(): void {
    this.flushScheduled = false;
    while (this.inFlight < this.opts.maxInFlight && this.batch.length > 0) {
      const root = this.batch[0]!.at.stateRoot;
      const group: Batched[] = [];
      const rest: Batched[] = [];
      for (const q of this.batch) {
        if (group.length < this.opts.maxBatch && bytesEqual(q.at.stateRoot, root)) group.push(q);
        else rest.push(q);
      }
      this.batch = rest;
      this.release(group.length);
      this.inFlight++;
      void this.submit(group).finally(() => {
        this.inFlight--;
        this.flush();
      });
    }
  }

  private async submit(group: Batched[]): Promise<void> {
    const { counters, miners, remote } = this.modules;
    const bag = new NodeBag({ hash: keccak });
    for (const q of group) {
      counters.rawWitnessBytes += q.served.byteSize;
      counters.unbaggedWitnessBytes += remote.addToBag(bag, q.served);
    }
    const nodes = bag.values();
    counters.submissions++;
    counters.bagBytes += bag.byteSize;
    const req = submitRequestToProto({
      transactions: group.map((q) => q.raw),
      bag: nodes,
      prefetchedRoot: group[0]!.at.stateRoot,
      senderKeys: senderKeys(group),
    });
    const errors: string[] = [];
    for (let tried = 0; tried < this.opts.submitAttempts; tried++) {
      if (tried > 0) counters.resubmissions++;
      const miner = miners.current;
      try {
        const res = submitResponseFromProto(
          await unary(miner, miner.submit, req, { deadline: Date.now() + this.opts.deadlineMs }),
        );
        group.forEach((q, i) => {
          const r = res.results[i];
          if (r === undefined)
            q.reject(
              new ClientError(
                ClientErrorCode.MinerUnavailable,
                `the miner answered ${res.results.length} results for ${group.length} transactions`,
                { miner: miners.currentAddress, results: res.results.length, transactions: group.length },
              ),
            );
          else q.resolve(r);
        });
        return;
      } catch (e) {
        const code = (e as ServiceError).code;
        if (code === status.INVALID_ARGUMENT) {
          for (const q of group)
            q.reject(
              new RpcError(RpcErrorCode.Server, withoutCode((e as ServiceError).details ?? String(e))),
            );
          return;
        }
        errors.push(`${miners.currentAddress}: ${(e as Error).message}`);
        miners.next();
      }
    }
    const err = new ClientError(
      ClientErrorCode.MinerUnavailable,
      `no miner answered the submission in ${errors.length} calls (${errors.join('; ')})`,
      { miners: miners.addresses, calls: errors.length },
    );
    for (const q of group) q.reject(err);
  }
}
