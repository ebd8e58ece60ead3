/**
 * The storage node's gRPC edge: the shared gRPC server (@monsoon/edge's GrpcServer) with every
 * StorageService RPC as wire → domain (validating converters) → StorageNode → domain → wire.
 * Errors become statuses here and only here (see grpcStatus.ts); the node never sees a protobuf
 * type.
 */
import { setImmediate } from 'node:timers/promises';
import {
  type handleUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  status,
} from '@grpc/grpc-js';
import { EMPTY_CODE_HASH } from '@monsoon/dsm-tree';
import {
  CallRefused,
  defaultGrpcServerOptions,
  GrpcServer,
  type GrpcServerOptions,
  HeadFeed,
  type Logger,
  type MethodTable,
  type RequestMetrics,
  silentLogger,
  streamHeads,
  toServiceError,
  unaryRpc,
} from '@monsoon/edge';
import {
  applyBlockRequestFromBytes,
  applyBlockResponseToProto,
  batchGetRequestFromProto,
  batchGetResponseBytes,
  type commonPb,
  connectRdmaRequestFromProto,
  connectRdmaResponseToProto,
  type GetNodesRequest,
  type GetNodesResponse,
  getAccountRequestFromProto,
  getAccountResponseToProto,
  getBlockUpdatesRequestFromProto,
  getBlockUpdatesResponseToProto,
  getCheckpointRequestFromProto,
  getCodeRequestFromProto,
  getCodeResponseToProto,
  getNodesRequestFromProto,
  getNodesResponseToProto,
  getShardRootsRequestFromProto,
  getShardRootsResponseToProto,
  getStorageRequestFromProto,
  getStorageResponseToProto,
  type Head,
  headToProto,
  StorageServiceDefinition,
  type StorageServiceServer,
  type storagePb,
} from '@monsoon/protocol';
import { bytesEqual, toHex } from '@monsoon/util';
import type { RdmaExport } from '../nodeStore/rdmaExport.js';
import { StorageError, StorageErrorCode } from '../storageError.js';
import type { StorageNode } from '../storageNode.js';
import type { Version } from '../versionStore.js';
import { grpcStatusOf } from './grpcStatus.js';

/** The shared server's options (listen, largest request, shutdown deadline) and the storage node's own. */
export interface StorageServerOptions extends GrpcServerOptions {
  /** Most queries in a BatchGet, and most slots over all its queries; more is INVALID_ARGUMENT. */
  maxBatchQueries: number;
  /**
   * Most hashes in a GetNodes; more is INVALID_ARGUMENT. A hash is looked for in every version
   * held (up to the window), so one costs far more than a BatchGet query.
   */
  maxNodes: number;
  /**
   * A GetNodes looks for at most this many (hash, version) pairs between two turns of the event
   * loop, so a large one never stalls block application, other callers or a SIGTERM.
   */
  nodeProbesPerTurn: number;
}

export const defaultStorageServerOptions: StorageServerOptions = {
  ...defaultGrpcServerOptions,
  listen: '127.0.0.1:50051',
  maxBatchQueries: 10_000,
  maxNodes: 1024,
  nodeProbesPerTurn: 256,
};

/** Most blocks one GetBlockUpdates answers with (a replica behind asks again). */
export const MAX_BLOCK_UPDATES = 256;
/** GetCheckpoint gathers the checkpoint's pieces into messages of about this size. */
const CHECKPOINT_CHUNK_BYTES = 1 << 20;

/**
 * StorageService as this server serves it: ApplyBlock takes its request's bytes, BatchGet gives
 * its answer's (see servedDefinition).
 */
type ServedStorage = {
  [K in keyof StorageServiceServer]: K extends 'applyBlock'
    ? handleUnaryCall<Uint8Array, storagePb.ApplyBlockResponse>
    : K extends 'batchGet'
      ? handleUnaryCall<storagePb.BatchGetRequest, Buffer>
      : StorageServiceServer[K];
};

