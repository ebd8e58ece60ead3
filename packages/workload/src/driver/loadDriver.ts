/**
 * The load driver: sends the traffic generator's transactions to Monsoon clients, open loop at a
 * target rate or closed loop at a concurrency, watches a miner's canonical blocks for their
 * inclusion, and measures what became of each (see {@link LoadResult}).
 *
 * **Nonce order.** A miner executes what it accepts at once, so a sender's nonce n+1 is only
 * valid once nonce n was accepted. The driver keeps at most one unanswered transaction per
 * sender: a sender's later transactions wait behind it (held) and go out, in order, as each
 * answer comes. Each sender is always sent to the same client (index mod the number of clients),
 * so its transactions also reach the miners in order when clients use different miners.
 *
 * **Refusals.** A refused transaction never used its nonce, so every later transaction of its
 * sender would be refused for a nonce gap. The generator owns the nonces and keeps counting, so
 * the driver keeps a per-sender offset instead: each refusal raises it by one, and a transaction
 * is signed again, one nonce lower per refusal, when it is sent (the same transfer, recipient
 * and amount: the traffic mix is unchanged). Refusals should be rare on a fresh chain; each
 * costs its sender one more signature per later transaction. A transaction whose fate is unknown
 * (its call failed, a JSON-RPC internal error) may yet be included, so no offset can be right:
 * its sender is retired, and its held and later transactions are counted unsent.
 *
 * **Batching.** Every `batchIntervalMs` the driver generates what is due (open loop: rate ×
 * elapsed time; closed loop: up to `concurrency` outstanding, held ones included) and sends
 * everything ready, one call per client of at most `maxBatch` transactions per call. A call
 * answers once each transaction is accepted or refused.
 *
 * **Inclusion** is learnt from the block stream, on the driver's clock: latency is from the
 * moment a transaction was sent to the moment the block holding it arrived. A block that
 * replaces one already seen (a reorg) undoes the inclusions of the replaced blocks.
 *
 * **Drain.** After the run phase (a duration, or a number of transactions) nothing new is
 * generated; held transactions are still sent, and the driver waits until every transaction is
 * finished (committed, refused or failed) or `drainTimeoutMs` passed. Accepted transactions not
 * in a block by then are dropped.
 */
import type { Common } from '@ethereumjs/common';
import { formatHostPort, parseHostPort } from '@monsoon/edge';
import { makeCommon } from '@monsoon/execution';
import { bytesToHex } from '@monsoon/util';
import { PUBLIC_KEY_BYTES } from '../deriveAccount.js';
import type { GeneratedTx, KeySource, TrafficGenerator } from '../traffic.js';
import { WorkloadError, WorkloadErrorCode } from '../workloadError.js';
import { BlockWatcher, type WatchedBlock } from './blockWatcher.js';
import { endpointName, parseClientEndpoint } from './clientEndpoint.js';
import { GrpcSubmitter } from './grpcSubmitter.js';
import { JsonRpcSubmitter } from './jsonRpcSubmitter.js';
import { LatencyLog } from './latencyLog.js';
import type { LoadResult, ReasonSamples, StopReason, WitnessReport } from './loadResult.js';
import { summarizeLatency } from './percentiles.js';
import { ReasonLog } from './reasonLog.js';
import { resignWithNonce } from './resignWithNonce.js';
import { REFUSERS, type Refuser, type SubmitOutcome, type TxSubmitter } from './txSubmitter.js';
import { metricsUrl, scrapeWitnessCounters, type WitnessCounters } from './witnessMetrics.js';

/** Open loop at `rate` transactions/s, or closed loop with `concurrency` transactions outstanding. */
export type LoadShape = { readonly rate: number } | { readonly concurrency: number };

/** The run phase lasts `durationMs`, or until `count` transactions were generated. */
export type RunLength = { readonly durationMs: number } | { readonly count: number };

