/** What a load run reports: the document written as result.json and rendered as summary.md and chart.svg. */
import type { LatencySummary } from './percentiles.js';
import type { Refuser } from './txSubmitter.js';

/** How the run was driven. */
export interface LoadRunConfig {
  /** `open`: transactions at a target rate whatever happens; `closed`: a fixed number in flight. */
  readonly mode: 'open' | 'closed';
  /** Target transactions/s (open loop). */
  readonly rate?: number;
  /** Transactions in flight (closed loop). */
  readonly concurrency?: number;
  /** Length of the run phase, when it was given as a duration. */
  readonly durationMs?: number;
  /** Transactions to generate, when the run was given as a count. */
  readonly count?: number;
  /** The clients, as given (gRPC host:port or JSON-RPC URL). */
  readonly clients: readonly string[];
  readonly miner: string;
  readonly accounts: number;
  readonly hotFraction: number;
  readonly hotShare: number;
  readonly erc20Share: number;
  readonly txType: string;
  readonly chainId: string;
  readonly batchIntervalMs: number;
  readonly maxBatch: number;
  readonly drainTimeoutMs: number;
  /** Free-form facts the caller added (the account seed, the genesis file, …). */
  readonly meta: Readonly<Record<string, string | number>>;
}

/** Why the run phase ended. */
export type StopReason = 'duration' | 'count' | 'stopped' | 'call-failures' | 'refusals';

/**
 * The transactions' fates. Always `generated = submitted + unsent`, `submitted = accepted +
 * rejected + failed + unanswered` and `accepted = committed + dropped`.
 */
export interface LoadCounts {
  /** Made by the traffic generator. */
  readonly generated: number;
  /** Sent to a client. */
  readonly submitted: number;
  /** Accepted by a miner (or seen in a block before the answer came). */
  readonly accepted: number;
  /** Accepted and in a canonical block when the run ended. */
  readonly committed: number;
  /** Refused, all refusers together. */
  readonly rejected: number;
  readonly rejectedBy: Readonly<Record<Refuser, number>>;
  /** Refused by a client that gave up after repeated stale witnesses (also in rejectedBy.stale). */
  readonly staleAbandoned: number;
  /** In a call that failed (or a JSON-RPC internal error): fate unknown, sender retired. */
  readonly failed: number;
  /** Accepted but in no canonical block by the end of the drain. */
  readonly dropped: number;
  /** Sent, never answered nor seen in a block by the end of the drain. */
  readonly unanswered: number;
  /** Generated but never sent: behind an unanswered transaction of their sender at the end, or of a retired sender. */
  readonly unsent: number;
  /** Open loop only: due by the schedule but not generated, because `maxOutstanding` were outstanding. */
  readonly missed: number;
  /** Sent under a lower nonce than generated, after an earlier transaction of their sender was refused. */
  readonly renumbered: number;
}

/** The reasons of one kind of refusal or failure: the first distinct messages, with how often each came. */
export interface ReasonSamples {
  readonly by: Refuser | 'failed';
  readonly count: number;
  readonly samples: readonly { readonly reason: string; readonly count: number }[];
}

/** Witness bytes the clients counted during the run (their /metrics, after minus before). */
export interface WitnessReport {
  /** How many /metrics endpoints were read. */
  readonly endpoints: number;
  readonly bagBytes: number;
  readonly unbaggedWitnessBytes: number;
  readonly proofBytesFetched: number;
  /** Per committed transaction; null when none was committed. */
  readonly bagBytesPerTx: number | null;
  readonly unbaggedWitnessBytesPerTx: number | null;
  readonly proofBytesFetchedPerTx: number | null;
  /** The clients' BatchGet calls to storage and Submit calls to miners, per committed transaction. */
  readonly storageCallsPerTx: number | null;
  readonly submissionsPerTx: number | null;
}

/** One second of the run (second `t` counts from the start of the run phase). */
export interface SecondSample {
  readonly t: number;
  /** Transactions sent in that second. */
  readonly submitted: number;
  /** Transactions whose inclusion was seen in that second. */
  readonly committed: number;
  /** Submit→inclusion latency of those, ms; null when there were none. */
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
}

/** Everything a load run measured. */
export interface LoadResult {
  /** Version of this document's shape. */
  readonly version: 1;
  /** Wall-clock start, ISO 8601. */
  readonly startedAt: string;
  readonly config: LoadRunConfig;
  readonly timing: {
    /** The run phase: generating and sending. */
    readonly runMs: number;
    /** The drain phase: waiting for what was in flight. */
    readonly drainMs: number;
    readonly drainTimedOut: boolean;
    readonly stoppedBy: StopReason;
  };
  readonly counts: LoadCounts;
  readonly throughput: {
    /** Committed transactions per second, from the start to the last inclusion (at least the run phase). */
    readonly committedPerSecond: number;
    /** Generated transactions per second of the run phase. */
    readonly offeredPerSecond: number;
    /** The best one-second bucket. */
    readonly peakCommittedPerSecond: number;
  };
  /** Submit→inclusion latency of the committed transactions, on the driver's clock; null when none. */
  readonly latencyMs: LatencySummary | null;
  /** Refusals and failures by kind, with sampled reasons (kinds that never happened left out). */
  readonly reasons: readonly ReasonSamples[];
  /** Null when no /metrics endpoint was given, or one could not be read (see `witnessError`). */
  readonly witness: WitnessReport | null;
  readonly witnessError?: string;
  readonly blocks: {
    /** Blocks streamed after the head the run started from. */
    readonly seen: number;
    /** Blocks that held at least one of the run's transactions. */
    readonly withRunTxs: number;
    /** Times a block replaced one already seen (a reorg). */
    readonly reorgs: number;
    /** Times the block stream broke and was re-subscribed. */
    readonly resubscriptions: number;
  };
  readonly series: readonly SecondSample[];
}