/**
 * StorageServiceDefinition with ApplyBlock's request left as its bytes: they are the block's log
 * record as they came (a node would otherwise encode again what grpc-js just decoded), and
 * applyBlockRequestFromBytes reads them into the domain request with no generated message per
 * account update. Copied out of the frame they arrived in, so what keeps them keeps only them.
 */
const servedDefinition: ServiceDefinition<ServedStorage> = {
  ...StorageServiceDefinition,
  applyBlock: {
    ...StorageServiceDefinition.applyBlock,
    requestDeserialize: (bytes: Buffer): Uint8Array => new Uint8Array(bytes),
  },
  // BatchGet's answer is written as its bytes (batchGetResponseBytes): no message objects.
  batchGet: { ...StorageServiceDefinition.batchGet, responseSerialize: (bytes: Buffer): Buffer => bytes },
};

/** A version as SubscribeHeads sends it. */
export function headOf(v: Version): Head {
  return { hash: v.hash, number: v.header.number, headerRlp: v.headerRlp, stateRoot: v.header.stateRoot };
}

export interface StorageServerModules {
  node: StorageNode;
  /** The node's exported region, advertised in GetShardRoots (a RegionExport's info()). */
  region?: { readonly path: string; readonly generation: bigint; readonly bytes: number };
  /** The region registered with an RDMA device: ConnectRdma connects clients to it. */
  rdma?: RdmaExport;
  logger?: Logger;
  metrics?: RequestMetrics;
}

function tooMany(what: string, found: number, max: number): never {
  throw new StorageError(StorageErrorCode.BadArgument, `${what}: expected at most ${max}, found ${found}`, {
    found,
    max,
  });
}

export class StorageServer {
  /** The head feed behind SubscribeHeads; it moves with the blocks applied through this server. */
  readonly heads: HeadFeed<Version>;
  private readonly node: StorageNode;
  private readonly region: StorageServerModules['region'];
  private readonly rdma: RdmaExport | undefined;
  private readonly log: Logger;
  private readonly streams = new Set<() => void>();
  /** Set by close(): long calls stop at their next turn instead of running to the end. */
  private closing = false;
  /** Set once bound. */
  private server!: GrpcServer;

  private constructor(
    readonly opts: StorageServerOptions,
    modules: StorageServerModules,
  ) {
    this.node = modules.node;
    this.region = modules.region;
    this.rdma = modules.rdma;
    this.log = modules.logger ?? silentLogger;
    this.heads = new HeadFeed(
      () => modules.node.head,
      (v) => v.id,
    );
  }

  /** Starts serving `modules.node` on `opts.listen`; resolves once the port is bound. */
  static async create(
    opts: Partial<StorageServerOptions> & { listen: string },
    modules: StorageServerModules,
  ): Promise<StorageServer> {
    const o: StorageServerOptions = { ...defaultStorageServerOptions, ...opts };
    for (const k of ['maxBatchQueries', 'maxNodes', 'nodeProbesPerTurn'] as const) {
      if (!Number.isSafeInteger(o[k]) || o[k] < 1) {
        throw new StorageError(
          StorageErrorCode.BadArgument,
          `${k}: expected a positive integer, found ${o[k]}`,
        );
      }
    }
    const s = new StorageServer(o, modules);
    s.server = await GrpcServer.create<ServedStorage>(
      o,
      { grpcStatusOf, logger: s.log, ...(modules.metrics ? { metrics: modules.metrics } : {}) },
      servedDefinition,
      s.methods(),
    );
    return s;
  }

  /** The bound address, `host:port` (the real port when `listen` asked for 0). */
  address(): string {
    return this.server.address();
  }

  get port(): number {
    return this.server.port;
  }

