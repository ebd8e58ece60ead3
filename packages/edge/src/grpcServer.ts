/**
 * The gRPC server every role runs: a table of methods, each unary one as decode (wire → domain,
 * the caller's fault when it throws) → run (the domain handler) → encode (domain → wire, ours when
 * it throws); domain errors become statuses through the service's `grpcStatusOf` (see
 * grpcStatus.ts); every finished call is logged when it must be and observed in the metrics.
 * Streaming methods are plain grpc-js handlers in the same table. Binds to `host:port` (port 0 =
 * any free port) and closes with a deadline, after which calls still running are cut off.
 */
import {
  type handleUnaryCall,
  Server,
  ServerCredentials,
  type ServiceDefinition,
  type sendUnaryData,
  status,
  type UntypedHandleCall,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { EdgeError, EdgeErrorCode } from './edgeError.js';
import { widenServerWindows } from './flowControl.js';
import { type GrpcStatus, statusName, toServiceError } from './grpcStatus.js';
import { formatHostPort, parseHostPort } from './hostPort.js';
import { type Logger, silentLogger } from './logger.js';
import { type RequestMetrics, secondsSince } from './metrics.js';

/**
 * One unary method: `decode` the request into domain terms (a throw is the caller's fault and
 * gets the error's status), `run` the domain handler (a throw gets the error's status), `encode`
 * the answer (a throw is a bug of ours: INTERNAL).
 */
export interface UnaryRpc<Req, Dom, Out, Res> {
  decode(req: Req): Dom;
  run(req: Dom): Out | Promise<Out>;
  encode(out: Out, req: Dom): Res;
  /** Log refusals the caller caused too (a refused block is worth a line; a refused read is not). */
  logRefusals?: boolean;
}

/**
 * A unary method for a {@link MethodTable}, its types inferred from its own functions (the table
 * alone cannot infer the domain types in between).
 */
export function unaryRpc<Req, Dom, Out, Res>(
  rpc: UnaryRpc<Req, Dom, Out, Res>,
): UnaryRpc<Req, Dom, Out, Res> {
  return rpc;
}

/**
 * What a service's generated `XServiceServer` interface asks for, method by method: a unary method
 * may be a {@link UnaryRpc} (or a plain handler), a streaming one is a plain grpc-js handler.
 */
export type MethodTable<S> = {
  // Only the named methods: not the index signature the generated interface inherits from grpc-js.
  [K in keyof S as string extends K ? never : K]: S[K] extends handleUnaryCall<infer Req, infer Res>
    ? UnaryRpc<Req, unknown, unknown, Res> | S[K]
    : S[K];
};

/** A unary method with its types erased, as the server holds it. */
type AnyUnaryRpc = UnaryRpc<unknown, unknown, unknown, unknown>;

export interface GrpcServerOptions {
  /** `host:port` to listen on; port 0 = any free port (see `address()`). */
  listen: string;
  /** Largest request accepted, bytes; larger ones get RESOURCE_EXHAUSTED from grpc-js. */
  maxReceiveMessageBytes: number;
  /** How long `close()` waits for calls in progress before cutting them off. */
  shutdownTimeoutMs: number;
}

export const defaultGrpcServerOptions: GrpcServerOptions = {
  listen: '127.0.0.1:0',
  maxReceiveMessageBytes: 64 * 1024 * 1024,
  shutdownTimeoutMs: 5_000,
};

export interface GrpcServerModules {
  /** The service's status function: `grpcStatusMapping([...rules])`. */
  grpcStatusOf: (e: unknown) => GrpcStatus;
  logger?: Logger;
  /** Observes every finished unary call (and what streams report through `observe`). */
  metrics?: RequestMetrics;
}

/** A bound gRPC server serving one service from a {@link MethodTable}. */
export class GrpcServer {
  private closing: Promise<void> | undefined;
  private boundPort = 0;

  private constructor(
    readonly opts: GrpcServerOptions,
    private readonly server: Server,
    private readonly modules: GrpcServerModules,
    private readonly log: Logger,
    /** The host it listens on, as `listen` gave it. */
    readonly host: string,
  ) {}

  /**
   * Serves `methods` as `service` on `opts.listen`; resolves once the port is bound. The type
   * argument is the service's generated server interface: `create<StorageServiceServer>(…)`.
   */
  static async create<S extends UntypedServiceImplementation>(
    opts: Partial<GrpcServerOptions> & { listen: string },
    modules: GrpcServerModules,
    service: ServiceDefinition<S>,
    methods: MethodTable<S>,
  ): Promise<GrpcServer> {
    const o: GrpcServerOptions = { ...defaultGrpcServerOptions, ...opts };
    for (const [k, v] of [
      ['maxReceiveMessageBytes', o.maxReceiveMessageBytes],
      ['shutdownTimeoutMs', o.shutdownTimeoutMs],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < (k === 'shutdownTimeoutMs' ? 0 : 1)) {
        throw new EdgeError(
          EdgeErrorCode.BadArgument,
          `${k}: expected a ${k === 'shutdownTimeoutMs' ? 'non-negative' : 'positive'} integer, found ${v}`,
          { what: k, found: String(v) },
        );
      }
    }
    const at = parseHostPort(o.listen);
    const log = modules.logger ?? silentLogger;
    const server = new Server({ 'grpc.max_receive_message_length': o.maxReceiveMessageBytes });
    // Requests (a Submit's bag, a block's updates) arrive whole while the loop is busy.
    const windows = widenServerWindows(server);
    if (!windows.widened)
      log.warn('this grpc-js has no fields to widen flow-control windows with: 64 KiB windows');
    const self = new GrpcServer(o, server, modules, log, at.host);
    const handlers: UntypedServiceImplementation = {};
    for (const key of Object.keys(methods)) {
      const entry = (methods as Record<string, UntypedHandleCall | AnyUnaryRpc>)[key]!;
      // The RPC's name as metrics and logs give it: the last part of its path (`GetAccount`).
      const path = (service as Record<string, { path: string } | undefined>)[key]?.path ?? key;
      handlers[key] =
        typeof entry === 'function' ? entry : self.unaryHandler(path.slice(path.lastIndexOf('/') + 1), entry);
    }
    server.addService(service, handlers);
    self.boundPort = await new Promise<number>((resolve, reject) =>
      server.bindAsync(formatHostPort(at), ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    ).catch((e: unknown) => {
      server.forceShutdown();
      throw e;
    });
    windows.afterBind();
    return self;
  }

  /** The bound port (the real one when `listen` asked for 0). */
  get port(): number {
    return this.boundPort;
  }

  /** The bound address, `host:port` (the real port when `listen` asked for 0). */
  address(): string {
    return formatHostPort({ host: this.host, port: this.port });
  }

  /** Records a finished call (streams report theirs here): its RPC name, status and, if known, start. */
  observe(method: string, code: status, started?: bigint): void {
    this.modules.metrics?.observeRequest(
      method,
      statusName(code),
      started === undefined ? undefined : secondsSince(started),
    );
  }

  /**
   * Stops accepting calls and lets calls in progress finish for up to `shutdownTimeoutMs`, then
   * cuts off what is left (logged). Streams never end by themselves: end them right after calling
   * this (the returned promise waits for them).
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
    });
    return this.closing;
  }

  /** A grpc-js unary handler running `rpc`: decode, run, encode, with statuses, logs and metrics. */
  private unaryHandler(method: string, rpc: AnyUnaryRpc): handleUnaryCall<unknown, unknown> {
    const { grpcStatusOf } = this.modules;
    const log = this.log;
    return (call, callback: sendUnaryData<unknown>) => {
      const started = process.hrtime.bigint();
      const refuse = (e: unknown, ours: boolean): void => {
        const st = ours ? { ...grpcStatusOf(e), code: status.INTERNAL, internal: true } : grpcStatusOf(e);
        if (st.internal) {
          log.error('call failed', {
            method,
            error: e instanceof Error ? e.message : String(e),
            stack: e instanceof Error ? e.stack : undefined,
          });
        } else if (rpc.logRefusals) {
          log.warn('call refused', { method, code: statusName(st.code), error: st.details });
        }
        this.observe(method, st.code, started);
        callback(toServiceError(st), null);
      };
      let req: unknown;
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
            let res: unknown;
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
}