export interface LoadDriverOptions {
  /** Clients: `host:port` for gRPC ClientService (the bulk path), an http(s) URL for JSON-RPC. */
  readonly clients: readonly string[];
  /** The miner whose canonical blocks tell inclusion: gRPC `host:port`. */
  readonly miner: string;
  /** The clients' Prometheus endpoints (`host:port` or URL), read before and after for witness bytes; may be empty. */
  readonly metrics: readonly string[];
  readonly load: LoadShape;
  readonly until: RunLength;
  /** Longest wait, after the run phase, for what is in flight. */
  readonly drainTimeoutMs: number;
  /** How often transactions are generated and sent. */
  readonly batchIntervalMs: number;
  /** Most transactions in one call. */
  readonly maxBatch: number;
  /** Deadline of one call. */
  readonly callDeadlineMs: number;
  /** Open loop: at most this many outstanding; what falls due beyond is counted missed, not generated. */
  readonly maxOutstanding: number;
  /**
   * Closed loop: a transaction sent this long ago and still not finished stops counting against
   * the concurrency (so transactions a miner accepted and lost cannot stall the run); it still
   * counts as committed if it is included later.
   */
  readonly inclusionTimeoutMs: number;
  /** Calls failing in a row that end the run phase (the clients are gone). */
  readonly maxConsecutiveCallFailures: number;
  /**
   * Refusals, with nothing accepted yet, that end the run phase: every transaction is refused
   * (a chain whose nonces are past the genesis', another chain id), so the run would measure nothing.
   */
  readonly maxRefusedBeforeAccepted: number;
  /** How long the miner may take to stream its head block. */
  readonly minerReadyTimeoutMs: number;
  /** How often `onProgress` hears of the run. */
  readonly progressIntervalMs: number;
  /** Distinct refusal reasons kept per refuser. */
  readonly reasonSamples: number;
  /** Free-form facts copied into the result's config (seed, genesis file, …). */
  readonly meta: Readonly<Record<string, string | number>>;
  /**
   * Send each transaction's signer's public key with it where the key source keeps them (gRPC
   * clients then check signatures in one batch instead of recovering each: less client CPU,
   * the same outcome).
   */
  readonly senderKeys: boolean;
}

/** Closed loop, 256 in flight, for a minute; 5 ms batches of at most 500. */
export const defaultLoadDriverOptions: Omit<LoadDriverOptions, 'clients' | 'miner'> = {
  metrics: [],
  load: { concurrency: 256 },
  until: { durationMs: 60_000 },
  drainTimeoutMs: 30_000,
  batchIntervalMs: 5,
  maxBatch: 500,
  callDeadlineMs: 60_000,
  maxOutstanding: 200_000,
  inclusionTimeoutMs: 30_000,
  maxConsecutiveCallFailures: 20,
  maxRefusedBeforeAccepted: 1_000,
  minerReadyTimeoutMs: 10_000,
  progressIntervalMs: 250,
  reasonSamples: 5,
  meta: {},
  senderKeys: true,
};

/** A snapshot of a running load, for a progress line. */
export interface LoadProgress {
  readonly phase: 'run' | 'drain';
  readonly elapsedMs: number;
  readonly generated: number;
  readonly submitted: number;
  readonly accepted: number;
  readonly committed: number;
  readonly rejected: number;
  readonly failed: number;
  /** Generated, not yet committed, refused or failed. */
  readonly outstanding: number;
  /** Inclusions per second since the previous snapshot. */
  readonly recentCommittedPerSecond: number;
  /** Latency of the inclusions since the previous snapshot, ms; null when there were none. */
  readonly recentP50Ms: number | null;
  readonly recentP99Ms: number | null;
}

export interface LoadDriverModules {
  /** Where the transactions come from (it owns the nonces). */
  readonly traffic: TrafficGenerator;
  /** The generator's accounts: keys to sign renumbered transactions with. */
  readonly accounts: KeySource;
  /** Monotonic milliseconds (default `performance.now`). */
  readonly clock?: () => number;
  readonly onProgress?: (p: LoadProgress) => void;
}

