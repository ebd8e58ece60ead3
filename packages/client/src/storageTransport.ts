/**
 * How the client reads state from storage nodes: `grpc` (BatchGet, answered by the node's JS
 * thread), `shm` (one-sided walks of the region a node on this host exports, mapped read-only:
 * no storage CPU), or `rdma` (the same walks over RDMA READs from the node's registered region). The one-sided transports sit in
 * front of gRPC: a batch they can't answer whole (a node not in the region yet or any more, a
 * torn or forged slot after its retries, a shard whose node runs on another host) goes to gRPC.
 *
 * A one-sided answer needs no checking afterwards: every node of it was fetched by the hash its
 * parent named, starting from the block's state root, and kept only if it hashed to that.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Logger, unary } from '@monsoon/edge';
import {
  type AccountQuery,
  type AccountResult,
  connectRdmaRequestToProto,
  connectRdmaResponseFromProto,
  type ExportedRegion,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  HEAD,
} from '@monsoon/protocol';
import {
  fromAddonError,
  HEADER_BYTES,
  isRdmaError,
  MappedWalkSource,
  nativeBinding,
  type RdmaBinding,
  type ReadCounters,
  ReaderWalkSource,
  RegionReader,
  RemoteWalkSource,
  readHeader,
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
  /** bag[i]'s keccak-256 at [32i, 32i + 32), when the walk checked each (the native walk). */
  readonly bagHashes?: Uint8Array;
}

export interface OneSidedCounters extends ReadCounters {
  /** Batches answered one-sidedly. */
  answered: number;
  /** Batches handed to gRPC (some account's walk could not be completed). */
  fellBack: number;
  /**
   * Regions mapped again (shm) or reconnected (rdma) after their node re-created them (a
   * restart: new file, new generation) or reads through them failed.
   */
  remapped: number;
  /** Walks that failed in the transport (a closed mapping, a broken queue pair), each batch then read over gRPC. */
  failed: number;
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
 * hosts); `rdma` fails unless verbs and a device are there (see requireRdma), then connects a
 * queue pair to every node that serves its region over RDMA and fails when none does.
 */
export async function openStorageTransport(
  kind: StorageTransportKind,
  storage: ShardedStorage,
  log?: Logger,
): Promise<OneSidedReads | undefined> {
  if (kind === 'grpc') return undefined;
  if (kind === 'rdma') return RdmaReads.open(storage, log);
  return ShmReads.open(storage, log);
}

/** A storage node read one-sidedly: the walk source over its region, and how to let it go. */
interface WalkedReplica {
  readonly replica: StorageReplica;
  readonly source: WalkSource;
  /** Where it reads from, for the log. */
  readonly where: string;
  /** The region's generation (its header's). */
  readonly generation: bigint;
  close(): void;
}

/** A replica as the transport holds it: replaced when its region is re-created or its link breaks. */
interface Held {
  walked: WalkedReplica;
  /** When the node was last asked whether its region changed (performance.now()). */
  checkedAt: number;
  /**
   * Why reads through it failed (a closed mapping, a broken queue pair: its node restarted), until
   * it is renewed; meanwhile its shards are read over gRPC.
   */
  broken?: string;
}

/**
 * One-sided walks over the regions of some storage nodes, each shard's batch walked through a
 * node that holds it (the addon's walk: over the mapping for shm, over RDMA READs for rdma).
 */
abstract class OneSidedWalks implements OneSidedReads {
  private readonly byShard = new Map<number, Held[]>();
  private readonly held: Held[];

  protected constructor(
    readonly kind: Exclude<StorageTransportKind, 'grpc'>,
    walked: readonly WalkedReplica[],
    /** Runs after every replica is closed (rdma: the device). */
    private readonly closeLast?: () => void,
    /** Least milliseconds between two checks of one node's region after a walk missed. */
    private readonly recheckMs = 1000,
    protected readonly log?: Logger,
  ) {
    this.held = walked.map((w) => ({ walked: w, checkedAt: performance.now() }));
    for (const h of this.held)
      for (const s of h.walked.replica.shards) {
        const list = this.byShard.get(s) ?? [];
        list.push(h);
        this.byShard.set(s, list);
      }
  }