  /**
   * Stops accepting calls, ends every SubscribeHeads stream, lets calls in progress finish
   * (ApplyBlocks included) for up to `shutdownTimeoutMs`, then cuts off what is left. The node
   * is not closed: it belongs to the caller.
   */
  close(): Promise<void> {
    this.closing = true;
    const closed = this.server.close();
    for (const end of [...this.streams]) end();
    return closed;
  }

  private subscribeHeads(call: ServerWritableStream<storagePb.SubscribeHeadsRequest, commonPb.Head>): void {
    const end = streamHeads(
      call,
      this.heads,
      (v) => headToProto(headOf(v)),
      (code) => {
        this.streams.delete(end);
        this.server.observe('SubscribeHeads', code);
      },
    );
    this.streams.add(end);
  }

  /**
   * GetCheckpoint: the version's checkpoint in messages of about a megabyte, waiting for the
   * stream to drain whenever grpc-js buffers (a slow replica never makes this node hold the
   * whole checkpoint twice). The version is immutable: blocks go on while it streams.
   */
  private async getCheckpoint(
    call: ServerWritableStream<storagePb.GetCheckpointRequest, storagePb.CheckpointChunk>,
  ): Promise<void> {
    let code: status = status.OK;
    let cancelled = false;
    call.on('cancelled', () => {
      cancelled = true;
    });
    try {
      const { at } = getCheckpointRequestFromProto(call.request);
      let parts: Uint8Array[] = [];
      let size = 0;
      const flush = async () => {
        if (size === 0) return;
        const data = Buffer.concat(parts, size);
        parts = [];
        size = 0;
        if (!call.write({ data })) await new Promise<void>((r) => call.once('drain', () => r()));
      };
      for await (const piece of this.node.checkpointOf(at)) {
        if (cancelled || this.closing) {
          code = status.CANCELLED;
          return;
        }
        parts.push(piece);
        size += piece.length;
        if (size >= CHECKPOINT_CHUNK_BYTES) await flush();
      }
      await flush();
      call.end();
    } catch (e) {
      const st = toServiceError(grpcStatusOf(e));
      code = st.code;
      call.emit('error', st);
    } finally {
      this.server.observe('GetCheckpoint', code);
    }
  }

  /**
   * GetNodes in slices of about `nodeProbesPerTurn` (hash, version) lookups, yielding the event
   * loop between slices: an unknown hash is looked for in every version held, so a large request
   * is seconds of work, and blocks, other calls and a shutdown go on between its slices. Each
   * slice searches the versions held at that moment (nodes are content-addressed: any is right).
   */
  private async getNodes(r: GetNodesRequest): Promise<GetNodesResponse> {
    const n = r.hashes.length;
    const nodes: (Uint8Array | undefined)[] = [];
    for (let i = 0; i < n; ) {
      if (this.closing) {
        throw new CallRefused(
          status.UNAVAILABLE,
          'SHUTTING_DOWN',
          `the node is shutting down; GetNodes stopped after ${i} of ${n} hashes`,
        );
      }
      const step = Math.max(1, Math.floor(this.opts.nodeProbesPerTurn / this.node.versions.size));
      const end = Math.min(n, i + step);
      const slice = {
        hashes: r.hashes.slice(i, end),
        ...(r.paths !== undefined && r.paths.length > 0 ? { paths: r.paths.slice(i, end) } : {}),
      };
      // A tiered node faults in what the slice reaches (a memory node answers at once).
      const part = await this.node.read(() => this.node.getNodes(slice));
      for (const x of part.nodes) nodes.push(x);
      i = end;
      if (i < n) await setImmediate();
    }
    return { nodes };
  }