type TxState = 'waiting' | 'sent' | 'accepted' | 'committed' | 'refused' | 'failed';

/** One generated transaction on its way. */
interface Tracked {
  readonly tx: GeneratedTx;
  /** 0x-hex hash of what was sent (after any renumbering). */
  hash: string;
  state: TxState;
  answered: boolean;
  sentAt: number;
  /** Its entry in the latency log while committed. */
  sample: number;
  /** Past the inclusion timeout, unfinished: no longer counted against the concurrency. */
  overdue: boolean;
}

/** Blocks whose inclusions a later block may still undo. */
const REORG_WINDOW = 64n;

function badOption(field: string, expected: string, found: unknown): never {
  throw new WorkloadError(
    WorkloadErrorCode.BadOptions,
    `load ${field}: expected ${expected}, found ${JSON.stringify(found)}`,
    { field, expected, found },
  );
}

function positiveInt(v: number, field: string): void {
  if (!Number.isSafeInteger(v) || v < 1) badOption(field, 'a positive integer', v);
}

function checkOptions(o: LoadDriverOptions): void {
  if (o.clients.length === 0) badOption('clients', 'at least one client', o.clients);
  try {
    parseHostPort(o.miner, 'miner');
  } catch {
    badOption('miner', 'host:port', o.miner);
  }
  if ('rate' in o.load) {
    if (!(Number.isFinite(o.load.rate) && o.load.rate > 0)) badOption('rate', 'a rate > 0 tx/s', o.load.rate);
  } else positiveInt(o.load.concurrency, 'concurrency');
  if ('durationMs' in o.until) {
    if (!(Number.isFinite(o.until.durationMs) && o.until.durationMs > 0))
      badOption('durationMs', 'a duration > 0 ms', o.until.durationMs);
  } else positiveInt(o.until.count, 'count');
  for (const k of [
    'drainTimeoutMs',
    'batchIntervalMs',
    'callDeadlineMs',
    'progressIntervalMs',
    'inclusionTimeoutMs',
  ] as const)
    if (!(Number.isFinite(o[k]) && o[k] >= 0)) badOption(k, 'a time ≥ 0 ms', o[k]);
  for (const k of [
    'maxBatch',
    'maxOutstanding',
    'maxConsecutiveCallFailures',
    'maxRefusedBeforeAccepted',
    'reasonSamples',
  ] as const)
    positiveInt(o[k], k);
}

/** Drives one load run: `create()` connects, `run()` runs it once and closes everything. */
export class LoadDriver {
  readonly options: LoadDriverOptions;
  private readonly traffic: TrafficGenerator;
  private readonly accounts: KeySource;
  private readonly clock: () => number;
  private readonly onProgress: ((p: LoadProgress) => void) | undefined;
  private readonly submitters: TxSubmitter[];
  private watcher: BlockWatcher | undefined;
  private common: Common | undefined;

  // Per sender (account index).
  /** 1 while a transaction of the sender is ready or sent and unanswered. */
  private readonly busy: Uint8Array;
  private readonly retired: Uint8Array;
  /** Refusals so far: how many nonces the sender's later transactions move down. */
  private readonly shifts: Uint32Array;
  private readonly held = new Map<number, Tracked[]>();
  private heldCount = 0;
  private ready: Tracked[] = [];
  /** Sent transactions in sending order, from `sentHead` on: those the inclusion timeout may still catch. */
  private sentQueue: Tracked[] = [];
  private sentHead = 0;
  private overdue = 0;

  private readonly byHash = new Map<string, Tracked>();
  private readonly blockTxs = new Map<bigint, Tracked[]>();
  private readonly latency = new LatencyLog();
  private readonly submittedPerSecond: number[] = [];
  private readonly refusals: Record<Refuser, ReasonLog>;
  private readonly failures: ReasonLog;

