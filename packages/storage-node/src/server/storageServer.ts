/**
 * The storage node's gRPC edge: a real @grpc/grpc-js server implementing every StorageService
 * RPC as wire → domain (validating converters) → StorageNode → domain → wire. Errors become
 * statuses here and only here (see grpcStatus.ts); the node never sees a protobuf type.
 */
import {
  Server,
  ServerCredentials,
  type ServerWritableStream,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import { bytesEqual, EMPTY_CODE_HASH, toHex } from '@monsoon/dsm-tree';
import {
  CallRefused,
  formatHostPort,
  HeadFeed,
  type Logger,
  parseHostPort,
  type RequestMetrics,
  secondsSince,
  silentLogger,
  statusName,
  streamHeads,
  toServiceError,
} from '@monsoon/edge';
import {
  applyBlockRequestFromProto,
  applyBlockResponseToProto,
  batchGetRequestFromProto,
  batchGetResponseToProto,
  type commonPb,
  getAccountRequestFromProto,
  getAccountResponseToProto,
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
import { StorageError, StorageErrorCode } from '../storageError.js';
import type { StorageNode } from '../storageNode.js';
import type { Version } from '../versionStore.js';
import { grpcStatusOf } from './grpcStatus.js';

export interface StorageServerOptions {
  /** `host:port` to listen on; port 0 = any free port (see `address()`). */
  listen: string;
  /** Largest request accepted, bytes; larger ones get RESOURCE_EXHAUSTED from grpc-js. */
  maxReceiveMessageBytes: number;
  /**
   * Most queries in a BatchGet, most slots over all its queries, and most hashes in a GetNodes;
   * more is INVALID_ARGUMENT.
   */
  maxBatchQueries: number;
  /** How long `close()` waits for calls in progress before cutting them off. */
  shutdownTimeoutMs: number;
}

export const defaultStorageServerOptions: StorageServerOptions = {
  listen: '127.0.0.1:50051',
  maxReceiveMessageBytes: 64 * 1024 * 1024,
  maxBatchQueries: 10_000,
  shutdownTimeoutMs: 5_000,
};

/** A version as SubscribeHeads sends it. */
export function headOf(v: Version): Head {
  return { hash: v.hash, number: v.header.number, headerRlp: v.headerRlp, stateRoot: v.header.stateRoot };
}

export interface StorageServerModules {
  node: StorageNode;
  logger?: Logger;
  metrics?: RequestMetrics;
}

/** One unary RPC: decode (caller's fault when it throws), run, encode (ours when it throws). */
interface UnaryRpc<Req, Dom, Out, Res> {
  decode(req: Req): Dom;
  run(req: Dom): Out | Promise<Out>;
  encode(out: Out, req: Dom): Res;
  /** Log refusals the caller caused too (a refused block is worth a line; a refused read is not). */
  logRefusals?: boolean;
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
  private readonly log: Logger;
  private readonly metrics: RequestMetrics | undefined;
  private readonly streams = new Set<() => void>();
  private closing: Promise<void> | undefined;
  /** Set once bound. */
  private host = '';
  private boundPort = 0;

  private constructor(
    readonly opts: StorageServerOptions,
    modules: StorageServerModules,
    private readonly server: Server,
  ) {
    this.node = modules.node;
    this.log = modules.logger ?? silentLogger;
    this.metrics = modules.metrics;
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
    const at = parseHostPort(o.listen);
    for (const [k, v] of [
      ['maxReceiveMessageBytes', o.maxReceiveMessageBytes],
      ['maxBatchQueries', o.maxBatchQueries],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < 1) {
        throw new StorageError(StorageErrorCode.BadArgument, `${k}: expected a positive integer, found ${v}`);
      }
    }
    const grpcServer = new Server({ 'grpc.max_receive_message_length': o.maxReceiveMessageBytes });
    const s = new StorageServer(o, modules, grpcServer);
    grpcServer.addService(StorageServiceDefinition, s.handlers());
    const port = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync(formatHostPort(at), ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    ).catch((e: unknown) => {
      grpcServer.forceShutdown();
      throw e;
    });
    s.host = at.host;
    s.boundPort = port;
    return s;
  }

  /** The bound address, `host:port` (the real port when `listen` asked for 0). */
  address(): string {
    return formatHostPort({ host: this.host, port: this.boundPort });
  }

  get port(): number {
    return this.boundPort;
  }

  /**
   * Stops accepting calls, ends every SubscribeHeads stream, lets calls in progress finish
   * (ApplyBlocks included) for up to `shutdownTimeoutMs`, then cuts off what is left. The node
   * is not closed: it belongs to the caller.
   */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.log.warn('shutdown timed out; cutting off calls in progress', {
          ms: this.opts.shutdownTimeoutMs,
        });
        this.server.forceShutdown();
        resolve();
      }, this.opts.shutdownTimeoutMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
      for (const end of [...this.streams]) end();
    });
    return this.closing;
  }

  private observe(method: string, code: status, started?: bigint): void {
    const seconds = started === undefined ? undefined : secondsSince(started);
    this.metrics?.observeRequest(method, statusName(code), seconds);
  }

  private unary<Req, Dom, Out, Res>(
    method: string,
    rpc: UnaryRpc<Req, Dom, Out, Res>,
  ): (call: { request: Req }, callback: sendUnaryData<Res>) => void {
    return (call, callback) => {
      const started = process.hrtime.bigint();
      const refuse = (e: unknown, ours: boolean): void => {
        const st = ours ? { ...grpcStatusOf(e), code: status.INTERNAL, internal: true } : grpcStatusOf(e);
        if (st.internal) {
          this.log.error('call failed', {
            method,
            error: e instanceof Error ? e.message : String(e),
            stack: e instanceof Error ? e.stack : undefined,
          });
        } else if (rpc.logRefusals) {
          this.log.warn('call refused', { method, code: statusName(st.code), error: st.details });
        }
        this.observe(method, st.code, started);
        callback(toServiceError(st), null);
      };
      let req: Dom;
      try {
        req = rpc.decode(call.request);
      } catch (e) {
        refuse(e, false);
        return;
      }
      Promise.resolve()
        .then(() => rpc.run(req))
        .then(
          (out) => {
            let res: Res;
            try {
              res = rpc.encode(out, req);
            } catch (e) {
              refuse(e, true);
              return;
            }
            this.observe(method, status.OK, started);
            callback(null, res);
          },
          (e: unknown) => refuse(e, false),
        );
    };
  }

  private subscribeHeads(call: ServerWritableStream<storagePb.SubscribeHeadsRequest, commonPb.Head>): void {
    const end = streamHeads(
      call,
      this.heads,
      (v) => headToProto(headOf(v)),
      (code) => {
        this.streams.delete(end);
        this.observe('SubscribeHeads', code);
      },
    );
    this.streams.add(end);
  }

  private handlers(): StorageServiceServer {
    const node = this.node;
    const shardCount = node.layout.count;
    const max = this.opts.maxBatchQueries;
    return {
      getAccount: this.unary('GetAccount', {
        decode: getAccountRequestFromProto,
        run: (r) => node.getAccount(r),
        encode: getAccountResponseToProto,
      }),
      getStorage: this.unary('GetStorage', {
        decode: getStorageRequestFromProto,
        run: (r) => node.getStorage(r),
        encode: getStorageResponseToProto,
      }),
      getCode: this.unary('GetCode', {
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
      batchGet: this.unary('BatchGet', {
        decode: (r: storagePb.BatchGetRequest) => {
          if (r.queries.length > max) tooMany('queries', r.queries.length, max);
          const slots = r.queries.reduce((n, q) => n + q.slots.length, 0);
          if (slots > max) tooMany('slots over all queries', slots, max);
          return batchGetRequestFromProto(r);
        },
        run: (r) => node.batchGet(r),
        encode: (res, req) => batchGetResponseToProto(res, req),
      }),
      getNodes: this.unary('GetNodes', {
        decode: (r: storagePb.GetNodesRequest) => {
          if (r.hashes.length > max) tooMany('hashes', r.hashes.length, max);
          return getNodesRequestFromProto(r);
        },
        run: (r) => node.getNodes(r),
        encode: getNodesResponseToProto,
      }),
      getShardRoots: this.unary('GetShardRoots', {
        decode: getShardRootsRequestFromProto,
        run: (r) => {
          const { version, roots } = node.shardRoots(r.at);
          const owned = new Set(version.state.owned);
          return {
            blockHash: version.hash,
            number: version.header.number,
            stateRoot: version.header.stateRoot,
            shardCount,
            roots: roots.filter((x) => owned.has(x.shard)),
          };
        },
        encode: getShardRootsResponseToProto,
      }),
      subscribeHeads: (call) => this.subscribeHeads(call),
      applyBlock: this.unary('ApplyBlock', {
        decode: (r: storagePb.ApplyBlockRequest) => {
          const req = applyBlockRequestFromProto(r, { shardCount });
          this.log.debug?.('apply block received', {
            bytes: req.headerRlp.length,
            shards: req.shards.length,
            accounts: req.shards.reduce((n, s) => n + s.accounts.length, 0),
          });
          return req;
        },
        run: async (r) => {
          try {
            return await node.applyBlock(r);
          } finally {
            this.heads.check();
          }
        },
        encode: (res) => applyBlockResponseToProto(res, { shardCount }),
        logRefusals: true,
      }),
    };
  }
}
