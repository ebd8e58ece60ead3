/**
 * The storage node's metrics (Prometheus, on the edge's registry): requests by method and
 * status, their latency, versions held, head number, log size and resident memory; with the
 * tiered backend, its cache, faults, resident bytes and LevelDB round trips.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  addProcessMetrics,
  type Counter,
  type Histogram,
  MetricsRegistry,
  REQUEST_SECONDS_BUCKETS,
  type RequestMetrics,
} from '@monsoon/edge';
import type { TieredStats } from '../nodeStore/tieredStore.js';
import type { StorageNode } from '../storageNode.js';

/** Total size of the files in a directory (0 when it does not exist). */
async function dirBytes(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
  let total = 0;
  for (const n of names) {
    try {
      const s = await stat(join(dir, n));
      if (s.isFile()) total += s.size;
    } catch {
      // A segment removed between readdir and stat: it no longer counts.
    }
  }
  return total;
}

/** The storage node's metrics. */
export class StorageMetrics implements RequestMetrics {
  readonly registry: MetricsRegistry;
  private readonly requests: Counter;
  private readonly seconds: Histogram;

  constructor(registry: MetricsRegistry = new MetricsRegistry()) {
    this.registry = registry;
    this.requests = registry.counter(
      'monsoon_storage_requests_total',
      'gRPC calls answered, by method and status.',
    );
    this.seconds = registry.histogram(
      'monsoon_storage_request_seconds',
      'Time to answer a unary gRPC call, by method.',
      REQUEST_SECONDS_BUCKETS,
    );
    addProcessMetrics(registry);
  }

  observeRequest(method: string, code: string, seconds?: number): void {
    this.requests.inc({ method, code });
    if (seconds !== undefined) this.seconds.observe({ method }, seconds);
  }

  /** Calls counted so far for a method and status. */
  requestCount(method: string, code: string): number {
    return this.requests.get({ method, code });
  }

  /**
   * Adds the gauges read from a node: versions held, head number, and, given its data
   * directory, the size of its write-ahead log on disk (the node exposes no log counters).
   */
  watchNode(node: StorageNode, dataDir?: string): void {
    this.registry.gauge(
      'monsoon_storage_versions',
      'Versions (blocks) held, on every live fork.',
      () => node.versions.size,
    );
    this.registry.gauge('monsoon_storage_head_number', 'Number of the head block.', () =>
      Number(node.head.header.number),
    );
    if (dataDir !== undefined) {
      this.registry.gauge('monsoon_storage_wal_bytes', 'Bytes of write-ahead log segments on disk.', () =>
        dirBytes(join(dataDir, 'wal')),
      );
    }
  }

  /**
   * Adds the tiered backend's counters and gauges, read from `stats` (TieredStore.tieredStats)
   * when scraped.
   */
  watchTiered(stats: () => TieredStats, budgetBytes: number): void {
    const r = this.registry;
    const counter = (name: string, help: string, read: (s: TieredStats) => number) =>
      r.observableCounter(name, help, () => read(stats()));
    counter(
      'monsoon_storage_tiered_cache_hits_total',
      'Faults of trie nodes answered from the node cache.',
      (s) => s.cacheHits,
    );
    counter(
      'monsoon_storage_tiered_cache_misses_total',
      'Trie nodes fetched from LevelDB (faults the cache could not answer).',
      (s) => s.nodesFetched,
    );
    counter(
      'monsoon_storage_tiered_coalesced_faults_total',
      'Faults that joined a fetch of the same node already on the way.',
      (s) => s.coalesced,
    );
    counter(
      'monsoon_storage_tiered_leveldb_round_trips_total',
      'LevelDB read round trips (one per cold trie level of a request).',
      (s) => s.roundTrips,
    );
    counter(
      'monsoon_storage_tiered_leveldb_round_trip_seconds_total',
      'Time spent waiting for LevelDB read round trips.',
      (s) => s.roundTripMs / 1000,
    );
    counter(
      'monsoon_storage_tiered_nodes_written_total',
      'Trie nodes written to LevelDB.',
      (s) => s.nodesWritten,
    );
    counter(
      'monsoon_storage_tiered_corrupt_nodes_total',
      'Nodes from LevelDB refused because they do not hash to their key.',
      (s) => s.corrupt,
    );
    counter(
      'monsoon_storage_tiered_evictions_total',
      'CLOCK eviction passes over the held versions.',
      (s) => s.prunes,
    );
    counter(
      'monsoon_storage_tiered_sweeps_total',
      'Mark-and-sweep collections of LevelDB completed.',
      (s) => s.sweeps,
    );
    counter(
      'monsoon_storage_tiered_nodes_swept_total',
      'Nodes deleted from LevelDB by sweeps.',
      (s) => s.nodesSwept,
    );
    r.gauge(
      'monsoon_storage_tiered_memory_bytes',
      'Bytes of trie nodes in memory (accounted), by part.',
      () => {
        const s = stats();
        return [
          { labels: { part: 'trees' }, value: s.residentBytes },
          { labels: { part: 'cache' }, value: s.cacheBytes },
        ];
      },
    );
    r.gauge('monsoon_storage_tiered_budget_bytes', 'The memory budget for trie nodes.', () => budgetBytes);
    r.gauge(
      'monsoon_storage_tiered_budget_share_ratio',
      "The nodes' share of the budget the memory governor leaves them (1: all of it).",
      () => stats().budgetShare,
    );
    r.gauge(
      'monsoon_storage_tiered_evict_slice_max_seconds',
      'The longest the event loop was held by eviction (one slice of a pass).',
      () => stats().evictMsMax / 1000,
    );
  }
}