  private generated = 0;
  /** Open loop: transactions the schedule has reached (generated + missed). */
  private scheduled = 0;
  private missed = 0;
  private submitted = 0;
  private accepted = 0;
  private committed = 0;
  private unsentRetired = 0;
  private renumbered = 0;
  private inSent = 0;
  private outstanding = 0;
  private consecutiveFailures = 0;
  private blocksSeen = 0;
  private blocksWithRunTxs = 0;
  private reorgs = 0;

  private start = 0;
  private startedAt = '';
  private runEnd = 0;
  private drainEnd = 0;
  private ran = false;
  private phase: 'idle' | 'run' | 'drain' | 'done' = 'idle';
  private stopReason: StopReason | undefined;
  private drainDeadline = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastProgress = { at: 0, committed: 0, sample: 0 };
  private finish: (() => void) | undefined;
  private fail: ((e: unknown) => void) | undefined;

  private constructor(o: LoadDriverOptions, modules: LoadDriverModules, submitters: TxSubmitter[]) {
    this.options = o;
    this.traffic = modules.traffic;
    this.accounts = modules.accounts;
    this.clock = modules.clock ?? (() => performance.now());
    this.onProgress = modules.onProgress;
    this.submitters = submitters;
    const n = modules.accounts.count;
    this.busy = new Uint8Array(n);
    this.retired = new Uint8Array(n);
    this.shifts = new Uint32Array(n);
    const log = () => new ReasonLog(o.reasonSamples);
    this.refusals = { client: log(), miner: log(), stale: log(), rpc: log() };
    this.failures = log();
  }

  /**
   * Checks the options, opens the clients and subscribes to the miner's blocks (waiting for its
   * head: MINER_UNAVAILABLE if it does not come). Throws WorkloadError BAD_OPTIONS, DriverError.
   */
  static async create(
    opts: Partial<LoadDriverOptions> & Pick<LoadDriverOptions, 'clients' | 'miner'>,
    modules: LoadDriverModules,
  ): Promise<LoadDriver> {
    const o: LoadDriverOptions = { ...defaultLoadDriverOptions, ...opts };
    checkOptions(o);
    if (modules.accounts.count < 2) badOption('accounts', 'at least 2 accounts', modules.accounts.count);
    const endpoints = o.clients.map(parseClientEndpoint);
    for (const m of o.metrics) metricsUrl(m);
    const submitters = endpoints.map((e) =>
      e.kind === 'grpc'
        ? new GrpcSubmitter(endpointName(e), o.callDeadlineMs)
        : new JsonRpcSubmitter(endpointName(e), o.callDeadlineMs),
    );
    const driver = new LoadDriver(o, modules, submitters);
    try {
      driver.watcher = await BlockWatcher.start(
        { miner: formatHostPort(parseHostPort(o.miner, 'miner')), readyTimeoutMs: o.minerReadyTimeoutMs },
        (b) => driver.onBlock(b),
        driver.clock,
      );
    } catch (e) {
      for (const s of submitters) s.close();
      throw e;
    }
    return driver;
  }

  /** Runs the load once (run phase, then drain) and resolves with what it measured; closes everything. */
  async run(): Promise<LoadResult> {
    if (this.ran) badOption('run', 'one run per driver', 'a second run');
    this.ran = true;
    let before: WitnessCounters | undefined;
    let witnessError: string | undefined;
    if (this.options.metrics.length > 0) {
      try {
        before = await scrapeWitnessCounters(this.options.metrics);
      } catch (e) {
        witnessError = (e as Error).message;
      }
    }
    this.phase = 'run';
    this.start = this.clock();
    this.startedAt = new Date().toISOString();
    this.lastProgress = { at: this.start, committed: 0, sample: 0 };
    try {
      await new Promise<void>((resolve, reject) => {
        this.finish = resolve;
        this.fail = reject;
        this.tick();
      });
    } finally {
      this.close();
    }
    let witness: WitnessReport | null = null;
    if (before !== undefined) {
      try {
        witness = this.witnessReport(before, await scrapeWitnessCounters(this.options.metrics));
      } catch (e) {
        witnessError = (e as Error).message;
      }
    }
    return this.result(witness, witnessError);
  }

