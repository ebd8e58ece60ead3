/**
 * The storage node's metrics (Prometheus, on the edge's registry): requests by method and
 * status, their latency, versions held, head number, log size and resident memory.
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
}