  /**
   * The replica's region read afresh — mapped again (shm) or over a new queue pair (rdma) — when
   * its node now exports another one (re-created on restart) or, `broken`, whatever it exports
   * now; undefined when nothing changed.
   */
  protected abstract renew(w: WalkedReplica, broken: boolean): Promise<WalkedReplica | undefined>;

  /**
   * After a miss or a failure: whether `h` now reads a renewed region (asking its node at most
   * every recheckMs).
   */
  private async renewed(h: Held): Promise<boolean> {
    const now = performance.now();
    if (now - h.checkedAt < this.recheckMs) return false;
    h.checkedAt = now;
    let next: WalkedReplica | undefined;
    try {
      next = await this.renew(h.walked, h.broken !== undefined);
    } catch (e) {
      this.log?.warn('storage node region not re-mapped', {
        node: h.walked.replica.address,
        why: (e as Error).message,
      });
      return false;
    }
    if (next === undefined) return false;
    this.log?.info('storage node region re-mapped', {
      node: next.replica.address,
      from: `${h.walked.where} (generation ${h.walked.generation})`,
      to: `${next.where} (generation ${next.generation})`,
      ...(h.broken !== undefined ? { after: h.broken } : {}),
    });
    h.walked.close();
    h.walked = next;
    h.broken = undefined;
    this.counters.remapped++;
    return true;
  }

  /** Throws naming why when no node could be read this way; logs the nodes left to gRPC. */
  protected static check(
    kind: Exclude<StorageTransportKind, 'grpc'>,
    walked: readonly WalkedReplica[],
    why: readonly string[],
    log: Logger | undefined,
  ): void {
    if (walked.length === 0)
      throw new ClientError(
        ClientErrorCode.BadArgument,
        `--storage-transport ${kind}: no storage node's region could be ${kind === 'shm' ? 'mapped' : 'reached over RDMA'} (${why.join('; ')})`,
      );
    for (const w of why) log?.warn('storage node read over gRPC only', { why: w });
    log?.info(`${kind} transport`, { regions: walked.map((m) => `${m.replica.address}=${m.where}`) });
  }

  readonly counters: OneSidedCounters = {
    nodes: 0,
    retries: 0,
    misses: 0,
    rejected: 0,
    answered: 0,
    fellBack: 0,
    remapped: 0,
    failed: 0,
  };