  /**
   * Ends the run phase now (the drain follows); a second call ends the drain too. For Ctrl-C.
   */
  stop(): void {
    if (this.phase === 'run') this.stopReason ??= 'stopped';
    else if (this.phase === 'drain') this.drainDeadline = this.clock();
  }

  // ------------------------------------------------------------------ the loop

  private tick(): void {
    this.timer = undefined;
    try {
      const now = this.clock();
      if (this.phase === 'run') {
        this.markOverdue(now);
        this.generate(now);
        const reason = this.runOver(now);
        if (reason !== undefined) {
          this.stopReason = reason;
          this.phase = 'drain';
          this.runEnd = now;
          this.drainDeadline = now + this.options.drainTimeoutMs;
        }
      }
      this.flush(now);
      if (this.phase === 'drain' && (this.outstanding === 0 || now >= this.drainDeadline)) {
        this.phase = 'done';
        this.drainEnd = now;
        this.finish?.();
        return;
      }
      if (this.onProgress !== undefined && now - this.lastProgress.at >= this.options.progressIntervalMs)
        this.onProgress(this.progress(now));
      this.timer = setTimeout(() => this.tick(), this.options.batchIntervalMs);
    } catch (e) {
      this.phase = 'done';
      this.fail?.(e);
    }
  }

  private runOver(now: number): StopReason | undefined {
    if (this.stopReason !== undefined) return this.stopReason;
    const { until, load } = this.options;
    if ('count' in until) {
      const made = 'rate' in load ? this.scheduled : this.generated;
      return made >= until.count ? 'count' : undefined;
    }
    return now - this.start >= until.durationMs ? 'duration' : undefined;
  }

  /** Generates what the load shape calls for now. */
  private generate(now: number): void {
    const { load, until } = this.options;
    if ('rate' in load) {
      const total = 'count' in until ? until.count : Math.floor((load.rate * until.durationMs) / 1000);
      const due = Math.min(total, Math.floor((load.rate * (now - this.start)) / 1000));
      while (this.scheduled < due) {
        if (this.outstanding >= this.options.maxOutstanding) {
          this.missed += due - this.scheduled;
          this.scheduled = due;
          break;
        }
        this.produce();
        this.scheduled++;
      }
      return;
    }
    const left = 'count' in until ? until.count - this.generated : Number.POSITIVE_INFINITY;
    const n = Math.min(load.concurrency - (this.outstanding - this.overdue), left);
    for (let i = 0; i < n; i++) this.produce();
  }

  /** One transaction from the generator: ready if its sender is free, else held behind it. */
  private produce(): void {
    const tx = this.traffic.next();
    this.generated++;
    if (this.retired[tx.from]) {
      this.unsentRetired++;
      return;
    }
    const t: Tracked = {
      tx,
      hash: '',
      state: 'waiting',
      answered: false,
      sentAt: 0,
      sample: -1,
      overdue: false,
    };
    this.outstanding++;
    if (this.busy[tx.from]) {
      const q = this.held.get(tx.from);
      if (q === undefined) this.held.set(tx.from, [t]);
      else q.push(t);
      this.heldCount++;
    } else {
      this.busy[tx.from] = 1;
      this.ready.push(t);
    }
  }

  /** Sends everything ready: per client, calls of at most maxBatch. */
  private flush(now: number): void {
    if (this.ready.length === 0) return;
    const k = this.submitters.length;
    const perClient: Tracked[][] = Array.from({ length: k }, () => []);
    for (const t of this.ready) perClient[t.tx.from % k]!.push(t);
    this.ready = [];
    const second = Math.floor((now - this.start) / 1000);
    for (let c = 0; c < k; c++) {
      const list = perClient[c]!;
      for (let i = 0; i < list.length; i += this.options.maxBatch) {
        const batch = list.slice(i, i + this.options.maxBatch);
        const raws = batch.map((t) => this.prepare(t, now));
        this.submittedPerSecond[second] = (this.submittedPerSecond[second] ?? 0) + batch.length;
        this.submitters[c]!.send(raws, this.senderKeys(batch)).then(
          (outcomes) => this.answered(batch, outcomes),
          (e: unknown) => this.callFailed(batch, e),
        );
      }
    }
  }

