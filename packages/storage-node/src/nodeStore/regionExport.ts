/**
 * The one-sided export: a VersionObserver that keeps the node encodings (and code) of every
 * version the storage node holds in one region laid out for one-sided reads (@monsoon/rdma's
 * format: header, hash index, node arena), a file under /dev/shm (or anywhere) that clients on
 * the same host map read-only, or that an RDMA NIC serves. Clients walk it from a state root
 * they trust, checking every node's hash, so it needs no locks and no trust.
 *
 * Nodes go in before their block is acknowledged (children before parents), so every node of an
 * acknowledged version is readable. Space is reclaimed by mark-and-sweep: every `sweepEvery`
 * pruned versions, the nodes no held version reaches leave the index, and their arena bytes are
 * reused only after a grace period (RegionWriter: blocks and milliseconds), so a reader that
 * took an index entry just before still reads the old bytes — and if it is slower than that,
 * its hash check catches the reuse.
 */

import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Logger, silentLogger } from '@monsoon/edge';
import { planRegion, RegionWriter, type RegionWriterOptions, SharedRegion } from '@monsoon/rdma';
import type { Version } from '../versionStore.js';
import type { FreshNode, VersionObserver } from './versionObserver.js';

export interface RegionExportOptions extends RegionWriterOptions {
  /** The region file (e.g. /dev/shm/monsoon-s0.region); undefined: an in-process buffer only. */
  path: string | undefined;
  /** Nodes the index is sized for (the arena's bytes bound the rest). */
  nodes: number;
  /** Arena bytes for node encodings and code. A file under /dev/shm takes RAM only as it fills. */
  arenaBytes: number;
  /** Pruned versions between two sweeps (each sweep walks every held version once). */
  sweepEvery: number;
  /** Delete the file on close (a file named per process); mappers keep what they mapped. */
  removeOnClose: boolean;
}

export const defaultRegionExportOptions: RegionExportOptions = {
  path: undefined,
  nodes: 4_000_000,
  arenaBytes: 2 * 1024 * 1024 * 1024,
  sweepEvery: 16,
  removeOnClose: false,
  graceEpochs: 2,
  graceMs: 1000,
};

/**
 * Where `--export-region auto` puts a node's region: a file named after the process under
 * /dev/shm (RAM, shared by the host's processes), or in the data directory where there is none.
 */
export function autoRegionPath(dataDir: string): string {
  return join(existsSync('/dev/shm') ? '/dev/shm' : dataDir, `monsoon-storage-${process.pid}.region`);
}

/** What a client needs to map the region (advertised over gRPC). */
export interface RegionInfo {
  readonly path: string;
  readonly generation: bigint;
  readonly bytes: number;
}

export interface RegionExportCounters {
  sweeps: number;
  /** Milliseconds the last sweep took. */
  lastSweepMs: number;
}

export class RegionExport implements VersionObserver {
  readonly counters: RegionExportCounters = { sweeps: 0, lastSweepMs: 0 };
  private pendingDrops = 0;
  private warnedFull = false;

  private constructor(
    readonly opts: RegionExportOptions,
    readonly writer: RegionWriter,
    private readonly shared: SharedRegion | undefined,
    private readonly log: Logger,
  ) {}

  /** A new region (a new file at `path`, replacing an old one by rename, or a buffer). */
  static async create(
    opts: Partial<RegionExportOptions> = {},
    modules: { logger?: Logger } = {},
  ): Promise<RegionExport> {
    const o = { ...defaultRegionExportOptions, ...opts };
    // Generation: when this region was made, so a client can tell a re-created region from the old one.
    const g = planRegion(o.nodes, o.arenaBytes, BigInt(Date.now()) * 1000n + BigInt(process.pid % 1000));
    let shared: SharedRegion | undefined;
    let writer: RegionWriter;
    if (o.path !== undefined) {
      shared = await SharedRegion.create(o.path, g.totalBytes);
      writer = RegionWriter.create(shared.bytes, g, o);
    } else writer = RegionWriter.create(new Uint8Array(g.totalBytes), g, o);
    return new RegionExport(o, writer, shared, modules.logger ?? silentLogger);
  }

  /** Where clients map it, when it is a file. */
  info(): RegionInfo | undefined {
    if (this.opts.path === undefined) return undefined;
    return {
      path: this.opts.path,
      generation: this.writer.geometry.generation,
      bytes: this.writer.geometry.totalBytes,
    };
  }

  /** The region file's mapping (what RDMA registers); undefined for an in-process buffer. */
  get mapping(): SharedRegion | undefined {
    return this.shared;
  }

  /** The region's bytes (for in-process readers and tests). */
  get bytes(): Uint8Array {
    return this.writer.bytes;
  }

  start(v: Version): void {
    v.state.state.forEachNode((h, enc) => this.put(h, enc));
    this.putCode(v);
    this.writer.advance();
    this.log.info('region exported', {
      path: this.opts.path ?? '(in memory)',
      nodes: this.writer.counters.live,
      arenaMB: Math.round(this.writer.arenaUsed / 1e5) / 10,
    });
  }

  adding(v: Version, fresh: readonly FreshNode[]): void {
    for (const n of fresh) this.put(n.hash, n.enc);
    this.putCode(v);
    this.writer.advance();
  }

  dropped(_gone: readonly Version[], held: readonly Version[]): void {
    this.pendingDrops += _gone.length;
    if (this.pendingDrops < this.opts.sweepEvery) return;
    this.pendingDrops = 0;
    this.sweep(held);
  }

  /** Takes every node and code blob no version in `held` reaches out of the index. */
  sweep(held: readonly Version[]): void {
    const started = performance.now();
    const live = new Set<string>();
    const seen = new Set<object>();
    for (const v of held) {
      v.state.state.forEachNode((h) => live.add(h), seen);
      v.state.state.forEachCode((h) => live.add(h));
    }
    let removed = 0;
    for (const h of this.writer.hashes()) {
      if (!live.has(h)) {
        this.writer.remove(h);
        removed++;
      }
    }
    this.counters.sweeps++;
    this.counters.lastSweepMs = performance.now() - started;
    this.log.debug?.('region swept', { live: live.size, removed, ms: Math.round(this.counters.lastSweepMs) });
  }

  async close(): Promise<void> {
    this.shared?.close();
    if (this.opts.removeOnClose && this.opts.path !== undefined) await rm(this.opts.path, { force: true });
  }

  private put(hash: string, enc: string | Uint8Array): void {
    if (!this.writer.put(hash, enc) && !this.warnedFull) {
      this.warnedFull = true;
      this.log.warn('region full: nodes left out are read over gRPC', {
        arenaBytes: this.opts.arenaBytes,
        nodes: this.opts.nodes,
      });
    }
  }

  private putCode(v: Version): void {
    v.state.state.forEachCode((h, code) => {
      if (!this.writer.has(h)) this.put(h, code);
    });
  }
}
