/**
 * How the client reads state from storage nodes: `grpc` (BatchGet, answered by the node's JS
 * thread), `shm` (one-sided walks of the region a node on this host exports, mapped read-only:
 * no storage CPU), or `rdma` (the same walks over RDMA READs). The one-sided transports sit in
 * front of gRPC: a batch they can't answer whole (a node not in the region yet or any more, a
 * torn or forged slot after its retries, a shard whose node runs on another host) goes to gRPC.
 *
 * A one-sided answer needs no checking afterwards: every node of it was fetched by the hash its
 * parent named, starting from the block's state root, and kept only if it hashed to that.
 */
import type { Logger } from '@monsoon/edge';
import type { AccountQuery, AccountResult } from '@monsoon/protocol';
import {
  MappedWalkSource,
  type ReadCounters,
  ReaderWalkSource,
  RegionReader,
  requireRdma,
  SharedRegion,
  type WalkSource,
  walkAccountsFrom,
} from '@monsoon/rdma';
import { ClientError, ClientErrorCode } from './clientError.js';
import type { StateRef } from './remoteState.js';
import type { ShardedStorage, StorageReplica } from './shardedStorage.js';

export const STORAGE_TRANSPORTS = ['grpc', 'shm', 'rdma'] as const;
export type StorageTransportKind = (typeof STORAGE_TRANSPORTS)[number];

/** A batch answered one-sidedly: the same shape as a BatchGet's results and bag. */
export interface OneSidedAnswer {
  readonly results: readonly AccountResult[];
  readonly bag: readonly Uint8Array[];
}

export interface OneSidedCounters extends ReadCounters {
  /** Batches answered one-sidedly. */
  answered: number;
  /** Batches handed to gRPC (some account's walk could not be completed). */
  fellBack: number;
}

/** A one-sided transport (shm, rdma); gRPC is the client's ShardedStorage itself. */
export interface OneSidedReads {
  readonly kind: Exclude<StorageTransportKind, 'grpc'>;
  readonly counters: OneSidedCounters;
  /** `queries` at `at` in `shard`, verified from `at.stateRoot`; undefined: ask gRPC. */
  read(at: StateRef, shard: number, queries: readonly AccountQuery[]): Promise<OneSidedAnswer | undefined>;
  close(): void;
}

/**
 * The transport `kind` over `storage`'s nodes; undefined for grpc. `shm` maps the region each
 * node advertises and fails when none can be mapped (none advertises one, or all live on other
 * hosts); `rdma` fails unless verbs and a device are there (see requireRdma), and is not
 * written further yet.
 */
export async function openStorageTransport(
  kind: StorageTransportKind,
  storage: ShardedStorage,
  log?: Logger,
): Promise<OneSidedReads | undefined> {
  if (kind === 'grpc') return undefined;
  if (kind === 'rdma') {
    try {
      requireRdma();
    } catch (e) {
      throw new ClientError(
        ClientErrorCode.BadArgument,
        `--storage-transport rdma: ${(e as Error).message}`,
        {},
        e,
      );
    }
    throw new ClientError(
      ClientErrorCode.BadArgument,
      '--storage-transport rdma: RDMA devices are present, but queue-pair connection and batched READs are not implemented yet (use shm on one host, or grpc)',
    );
  }
  return ShmReads.open(storage, log);
}

interface MappedReplica {
  readonly replica: StorageReplica;
  readonly region: SharedRegion;
  /** The addon's verified walk over the mapping (the JS walk where the addon lacks it). */
  readonly source: WalkSource;
}

/** One-sided walks over the regions of the storage nodes on this host. */
export class ShmReads implements OneSidedReads {
  readonly kind = 'shm' as const;
  private readonly byShard = new Map<number, MappedReplica[]>();

  private constructor(private readonly mapped: readonly MappedReplica[]) {
    for (const m of mapped)
      for (const s of m.replica.shards) {
        const list = this.byShard.get(s) ?? [];
        list.push(m);
        this.byShard.set(s, list);
      }
  }

  /** Maps every advertised region it can; throws naming why when none could be. */
  static async open(storage: ShardedStorage, log?: Logger): Promise<ShmReads> {
    const mapped: MappedReplica[] = [];
    const why: string[] = [];
    for (const replica of storage.replicas) {
      const adv = replica.region;
      if (adv === undefined) {
        why.push(`${replica.address} exports no region (start it with --export-region)`);
        continue;
      }
      let region: SharedRegion;
      try {
        region = await SharedRegion.map(adv.path);
      } catch (e) {
        why.push(`${replica.address}: ${(e as Error).message}`);
        continue;
      }
      let reader: RegionReader;
      try {
        reader = new RegionReader(region.bytes);
      } catch (e) {
        region.close();
        why.push(`${replica.address}: ${(e as Error).message}`);
        continue;
      }
      if (reader.geometry.generation !== adv.generation) {
        region.close();
        why.push(
          `${replica.address}: ${adv.path} is generation ${reader.geometry.generation}, the node advertises ${adv.generation} (another host's file, or re-created)`,
        );
        continue;
      }
      const source = MappedWalkSource.available()
        ? new MappedWalkSource(region.bytes, reader.geometry)
        : new ReaderWalkSource(reader);
      mapped.push({ replica, region, source });
    }
    if (mapped.length === 0)
      throw new ClientError(
        ClientErrorCode.BadArgument,
        `--storage-transport shm: no storage node's region could be mapped (${why.join('; ')})`,
      );
    for (const w of why) log?.warn('storage node read over gRPC only', { why: w });
    log?.info('shm transport', { regions: mapped.map((m) => `${m.replica.address}=${m.region.path}`) });
    return new ShmReads(mapped);
  }

  readonly counters: OneSidedCounters = {
    nodes: 0,
    retries: 0,
    misses: 0,
    rejected: 0,
    answered: 0,
    fellBack: 0,
  };

  async read(
    at: StateRef,
    shard: number,
    queries: readonly AccountQuery[],
  ): Promise<OneSidedAnswer | undefined> {
    for (const m of this.byShard.get(shard) ?? []) {
      const answer = await oneSidedAnswer(m.source, at, queries);
      this.sync(m.source);
      if (answer !== undefined) {
        this.counters.answered++;
        return answer;
      }
    }
    this.counters.fellBack++;
    return undefined;
  }

  /** Folds a source's counters into the transport's (sources count since their last fold). */
  private sync(source: WalkSource): void {
    const c = source.counters;
    this.counters.nodes += c.nodes;
    this.counters.retries += c.retries;
    this.counters.misses += c.misses;
    this.counters.rejected += c.rejected;
    c.nodes = c.retries = c.misses = c.rejected = 0;
  }

  close(): void {
    for (const m of this.mapped) m.region.close();
  }
}

/**
 * `queries` walked through `source` as a BatchGet answer (results and bag), or undefined when
 * some walk could not be completed (the batch goes to gRPC whole).
 */
async function oneSidedAnswer(
  source: WalkSource,
  at: StateRef,
  queries: readonly AccountQuery[],
): Promise<OneSidedAnswer | undefined> {
  const { answers, nodes } = await walkAccountsFrom(source, at.stateRoot, queries);
  const results: AccountResult[] = [];
  const code = new Set<Uint8Array>();
  for (const w of answers) {
    if (w === undefined) return undefined;
    results.push({ address: w.address, accountRlp: w.accountRlp, slotValues: w.slotValues, code: w.code });
    if (w.code.length > 0) code.add(w.code);
  }
  // The bag holds trie nodes only; code travels in the results.
  return { results, bag: code.size === 0 ? nodes : nodes.filter((n) => !code.has(n)) };
}