  /** The public keys of `batch`'s senders, packed (a renumbered transaction keeps its signer); undefined without. */
  private senderKeys(batch: readonly Tracked[]): Uint8Array | undefined {
    const accounts = this.accounts;
    if (!this.options.senderKeys || accounts.publicKey === undefined) return undefined;
    const keys = new Uint8Array(PUBLIC_KEY_BYTES * batch.length);
    for (let i = 0; i < batch.length; i++)
      keys.set(accounts.publicKey(batch[i]!.tx.from), PUBLIC_KEY_BYTES * i);
    return keys;
  }

  /** The bytes to send for `t` (signed again under a lower nonce after refusals of its sender). */
  private prepare(t: Tracked, now: number): Uint8Array {
    const { tx } = t;
    const shift = this.shifts[tx.from]!;
    let raw = tx.raw;
    let hash = tx.hash;
    if (shift > 0) {
      this.common ??= makeCommon(this.traffic.options.chainId);
      ({ raw, hash } = resignWithNonce(
        tx.raw,
        tx.nonce - BigInt(shift),
        this.accounts.privateKey(tx.from),
        this.common,
      ));
      this.renumbered++;
    }
    t.hash = bytesToHex(hash);
    t.state = 'sent';
    t.sentAt = now;
    this.byHash.set(t.hash, t);
    this.sentQueue.push(t);
    this.submitted++;
    this.inSent++;
    return raw;
  }

  // ------------------------------------------------------------------ answers

  private answered(batch: readonly Tracked[], outcomes: readonly SubmitOutcome[]): void {
    if (this.phase === 'done') return;
    this.consecutiveFailures = 0;
    batch.forEach((t, i) => {
      const o = outcomes[i]!;
      t.answered = true;
      const from = t.tx.from;
      if (o.status === 'accepted') {
        if (t.state === 'sent') {
          t.state = 'accepted';
          this.inSent--;
          this.accepted++;
        }
        this.release(from);
        return;
      }
      if (t.state === 'committed' || t.state === 'accepted') {
        // Already seen in a block: it is on the chain whatever this answer says.
        this.release(from);
        return;
      }
      this.inSent--;
      this.settle(t);
      this.byHash.delete(t.hash);
      if (o.status === 'refused') {
        t.state = 'refused';
        this.refusals[o.by].add(o.error);
        this.shifts[from]!++;
        if (
          this.accepted === 0 &&
          this.phase === 'run' &&
          this.rejectedTotal() >= this.options.maxRefusedBeforeAccepted
        )
          this.stopReason ??= 'refusals';
        this.release(from);
      } else {
        t.state = 'failed';
        this.failures.add(o.error);
        this.retire(from);
      }
    });
  }

  private callFailed(batch: readonly Tracked[], e: unknown): void {
    if (this.phase === 'done') return;
    const reason = (e as Error)?.message ?? String(e);
    if (++this.consecutiveFailures >= this.options.maxConsecutiveCallFailures && this.phase === 'run')
      this.stopReason ??= 'call-failures';
    for (const t of batch) {
      t.answered = true;
      if (t.state === 'committed' || t.state === 'accepted') {
        this.release(t.tx.from);
        continue;
      }
      this.inSent--;
      this.settle(t);
      this.byHash.delete(t.hash);
      t.state = 'failed';
      this.failures.add(reason);
      this.retire(t.tx.from);
    }
  }

  /** `t` is finished (committed, refused or failed): it is no longer outstanding. */
  private settle(t: Tracked): void {
    this.outstanding--;
    if (t.overdue) {
      t.overdue = false;
      this.overdue--;
    }
  }