  private methods(): MethodTable<ServedStorage> {
    const node = this.node;
    const region = this.region;
    const shardCount = node.layout.count;
    const max = this.opts.maxBatchQueries;
    return {
      getAccount: unaryRpc({
        decode: getAccountRequestFromProto,
        run: (r) => node.read(() => node.getAccount(r)),
        encode: getAccountResponseToProto,
      }),
      getStorage: unaryRpc({
        decode: getStorageRequestFromProto,
        run: (r) => node.read(() => node.getStorage(r)),
        encode: getStorageResponseToProto,
      }),
      getCode: unaryRpc({
        decode: getCodeRequestFromProto,
        run: (r) => {
          if (bytesEqual(r.codeHash, EMPTY_CODE_HASH)) return { code: new Uint8Array(0) };
          const code = node.getCode(r.codeHash);
          if (code === undefined) {
            throw new CallRefused(
              status.NOT_FOUND,
              'UNKNOWN_CODE',
              `code ${toHex(r.codeHash)} is not held here (no account of shards ${node.opts.shards.join(',')} has it on the head's chain)`,
            );
          }
          return { code };
        },
        encode: getCodeResponseToProto,
      }),
      batchGet: unaryRpc({
        decode: (r: storagePb.BatchGetRequest) => {
          if (r.queries.length > max) tooMany('queries', r.queries.length, max);
          const slots = r.queries.reduce((n, q) => n + q.slots.length, 0);
          if (slots > max) tooMany('slots over all queries', slots, max);
          return batchGetRequestFromProto(r);
        },
        run: (r) =>
          node.read(
            () => node.batchGet(r),
            () => node.batchProbes(r),
          ),
        encode: (res, req) => batchGetResponseBytes(res, req),
      }),
      getNodes: unaryRpc({
        decode: (r: storagePb.GetNodesRequest) => {
          if (r.hashes.length > this.opts.maxNodes) tooMany('hashes', r.hashes.length, this.opts.maxNodes);
          return getNodesRequestFromProto(r);
        },
        run: (r) => this.getNodes(r),
        encode: getNodesResponseToProto,
      }),
      getShardRoots: unaryRpc({
        decode: getShardRootsRequestFromProto,
        run: async (r) => {
          const { version, roots } = await node.read(() => node.shardRoots(r.at));
          const owned = new Set(version.state.owned);
          return {
            blockHash: version.hash,
            number: version.header.number,
            stateRoot: version.header.stateRoot,
            shardCount,
            roots: roots.filter((x) => owned.has(x.shard)),
            ...(region !== undefined ? { region: { ...region, bytes: BigInt(region.bytes) } } : {}),
          };
        },
        encode: getShardRootsResponseToProto,
      }),
      subscribeHeads: (call) => this.subscribeHeads(call),
      getBlockUpdates: unaryRpc({
        decode: getBlockUpdatesRequestFromProto,
        run: (r) => ({
          blocks: node.blockUpdates(r.afterNumber, Math.min(r.count, MAX_BLOCK_UPDATES)),
        }),
        encode: getBlockUpdatesResponseToProto,
      }),
      getCheckpoint: (call) => void this.getCheckpoint(call),
      applyBlock: unaryRpc({
        // The request's bytes are its log record, and are read directly (applyBlockRequestFromBytes).
        decode: (record: Uint8Array) => {
          const req = applyBlockRequestFromBytes(record, { shardCount });
          this.log.debug?.('apply block received', {
            bytes: req.headerRlp.length,
            shards: req.shards.length,
            accounts: req.shards.reduce((n, s) => n + s.accounts.length, 0),
          });
          return { req, record };
        },
        run: async ({ req, record }) => {
          try {
            return await node.applyBlock(req, record);
          } finally {
            this.heads.check();
          }
        },
        encode: (res) => applyBlockResponseToProto(res, { shardCount }),
      }),
      connectRdma: unaryRpc({
        decode: connectRdmaRequestFromProto,
        run: (r) => {
          if (this.rdma === undefined)
            throw new CallRefused(
              status.FAILED_PRECONDITION,
              'NO_RDMA',
              'this node does not export its region over RDMA (start it with --export-region and --rdma-device)',
            );
          return this.rdma.connect(r);
        },
        encode: connectRdmaResponseToProto,
        logRefusals: true,
      }),
    };
  }
}
