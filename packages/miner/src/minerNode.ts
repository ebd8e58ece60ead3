/**
 * A miner process's network side: the MinerService gRPC server (Submit, Peer, SubscribeHeads),
 * the block timer, gossip to peer miners, and pushing each block's per-shard updates to every
 * storage node with retries and backoff. The Miner itself never waits on any of it.
 */
import {
  type ClientDuplexStream,
  credentials,
  Server,
  ServerCredentials,
  type ServerDuplexStream,
  type ServerWritableStream,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { toHex } from '@monsoon/dsm-tree';
import { isExecutionError } from '@monsoon/execution';
import {
  type ApplyBlockRequest,
  applyBlockRequestToProto,
  type commonPb,
  encodeHeader,
  getShardRootsRequestToProto,
  HEAD,
  type Head,
  headToProto,
  isProtocolError,
  MinerServiceClient,
  MinerServiceDefinition,
  type minerPb,
  peerMessageFromProto,
  peerMessageToProto,
  StorageServiceClient,
  shardRootFromProto,
  type storagePb,
  submitRequestFromProto,
  submitResponseToProto,
} from '@monsoon/protocol';
import type { Miner, SealedBlock } from './miner.js';

/** What a MinerNode logs through: pino's shape (message first, fields after), any level may be missing. */
export interface MinerLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export const silentMinerLogger: MinerLogger = { info() {}, warn() {}, error() {} };

export interface MinerNodeOptions {
  /** `host:port`; port 0 = any free port. */
  listen: string;
  /** Seal a block this often (ms); 0 = only when asked (`sealNow`), for tests. */
  blockIntervalMs: number;
  /** Peer miners' `host:port`s to gossip blocks with. */
  peers: readonly string[];
  /** Storage nodes' `host:port`s: every block's updates go to each (its shards only). */
  storage: readonly string[];
  /** Most tries per storage node and block before the refusal is reported (0 = forever). */
  storageRetries: number;
  maxReceiveMessageBytes: number;
}

export const defaultMinerNodeOptions: MinerNodeOptions = {
  listen: '127.0.0.1:0',
  blockIntervalMs: 1000,
  peers: [],
  storage: [],
  storageRetries: 8,
  maxReceiveMessageBytes: 256 * 1024 * 1024,
};

export interface StorageCounters {
  applied: number;
  refused: number;
  retries: number;
}

const CHANNEL = {
  'grpc.max_receive_message_length': 256 * 1024 * 1024,
  'grpc.max_send_message_length': 256 * 1024 * 1024,
};

function unary<Req, Res>(
  call: (req: Req, cb: (e: ServiceError | null, r: Res) => void) => unknown,
  req: Req,
): Promise<Res> {
  return new Promise((resolve, reject) => call(req, (e, r) => (e ? reject(e) : resolve(r))));
}

/** One storage node: the shards it holds (asked once) and an ordered queue of blocks to send. */
class StoragePeer {
  readonly client: StorageServiceClient;
  shards: Set<number> | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    readonly address: string,
    private readonly node: MinerNode,
  ) {
    this.client = new StorageServiceClient(address, credentials.createInsecure(), CHANNEL);
  }

  /** Resolves once every block queued so far has been delivered or given up on. */
  idle(): Promise<void> {
    return this.chain;
  }

  send(b: SealedBlock): Promise<void> {
    this.chain = this.chain.then(() => this.deliver(b));
    return this.chain;
  }

  private async deliver(b: SealedBlock): Promise<void> {
    const { opts, log, storageCounters } = this.node;
    for (let attempt = 1; ; attempt++) {
      try {
        if (this.shards === undefined) {
          const r = await unary<storagePb.GetShardRootsRequest, storagePb.GetShardRootsResponse>(
            (q, cb) => this.client.getShardRoots(q, cb),
            getShardRootsRequestToProto({ at: HEAD }),
          );
          this.shards = new Set(r.roots.map((x) => shardRootFromProto(x).shard));
        }
        const mine = this.shards;
        const req: ApplyBlockRequest = {
          headerRlp: b.peer.headerRlp,
          shards: b.shards.filter((s) => mine.has(s.shard)),
          expectedRoots: b.expectedRoots,
        };
        await unary<storagePb.ApplyBlockRequest, storagePb.ApplyBlockResponse>(
          (q, cb) => this.client.applyBlock(q, cb),
          applyBlockRequestToProto(req, { shardCount: this.node.miner.opts.shardCount }),
        );
        storageCounters.applied++;
        return;
      } catch (e) {
        const err = e as ServiceError;
        const refused = err.code === status.INVALID_ARGUMENT || err.code === status.FAILED_PRECONDITION;
        if (refused || (opts.storageRetries > 0 && attempt >= opts.storageRetries)) {
          storageCounters.refused++;
          log.error('storage node refused a block', {
            storage: this.address,
            number: Number(b.block.header.number),
            hash: toHex(b.block.hash),
            code: err.code,
            error: err.details ?? err.message,
          });
          return;
        }
        storageCounters.retries++;
        await new Promise((r) => setTimeout(r, Math.min(5000, 50 * 2 ** attempt)));
      }
    }
  }
}

export class MinerNode {
  readonly storageCounters: StorageCounters = { applied: 0, refused: 0, retries: 0 };
  private readonly server = new Server({ 'grpc.max_receive_message_length': 256 * 1024 * 1024 });
  private readonly storagePeers: StoragePeer[];
  private readonly peerStreams = new Set<
    | ServerDuplexStream<minerPb.PeerMessage, minerPb.PeerMessage>
    | ClientDuplexStream<minerPb.PeerMessage, minerPb.PeerMessage>
  >();
  private readonly headListeners = new Set<(h: Head) => void>();
  private readonly peerClients: MinerServiceClient[] = [];
  private timer: NodeJS.Timeout | undefined;
  private port = 0;