  /** Flags sent transactions unfinished after the inclusion timeout (see {@link LoadDriverOptions.inclusionTimeoutMs}). */
  private markOverdue(now: number): void {
    const q = this.sentQueue;
    let i = this.sentHead;
    for (; i < q.length; i++) {
      const t = q[i]!;
      if (t.state === 'sent' || t.state === 'accepted') {
        if (now - t.sentAt < this.options.inclusionTimeoutMs) break;
        t.overdue = true;
        this.overdue++;
      }
    }
    this.sentHead = i;
    if (i > 4096 && i > q.length / 2) {
      this.sentQueue = q.slice(i);
      this.sentHead = 0;
    }
  }

  /** The sender's transaction was answered: its next held one (if any) becomes ready. */
  private release(from: number): void {
    const q = this.held.get(from);
    if (q === undefined) {
      this.busy[from] = 0;
      return;
    }
    this.ready.push(q.shift()!);
    this.heldCount--;
    if (q.length === 0) this.held.delete(from);
  }

  /** The sender's nonce is unknowable: nothing more of it is sent. */
  private retire(from: number): void {
    this.retired[from] = 1;
    this.busy[from] = 0;
    const q = this.held.get(from);
    if (q === undefined) return;
    this.held.delete(from);
    this.heldCount -= q.length;
    this.outstanding -= q.length;
    this.unsentRetired += q.length;
  }

  // ------------------------------------------------------------------ blocks

  private onBlock(b: WatchedBlock): void {
    if (this.phase === 'idle' || this.phase === 'done') return;
    this.blocksSeen++;
    let replaced = false;
    for (const [n, list] of this.blockTxs) {
      if (n < b.number) continue;
      replaced = true;
      this.blockTxs.delete(n);
      for (const t of list) {
        if (t.state !== 'committed') continue;
        t.state = 'accepted';
        this.committed--;
        this.outstanding++;
        this.latency.strike(t.sample);
        t.sample = -1;
        this.byHash.set(t.hash, t);
      }
    }
    if (replaced) this.reorgs++;
    const mine: Tracked[] = [];
    for (const h of b.txHashes) {
      const t = this.byHash.get(h);
      if (t === undefined) continue;
      if (t.state === 'sent') {
        // Included before its call answered: it was accepted.
        this.inSent--;
        this.accepted++;
      }
      t.state = 'committed';
      this.committed++;
      this.settle(t);
      t.sample = this.latency.add(b.receivedAt - this.start, b.receivedAt - t.sentAt);
      this.byHash.delete(h);
      mine.push(t);
    }
    if (mine.length > 0) {
      this.blockTxs.set(b.number, mine);
      this.blocksWithRunTxs++;
    }
    for (const n of this.blockTxs.keys()) if (n + REORG_WINDOW < b.number) this.blockTxs.delete(n);
  }

  // ------------------------------------------------------------------ reporting

  private progress(now: number): LoadProgress {
    const last = this.lastProgress;
    const recent = summarizeLatency(this.latency.latenciesFrom(last.sample));
    const seconds = (now - last.at) / 1000;
    const p: LoadProgress = {
      phase: this.phase === 'run' ? 'run' : 'drain',
      elapsedMs: now - this.start,
      generated: this.generated,
      submitted: this.submitted,
      accepted: this.accepted,
      committed: this.committed,
      rejected: this.rejectedTotal(),
      failed: this.failures.count,
      outstanding: this.outstanding,
      recentCommittedPerSecond: seconds > 0 ? Math.max(0, this.committed - last.committed) / seconds : 0,
      recentP50Ms: recent?.p50 ?? null,
      recentP99Ms: recent?.p99 ?? null,
    };
    this.lastProgress = { at: now, committed: this.committed, sample: this.latency.length };
    return p;
  }

  private rejectedTotal(): number {
    let n = 0;
    for (const r of REFUSERS) n += this.refusals[r].count;
    return n;
  }

