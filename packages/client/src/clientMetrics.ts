/**
 * The client's Prometheus metrics, `monsoon_client_*`: submissions and their fates, stale and
 * abandoned transactions, pre-execution time and fetch rounds, proof bytes fetched against bag
 * bytes sent (what compaction and bagging save), submit→inclusion latency, the head; and the
 * process's resident memory and V8 heap.
 */
import {
  addProcessMetrics,
  formatHostPort,
  type HostPort,
  type Logger,
  MetricsRegistry,
  MetricsServer,
} from '@monsoon/edge';
import type { Client } from './client.js';

const MS_BUCKETS = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

export class ClientMetrics {
  readonly registry = new MetricsRegistry();

  private constructor(
    readonly client: Client,
    private server: MetricsServer | undefined,
  ) {}

  /** Registers the client's metrics (and hooks its observers); `serve` also starts /metrics. */
  static register(client: Client): ClientMetrics {
    const m = new ClientMetrics(client, undefined);
    const r = m.registry;
    const c = client.counters;
    const counter = (name: string, help: string, read: () => number) =>
      r.observableCounter(`monsoon_client_${name}`, help, read);
    counter(
      'transactions_submitted_total',
      'Transactions received (eth_sendRawTransaction and gRPC).',
      () => c.submitted,
    );
    counter('transactions_accepted_total', 'Transactions a miner accepted.', () => c.accepted);
    counter(
      'transactions_rejected_early_total',
      'Transactions refused here, before any miner.',
      () => c.rejectedEarly,
    );
    counter(
      'transactions_rejected_by_miner_total',
      'Transactions a miner refused as invalid.',
      () => c.rejectedByMiner,
    );
    counter(
      'stale_replies_total',
      'Stale replies from miners (each answered by pre-executing again).',
      () => c.staleReplies,
    );
    counter(
      'transactions_abandoned_total',
      'Transactions given up after too many stale replies.',
      () => c.abandoned,
    );
    counter('submissions_total', 'Submissions sent to miners.', () => c.submissions);
    counter(
      'submissions_resent_total',
      'Submit calls sent again after no answer came (deadline, unreachable miner).',
      () => c.resubmissions,
    );
    counter('bag_bytes_total', 'Bytes of bag nodes sent to miners (compacted and bagged).', () => c.bagBytes);
    counter(
      'witness_bytes_unbagged_total',
      'Bytes the same witnesses would take sent per transaction (compacted, not bagged).',
      () => c.unbaggedWitnessBytes,
    );
    counter(
      'witness_bytes_raw_total',
      'Bytes the same witnesses would take sent per transaction as full proofs (not compacted, not bagged).',
      () => c.rawWitnessBytes,
    );
    counter(
      'proof_bytes_fetched_total',
      'Bytes of proof nodes and code fetched from storage (full proofs).',
      () => client.remote.counters.bytes,
    );
    counter('storage_calls_total', 'BatchGet calls to storage nodes.', () => client.remote.counters.calls);
    counter(
      'storage_one_sided_batches_total',
      'Read batches answered by one-sided walks of a storage region (shm, rdma), no BatchGet.',
      () => client.remote.counters.oneSided,
    );
    counter(
      'storage_one_sided_retries_total',
      'One-sided node reads whose bytes failed the hash check and were read again (torn, reused or forged).',
      () => client.remote.oneSided?.counters.retries ?? 0,
    );
    counter(
      'storage_one_sided_fallbacks_total',
      'Read batches a one-sided walk could not answer whole (nodes not in the region yet or any more), read over gRPC.',
      () => client.remote.oneSided?.counters.fellBack ?? 0,
    );
    counter(
      'storage_one_sided_failures_total',
      'One-sided walks that failed in the transport (a broken queue pair, a closed mapping); the node is re-mapped or reconnected.',
      () => client.remote.oneSided?.counters.failed ?? 0,
    );
    counter(
      'storage_answers_refused_total',
      'Storage answers refused as wrong (bad value or proof).',
      () => client.remote.counters.refused,
    );
    counter(
      'chain_blocks_received_total',
      "Blocks taken from miners' block streams (replays after a broken stream included).",
      () => client.blocksReceived,
    );
    counter(
      'chain_history_blocks_total',
      "Blocks of history added behind a late start's anchor (fetched once it serves, linked to that block).",
      () => client.historyBlocks,
    );
    r.gauge(
      'monsoon_client_ancestry_checked',
      "1 once the oldest block held is linked to the genesis file's block 0 (a late start's history or the miners' headers), 0 if that failed; absent until known.",
      () => (client.ancestryChecked === undefined ? undefined : client.ancestryChecked ? 1 : 0),
    );
    r.gauge('monsoon_client_head_number', 'The chain head this client follows.', () =>
      client.chain.head === undefined ? undefined : Number(client.chain.head.header.number),
    );
    r.gauge(
      'monsoon_client_chain_blocks',
      'Canonical blocks the chain view holds (`--chain-window`, fewer where `--chain-max-transactions` binds).',
      () => client.chain.size,
    );
    r.gauge(
      'monsoon_client_chain_transactions',
      "Transactions of the chain view's blocks (by hash, with their receipts).",
      () => client.chain.transactionCount,
    );
    r.gauge(
      'monsoon_client_pending_transactions',
      'Accepted transactions not yet in a block.',
      () => client.pendingCount,
    );
    r.gauge(
      'monsoon_client_queued_transactions',
      "Transactions in the client's pool waiting for a nonce gap to fill or for their sender's turn.",
      () => client.queuedCount,
    );
    const pre = r.histogram(
      'monsoon_client_pre_execution_ms',
      'Pre-execution time per transaction, ms (fetches included).',
      MS_BUCKETS,
    );
    const rounds = r.histogram(
      'monsoon_client_fetch_rounds',
      'Storage fetch rounds per pre-execution.',
      [0, 1, 2, 3, 4, 6, 8],
    );
    const inclusion = r.histogram('monsoon_client_inclusion_ms', 'Submit→inclusion latency, ms.', MS_BUCKETS);
    client.onPreExecuted = (ms, n) => {
      pre.observe({}, ms);
      rounds.observe({}, n);
    };
    client.onInclusion = (ms) => inclusion.observe({}, ms);
    // Resident memory and V8's heap, as every role reports them (the soak reads them).
    addProcessMetrics(r);
    return m;
  }

  static async serve(client: Client, at: HostPort, logger?: Logger): Promise<ClientMetrics> {
    const m = ClientMetrics.register(client);
    m.server = await MetricsServer.create(
      { listen: formatHostPort(at) },
      { registry: m.registry, ...(logger ? { logger } : {}) },
    );
    return m;
  }

  get address(): string | undefined {
    return this.server?.address();
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}