  async read(
    at: StateRef,
    shard: number,
    queries: readonly AccountQuery[],
  ): Promise<OneSidedAnswer | undefined> {
    for (const h of this.byShard.get(shard) ?? []) {
      for (let again = h.broken === undefined || (await this.renewed(h)); again; ) {
        const source = h.walked.source;
        let answer: OneSidedAnswer | undefined;
        try {
          answer = await oneSidedAnswer(source, at, queries);
        } catch (e) {
          // The transport failed, not the state: this batch goes to gRPC, and so does every
          // batch of this node until its region is renewed.
          if (!isRdmaError(e)) throw e;
          this.counters.failed++;
          h.broken = e.message;
          this.log?.warn('one-sided reads failed; reading over gRPC until renewed', {
            node: h.walked.replica.address,
            where: h.walked.where,
            why: e.message,
          });
        }
        this.sync(source);
        if (answer !== undefined) {
          this.counters.answered++;
          return answer;
        }
        // A miss: maybe the node was restarted and writes another region now.
        again = await this.renewed(h);
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
    for (const h of this.held) h.walked.close();
    this.closeLast?.();
  }
}

/** How ShmReads maps a region file (SharedRegion.map; a test sees the mappings it makes). */
export type MapRegion = (path: string) => Promise<SharedRegion>;

/** One-sided walks over the regions of the storage nodes on this host, mapped read-only. */
export class ShmReads extends OneSidedWalks {
  /**
   * Maps every advertised region it can; throws naming why when none could be. `recheckMs`:
   * least milliseconds between two checks whether a node whose walk missed re-created its region.
   */
  static async open(
    storage: ShardedStorage,
    log?: Logger,
    opts: { recheckMs?: number; mapRegion?: MapRegion } = {},
  ): Promise<ShmReads> {
    const mapRegion = opts.mapRegion ?? ((path: string) => SharedRegion.map(path));
    const walked: WalkedReplica[] = [];
    const why: string[] = [];
    for (const replica of storage.replicas) {
      const adv = replica.region;
      if (adv === undefined) {
        why.push(`${replica.address} exports no region (start it with --export-region)`);
        continue;
      }
      try {
        walked.push(await mapReplica(replica, adv, mapRegion));
      } catch (e) {
        why.push(`${replica.address}: ${(e as Error).message}`);
      }
    }
    OneSidedWalks.check('shm', walked, why, log);
    return new ShmReads(mapRegion, walked, opts.recheckMs, log);
  }

  private constructor(
    private readonly mapRegion: MapRegion,
    walked: readonly WalkedReplica[],
    recheckMs?: number,
    log?: Logger,
  ) {
    super('shm', walked, undefined, recheckMs, log);
  }

  /** The node's region now, mapped, when it advertises another generation than `w`'s, or `broken`. */
  protected override async renew(w: WalkedReplica, broken: boolean): Promise<WalkedReplica | undefined> {
    const adv = await advertised(w, broken);
    return adv === undefined ? undefined : mapReplica(w.replica, adv, this.mapRegion);
  }
}

/**
 * The region `w`'s node advertises now, when it is another generation than `w`'s or `broken`
 * (then any); undefined when there is nothing new to read.
 */
async function advertised(w: WalkedReplica, broken: boolean): Promise<ExportedRegion | undefined> {
  const c = w.replica.client;
  const roots = getShardRootsResponseFromProto(
    await unary(c, c.getShardRoots, getShardRootsRequestToProto({ at: HEAD })),
  );
  if (roots.region === undefined || (!broken && roots.region.generation === w.generation)) return undefined;
  return roots.region;
}

/** `replica`'s advertised region mapped read-only, checked to be the generation advertised. */
async function mapReplica(
  replica: StorageReplica,
  adv: ExportedRegion,
  mapRegion: MapRegion,
): Promise<WalkedReplica> {
  const region = await mapRegion(adv.path);
  let reader: RegionReader;
  try {
    reader = new RegionReader(region.bytes);
    if (reader.geometry.generation !== adv.generation)
      throw new ClientError(
        ClientErrorCode.BadArgument,
        `${adv.path} is generation ${reader.geometry.generation}, the node advertises ${adv.generation} (another host's file, or re-created)`,
      );
  } catch (e) {
    region.close();
    throw e;
  }
  const source = MappedWalkSource.available()
    ? new MappedWalkSource(region.bytes, reader.geometry)
    : new ReaderWalkSource(reader);
  return {
    replica,
    source,
    where: region.path,
    generation: adv.generation,
    close: () => region.close(),
  };
}

/** Registered memory each RDMA connection's READs land in before the walk copies them out. */
export const RDMA_STAGING_BYTES = 4 << 20;

/**
 * One-sided walks over RDMA: a queue pair to every storage node that serves its region over
 * RDMA (its numbers exchanged over gRPC ConnectRdma), the region's header read once to learn its
 * geometry, then the addon's walk posts each level's bucket READs and node READs (a doorbell each).
 */
export class RdmaReads extends OneSidedWalks {
  /** Throws naming what is missing (verbs, a device) or why no node could be connected. */
  static async open(storage: ShardedStorage, log?: Logger, device = ''): Promise<RdmaReads> {
    let binding: RdmaBinding;
    let dev: number;
    try {
      requireRdma();
      binding = nativeBinding();
      dev = await binding.openDevice(device);
    } catch (e) {
      const err = fromAddonError(e) as Error;
      throw new ClientError(ClientErrorCode.BadArgument, `--storage-transport rdma: ${err.message}`, {}, e);
    }
    const walked: WalkedReplica[] = [];
    const why: string[] = [];
    for (const replica of storage.replicas) {
      try {
        walked.push(await connectReplica(binding, dev, replica));
      } catch (e) {
        why.push(`${replica.address}: ${(fromAddonError(e) as Error).message}`);
      }
    }
    try {
      OneSidedWalks.check('rdma', walked, why, log);
    } catch (e) {
      binding.closeDevice(dev);
      throw e;
    }
    // The device last: its queue pairs and registrations go with it.
    return new RdmaReads(binding, dev, walked, log);
  }

  private constructor(
    private readonly binding: RdmaBinding,
    private readonly dev: number,
    walked: readonly WalkedReplica[],
    log?: Logger,
  ) {
    super('rdma', walked, () => binding.closeDevice(dev), undefined, log);
  }

  /**
   * A new queue pair to `w`'s node when it exports another region or, `broken`, at all (a node
   * that restarted dropped its end: a broken queue pair stays broken).
   */
  protected override async renew(w: WalkedReplica, broken: boolean): Promise<WalkedReplica | undefined> {
    if ((await advertised(w, broken)) === undefined) return undefined;
    return connectReplica(this.binding, this.dev, w.replica);
  }
}

/** A queue pair to `replica`, connected through ConnectRdma, and a walk source over its region. */
async function connectReplica(
  binding: RdmaBinding,
  dev: number,
  replica: StorageReplica,
): Promise<WalkedReplica> {
  const file = join(
    existsSync('/dev/shm') ? '/dev/shm' : tmpdir(),
    `monsoon-rdma-staging-${process.pid}-${replica.address.replace(/[^0-9a-z]/gi, '_')}`,
  );
  const staging = await SharedRegion.create(file, RDMA_STAGING_BYTES);
  await rm(file, { force: true }); // the mapping keeps the memory
  let qp: ReturnType<RdmaBinding['createQueuePair']> | undefined;
  try {
    binding.registerRegion(dev, staging.handle);
    qp = binding.createQueuePair(dev);
    const c = replica.client;
    const res = connectRdmaResponseFromProto(
      await unary(
        c,
        c.connectRdma,
        connectRdmaRequestToProto({ client: { qpn: qp.qpn, lid: qp.lid, gid: qp.gid, psn: qp.psn } }),
      ),
    );
    binding.connectQueuePair(qp.handle, res.server, qp.psn);
    await binding.readBatch(
      qp.handle,
      staging.handle,
      res.regionAddr,
      res.rkey,
      Float64Array.of(0, HEADER_BYTES, 0),
    );
    const geometry = readHeader(staging.bytes.subarray(0, HEADER_BYTES), Number(res.regionBytes));
    if (geometry.generation !== res.generation)
      throw new ClientError(
        ClientErrorCode.BadArgument,
        `the region's header is generation ${geometry.generation}, the node said ${res.generation}`,
      );
    const handle = qp.handle;
    return {
      replica,
      source: new RemoteWalkSource(
        { qp: handle, staging: staging.handle, addr: res.regionAddr, rkey: res.rkey },
        geometry,
      ),
      where: `rdma qpn ${res.server.qpn}`,
      generation: geometry.generation,
      close: () => {
        binding.closeQueuePair(handle);
        staging.close();
      },
    };
  } catch (e) {
    if (qp !== undefined) binding.closeQueuePair(qp.handle);
    staging.close();
    throw e;
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
  // A BatchGet answer is values and a bag: the walk's node set, no per-account proof lists.
  const { answers, nodes, hashes } = await walkAccountsFrom(source, at.stateRoot, queries, undefined, {
    proofs: false,
  });
  const results: AccountResult[] = [];
  const code = new Set<Uint8Array>();
  for (const w of answers) {
    if (w === undefined) return undefined;
    results.push({ address: w.address, accountRlp: w.accountRlp, slotValues: w.slotValues, code: w.code });
    if (w.code.length > 0) code.add(w.code);
  }
  // The bag holds trie nodes only; code travels in the results.
  if (code.size === 0) return { results, bag: nodes, ...(hashes !== undefined ? { bagHashes: hashes } : {}) };
  const bag: Uint8Array[] = [];
  const bagHashes = hashes === undefined ? undefined : new Uint8Array(hashes.length);
  nodes.forEach((n, i) => {
    if (code.has(n)) return;
    bagHashes?.set(hashes!.subarray(32 * i, 32 * i + 32), 32 * bag.length);
    bag.push(n);
  });
  return {
    results,
    bag,
    ...(bagHashes !== undefined ? { bagHashes: bagHashes.subarray(0, 32 * bag.length) } : {}),
  };
}