  private witnessReport(before: WitnessCounters, after: WitnessCounters): WitnessReport {
    const d = (k: keyof WitnessCounters) => Math.max(0, after[k] - before[k]);
    const per = (v: number) => (this.committed > 0 ? v / this.committed : null);
    return {
      endpoints: this.options.metrics.length,
      bagBytes: d('bagBytes'),
      unbaggedWitnessBytes: d('unbaggedWitnessBytes'),
      proofBytesFetched: d('proofBytesFetched'),
      bagBytesPerTx: per(d('bagBytes')),
      unbaggedWitnessBytesPerTx: per(d('unbaggedWitnessBytes')),
      proofBytesFetchedPerTx: per(d('proofBytesFetched')),
      storageCallsPerTx: per(d('storageCalls')),
      submissionsPerTx: per(d('submissions')),
    };
  }

  private result(witness: WitnessReport | null, witnessError: string | undefined): LoadResult {
    const o = this.options;
    const t = this.traffic.options;
    const runMs = this.runEnd - this.start;
    const totalMs = this.drainEnd - this.start;
    const rejectedBy = {} as Record<Refuser, number>;
    for (const r of REFUSERS) rejectedBy[r] = this.refusals[r].count;
    const latency = summarizeLatency(this.latency.latenciesFrom(0));
    const series = this.latency.series(Math.max(1, Math.ceil(totalMs / 1000)), this.submittedPerSecond);
    const window = Math.max(runMs, this.latency.lastAt()) / 1000;
    const reasons: ReasonSamples[] = [];
    for (const r of REFUSERS) {
      const log = this.refusals[r];
      if (log.count > 0) reasons.push({ by: r, count: log.count, samples: log.samples() });
    }
    if (this.failures.count > 0)
      reasons.push({ by: 'failed', count: this.failures.count, samples: this.failures.samples() });
    return {
      version: 1,
      startedAt: this.startedAt,
      config: {
        mode: 'rate' in o.load ? 'open' : 'closed',
        ...o.load,
        ...o.until,
        clients: [...o.clients],
        miner: o.miner,
        accounts: this.accounts.count,
        hotFraction: t.hotFraction,
        hotShare: t.hotShare,
        erc20Share: t.erc20Share,
        txType: t.txType,
        chainId: t.chainId.toString(),
        batchIntervalMs: o.batchIntervalMs,
        maxBatch: o.maxBatch,
        drainTimeoutMs: o.drainTimeoutMs,
        meta: { ...o.meta },
      },
      timing: {
        runMs,
        drainMs: totalMs - runMs,
        drainTimedOut: this.outstanding > 0,
        stoppedBy: this.stopReason ?? 'stopped',
      },
      counts: {
        generated: this.generated,
        submitted: this.submitted,
        accepted: this.accepted,
        committed: this.committed,
        rejected: this.rejectedTotal(),
        rejectedBy,
        staleAbandoned: rejectedBy.stale,
        failed: this.failures.count,
        dropped: this.accepted - this.committed,
        unanswered: this.inSent,
        unsent: this.unsentRetired + this.heldCount + this.ready.length,
        missed: this.missed,
        renumbered: this.renumbered,
      },
      throughput: {
        committedPerSecond: window > 0 ? this.committed / window : 0,
        offeredPerSecond: runMs > 0 ? this.generated / (runMs / 1000) : 0,
        peakCommittedPerSecond: series.reduce((m, s) => Math.max(m, s.committed), 0),
      },
      latencyMs: latency ?? null,
      reasons,
      witness,
      ...(witnessError === undefined ? {} : { witnessError }),
      blocks: {
        seen: this.blocksSeen,
        withRunTxs: this.blocksWithRunTxs,
        reorgs: this.reorgs,
        resubscriptions: this.watcher?.resubscriptions ?? 0,
      },
      series,
    };
  }

  private close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.phase = 'done';
    this.watcher?.close();
    for (const s of this.submitters) s.close();
  }
}