  private constructor(
    readonly miner: Miner,
    readonly opts: MinerNodeOptions,
    readonly log: MinerLogger,
  ) {
    this.storagePeers = opts.storage.map((a) => new StoragePeer(a, this));
  }

  static async start(
    miner: Miner,
    opts: Partial<MinerNodeOptions> = {},
    log: MinerLogger = silentMinerLogger,
  ): Promise<MinerNode> {
    const n = new MinerNode(miner, { ...defaultMinerNodeOptions, ...opts }, log);
    await n.listen();
    for (const p of n.opts.peers) n.dial(p);
    if (n.opts.blockIntervalMs > 0) {
      n.timer = setInterval(
        () => void n.sealNow().catch((e) => log.error('sealing failed', { error: String(e) })),
        n.opts.blockIntervalMs,
      );
    }
    return n;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  private async listen(): Promise<void> {
    this.server.addService(MinerServiceDefinition, {
      submit: (
        call: { request: minerPb.SubmitRequest },
        cb: (e: Partial<ServiceError> | null, r?: minerPb.SubmitResponse) => void,
      ) => {
        let req: ReturnType<typeof submitRequestFromProto>;
        try {
          req = submitRequestFromProto(call.request);
        } catch (e) {
          cb({ code: status.INVALID_ARGUMENT, details: (e as Error).message });
          return;
        }
        this.miner.submit(req).then(
          (res) => cb(null, submitResponseToProto(res)),
          (e) => {
            const mine = isExecutionError(e) || isProtocolError(e);
            if (!mine) this.log.error('submit failed', { error: String(e) });
            cb({ code: mine ? status.INVALID_ARGUMENT : status.INTERNAL, details: (e as Error).message });
          },
        );
      },
      peer: (call: ServerDuplexStream<minerPb.PeerMessage, minerPb.PeerMessage>) =>
        this.attachPeer(call, 'inbound'),
      subscribeHeads: (call: ServerWritableStream<minerPb.SubscribeHeadsRequest, commonPb.Head>) => {
        const send = (h: Head) => call.write(headToProto(h));
        send(this.headOf(this.miner.head.header, this.miner.head.hash));
        this.headListeners.add(send);
        const stop = () => {
          this.headListeners.delete(send);
          call.end();
        };
        call.on('cancelled', stop);
        call.on('error', stop);
      },
    });
    const host = this.opts.listen.slice(0, this.opts.listen.lastIndexOf(':'));
    const port = Number(this.opts.listen.slice(this.opts.listen.lastIndexOf(':') + 1));
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
  }

  private headOf(header: SealedBlock['block']['header'], hash: Uint8Array): Head {
    return { hash, number: header.number, headerRlp: encodeHeader(header), stateRoot: header.stateRoot };
  }

  private dial(address: string): void {
    const client = new MinerServiceClient(address, credentials.createInsecure(), CHANNEL);
    this.peerClients.push(client);
    const connect = () => {
      const stream = client.peer();
      this.attachPeer(stream, address);
      stream.on('error', () => setTimeout(connect, 500).unref());
    };
    connect();
  }

  private attachPeer(
    stream:
      | ServerDuplexStream<minerPb.PeerMessage, minerPb.PeerMessage>
      | ClientDuplexStream<minerPb.PeerMessage, minerPb.PeerMessage>,
    who: string,
  ): void {
    this.peerStreams.add(stream);
    const drop = () => this.peerStreams.delete(stream);
    stream.on('error', drop);
    stream.on('end', drop);
    stream.on('close', drop);
    stream.on('data', (m: minerPb.PeerMessage) => {
      let msg: ReturnType<typeof peerMessageFromProto>;
      try {
        msg = peerMessageFromProto(m);
      } catch (e) {
        this.log.warn('malformed peer message', { peer: who, error: (e as Error).message });
        return;
      }
      this.miner.receiveBlock(msg.block).then(
        (sealed) => {
          if (sealed === undefined) return;
          this.log.info('peer block adopted', {
            peer: who,
            number: Number(sealed.block.header.number),
            head: toHex(this.miner.head.hash),
          });
          this.announce(sealed, stream);
        },
        (e) => this.log.warn('peer block refused', { peer: who, error: (e as Error).message }),
      );
    });
  }

  /** Seals the pending block now and sends it everywhere. */
  async sealNow(): Promise<SealedBlock> {
    const sealed = await this.miner.seal();
    this.log.info('block sealed', {
      number: Number(sealed.block.header.number),
      txs: sealed.block.transactions.length,
      hash: toHex(sealed.block.hash),
    });
    this.announce(sealed, undefined);
    return sealed;
  }

  /** To every peer (but the one it came from), every storage node, every head subscriber. */
  private announce(sealed: SealedBlock, from: unknown): void {
    const msg = peerMessageToProto({ kind: 'block', block: sealed.peer });
    for (const s of this.peerStreams) if (s !== from) s.write(msg);
    for (const p of this.storagePeers) void p.send(sealed);
    if (this.miner.head === sealed.block) {
      const h = this.headOf(sealed.block.header, sealed.block.hash);
      for (const l of this.headListeners) l(h);
    }
  }

  /** Waits until every storage node has been sent every block so far. */
  async storageSettled(): Promise<void> {
    await Promise.all(this.storagePeers.map((p) => p.idle()));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const s of this.peerStreams) s.end();
    for (const c of this.peerClients) c.close();
    for (const p of this.storagePeers) p.client.close();
    await new Promise<void>((r) => this.server.tryShutdown(() => r()));
  }
}
