/**
 * A miner process's network side: the MinerService gRPC server (Submit, Peer, SubscribeHeads),
 * the block timer, gossip to peer miners, pushing each block's per-shard updates to every
 * storage node with retries and backoff, and optionally /metrics. The Miner itself never waits
 * on any of it.
 */
import {
  type ClientDuplexStream,
  credentials,
  Metadata,
  type ServerDuplexStream,
  type ServerWritableStream,
  status,
} from '@grpc/grpc-js';
import { bytesEqual, toHex } from '@monsoon/dsm-tree';
import {
  addProcessMetrics,
  channelOptions,
  formatHostPort,
  GrpcServer,
  grpcStatusMapping,
  HeadFeed,
  type Histogram,
  type HostPort,
  type Logger,
  MAX_CHANNEL_MESSAGE_BYTES,
  type MethodTable,
  MetricsRegistry,
  MetricsServer,
  REQUEST_SECONDS_BUCKETS,
  type Sample,
  silentLogger,
  streamHeads,
  unaryRpc,
  withSharedEncoding,
} from '@monsoon/edge';
import { isExecutionError } from '@monsoon/execution';
import {
  blockWithReceiptsToProto,
  decodeHeader,
  encodeHeader,
  type Head,
  headToProto,
  isProtocolError,
  MinerServiceClient,
  MinerServiceDefinition,
  type MinerServiceServer,
  type minerPb,
  peerMessageFromProto,
  peerMessageToProto,
  submitRequestFromProto,
  submitResponseToProto,
} from '@monsoon/protocol';
import { type SteadyTicker, steadyTicker } from '@monsoon/util';
import { BlockLog } from './blockLog.js';
import { HeaderArchive } from './headerArchive.js';
import { type ChainBlock, type Miner, peerBlockOf, type SealedBlock } from './miner.js';
import { defaultPeerSyncOptions, type PeerLink, PeerSync, type PeerSyncOptions } from './peerSync.js';
import {
  defaultStoragePeerOptions,
  type StorageCounters,
  StoragePeer,
  type StoragePeerOptions,
} from './storagePeer.js';

export type { StorageCounters } from './storagePeer.js';

export interface MinerNodeOptions {
  /** `host:port`; port 0 = any free port. */
  listen: string;
  /** Serve Prometheus text at `http://<host:port>/metrics`; undefined = no metrics server. */
  metrics?: HostPort;
  /** Seal a block this often (ms); 0 = only when asked (`sealNow`), for tests. */
  blockIntervalMs: number;
  /** Peer miners' `host:port`s to gossip blocks with. */
  peers: readonly string[];
  /** Storage nodes' `host:port`s: every block's updates go to each (its shards only). */
  storage: readonly string[];
  /**
   * How each storage node is fed (backoff, backlog, deadlines). A node that cannot be reached
   * keeps its blocks; one that comes back behind is caught up from its head.
   */
  storageFeed: Partial<Omit<StoragePeerOptions, 'shardCount'>>;
  /**
   * Sealed blocks (with their per-shard updates) kept below the head for catching storage nodes
   * up: a node further behind than this (or than the miner's `keepBlocks`) is reported, not
   * caught up.
   */
  storageCatchUpBlocks: number;
  /**
   * Where the miner logs its chain (every block it adopts); on start it re-executes what the
   * log holds and continues from there. Undefined: nothing on disk (a restart is at genesis).
   */
  dataDir?: string;
  /** fsync the chain log after every block ('always') or leave it to the OS ('none'). */
  fsync: 'always' | 'none';
  /**
   * Blocks logged since the chain log's last compaction before it is compacted again: a
   * checkpoint of the oldest held block of the head's chain replaces everything up to it, and
   * the log keeps the held blocks after it. A restart then re-executes at most this many blocks
   * plus the window, not the chain since genesis, and the log's size is bounded.
   */
  logCompactAfter: number;
  /** Fetching the missing ancestors of peers' blocks (how many per request, how many may wait). */
  peerSync: Partial<PeerSyncOptions>;
  maxReceiveMessageBytes: number;
}

export const defaultMinerNodeOptions: MinerNodeOptions = {
  listen: '127.0.0.1:0',
  blockIntervalMs: 1000,
  peers: [],
  storage: [],
  storageFeed: {},
  storageCatchUpBlocks: 128,
  fsync: 'always',
  logCompactAfter: 1024,
  peerSync: {},
  maxReceiveMessageBytes: MAX_CHANNEL_MESSAGE_BYTES,
};

const CHANNEL = channelOptions();

/** A malformed request or transaction is the caller's fault; anything else is INTERNAL. */
/** Headers per GetHeaders message (~140 KB). */
const HEADERS_PER_CHUNK = 256;

const grpcStatusOf = grpcStatusMapping([
  { is: isProtocolError, otherwise: status.INVALID_ARGUMENT },
  { is: isExecutionError, otherwise: status.INVALID_ARGUMENT },
]);

/** A block as SubscribeHeads sends it. */
function headOf(b: ChainBlock): Head {
  return {
    hash: b.hash,
    number: b.header.number,
    headerRlp: encodeHeader(b.header),
    stateRoot: b.header.stateRoot,
  };
}

type PeerStream =
  | ServerDuplexStream<minerPb.PeerMessage, minerPb.PeerMessage>
  | ClientDuplexStream<minerPb.PeerMessage, minerPb.PeerMessage>;

interface PeerStreamLink extends PeerLink {
  readonly stream: PeerStream;
}

export class MinerNode {
  /**
   * The node's metrics, `monsoon_miner_*`: the Miner's counters, head and pending block, each
   * storage node's refusals and retries, and Submit latency by status.
   */
  readonly metrics = new MetricsRegistry();
  private server: GrpcServer | undefined;
  private readonly storagePeers: StoragePeer[];
  /** Peer blocks in, their missing ancestors fetched from the peer that sent them. */
  private readonly sync: PeerSync<PeerStreamLink>;
  /** Recent sealed blocks by hash, with their updates: what a storage node that is behind is sent. */
  private readonly recentSealed = new Map<string, SealedBlock>();
  private readonly peerStreams = new Set<PeerStream>();
  /** The miner's head, announced to SubscribeHeads streams whenever a block moves it. */
  private readonly heads: HeadFeed<ChainBlock>;
  /** Ends each open SubscribeHeads stream (on close). */
  private readonly headStreams = new Set<() => void>();
  private readonly peerClients: MinerServiceClient[] = [];
  /** Set by close(): peer streams are not dialled again. */
  private closing = false;
  private readonly submitSeconds: Histogram;
  private metricsServer: MetricsServer | undefined;
  /**
   * The head subscribers see: the miner's head once it is in the chain log (at once without
   * one), so a head a client saw survives a restart.
   */
  private announcedHead: ChainBlock;
  /** The chain log, with `dataDir`. */
  private blockLog: BlockLog | undefined;
  /** Headers of the head chain's forgotten blocks (GetHeaders): `headers.log` with `dataDir`. */
  private archive = HeaderArchive.inMemory();
  /** Set once the archive refused a gap (a data directory from before it): said once. */
  private archiveGap = false;
  private timer: SteadyTicker | undefined;
  /** Blocks' SubscribeBlocks messages, kept while the block is (see blockMessage). */
  private readonly blockMessages = new WeakMap<ChainBlock, minerPb.BlockWithReceipts>();

  private constructor(
    readonly miner: Miner,
    readonly opts: MinerNodeOptions,
    readonly log: Logger,
  ) {
    const feed: StoragePeerOptions = {
      ...defaultStoragePeerOptions,
      ...opts.storageFeed,
      shardCount: miner.opts.shardCount,
    };
    this.storagePeers = opts.storage.map(
      (a) => new StoragePeer(a, feed, { log, sealed: (h) => this.recentSealed.get(toHex(h)) }, CHANNEL),
    );
    this.sync = new PeerSync(
      { ...defaultPeerSyncOptions, ...opts.peerSync },
      { miner, log, adopted: (sealed, from) => this.announce(sealed, from.stream) },
    );
    this.announcedHead = miner.head;
    this.heads = new HeadFeed(
      () => this.announcedHead,
      (b) => toHex(b.hash),
    );
    this.submitSeconds = this.metrics.histogram(
      'monsoon_miner_submit_seconds',
      'Time to answer a Submit call, by status.',
      REQUEST_SECONDS_BUCKETS,
    );
    this.watchMetrics();
    miner.onSealed = (sealed) => this.sealed(sealed);
    miner.onForgotten = (blocks) => this.archiveHeaders(blocks);
  }

  private archiveHeaders(blocks: readonly ChainBlock[]): void {
    try {
      this.archive.append(
        blocks[0]!.header.number,
        blocks.map((b) => encodeHeader(b.header)),
      );
    } catch (e) {
      if (this.archiveGap) return;
      this.archiveGap = true;
      this.log.warn('header archive: a gap, older headers not served (GetHeaders)', {
        error: (e as Error).message,
      });
    }
  }

  static async start(
    miner: Miner,
    opts: Partial<MinerNodeOptions> = {},
    log: Logger = silentLogger,
  ): Promise<MinerNode> {
    const n = new MinerNode(miner, { ...defaultMinerNodeOptions, ...opts }, log);
    if (n.opts.dataDir !== undefined) await n.restoreChain(n.opts.dataDir);
    await n.listen();
    if (n.opts.metrics !== undefined) {
      try {
        n.metricsServer = await MetricsServer.create(
          { listen: formatHostPort(n.opts.metrics) },
          { registry: n.metrics, logger: log },
        );
      } catch (e) {
        await n.close();
        throw e;
      }
    }
    for (const p of n.opts.peers) n.dial(p);
    if (n.opts.blockIntervalMs > 0) {
      // On a fixed grid: a block late by a busy loop does not move the next ones (steadyTicker).
      n.timer = steadyTicker(
        n.opts.blockIntervalMs,
        () => void n.sealNow().catch((e) => log.error('sealing failed', { error: String(e) })),
      );
    }
    return n;
  }

  /** Re-executes the blocks the chain log holds, then logs every block adopted from now on. */
  private async restoreChain(dataDir: string): Promise<void> {
    const started = performance.now();
    this.archive = await HeaderArchive.open(dataDir, this.opts.fsync === 'always', this.log);
    const {
      log: blockLog,
      count,
      blocks,
      checkpoint,
    } = await BlockLog.open({ dataDir, fsync: this.opts.fsync }, this.log);
    let from = 0n;
    if (checkpoint !== undefined) {
      // A miner created from this checkpoint (Miner.create's `from`) is there already.
      const there = bytesEqual(encodeHeader(this.miner.head.header), checkpoint.headerRlp);
      if (!there) await this.miner.resetTo(checkpoint);
      from = this.miner.head.header.number;
    }
    let refused = 0;
    for await (const b of blocks()) {
      // A crash between a compaction's two renames left the old log: its blocks up to the checkpoint go.
      if (decodeHeader(b.headerRlp).number <= from) continue;
      try {
        const sealed = await this.miner.receiveBlock(b);
        // A storage node behind may need them: the restored blocks are kept for catch-ups too.
        if (sealed !== undefined && this.storagePeers.length > 0) this.keepSealed(sealed);
      } catch (e) {
        // Its parent was in a tail lost to a crash: a peer will send it again.
        refused++;
        this.log.warn('logged block not restored', { error: (e as Error).message });
      }
    }
    this.blockLog = blockLog;
    this.announcedHead = this.miner.head;
    this.log.info('chain restored', {
      checkpoint: checkpoint === undefined ? undefined : Number(from),
      blocks: count,
      refused,
      head: Number(this.miner.head.header.number),
      hash: toHex(this.miner.head.hash),
      ms: Math.round(performance.now() - started),
    });
  }

  /** The bound MinerService address, `host:port` (the real port when `listen` asked for 0). */
  get address(): string {
    return this.server?.address() ?? '';
  }

  /** The bound /metrics address, `host:port`; undefined without `metrics`. */
  get metricsAddress(): string | undefined {
    return this.metricsServer?.address();
  }

  /** What became of the blocks sent to storage, over every storage node. */
  get storageCounters(): StorageCounters {
    const sum: StorageCounters = { applied: 0, refused: 0, retries: 0, caughtUp: 0 };
    for (const p of this.storagePeers) {
      sum.applied += p.counters.applied;
      sum.refused += p.counters.refused;
      sum.retries += p.counters.retries;
      sum.caughtUp += p.counters.caughtUp;
    }
    return sum;
  }

  private watchMetrics(): void {
    const m = this.metrics;
    const c = this.miner.counters;
    const by = (label: string, values: Record<string, number>): Sample[] =>
      Object.entries(values).map(([v, value]) => ({ labels: { [label]: v }, value }));
    const perStorage = (read: (p: StoragePeer) => Record<string, number>): Sample[] =>
      this.storagePeers.flatMap((p) =>
        Object.entries(read(p)).map(([result, value]) => ({
          labels: { storage: p.address, result },
          value,
        })),
      );
    m.observableCounter('monsoon_miner_transactions_total', 'Submitted transactions, by result.', () =>
      by('result', {
        accepted: c.accepted,
        invalid: c.invalid,
        stale: c.stale,
        overloaded: c.overloaded,
        known: c.known,
      }),
    );
    m.observableCounter('monsoon_miner_blocks_sealed_total', 'Blocks this miner sealed.', () => c.blocks);
    m.observableCounter('monsoon_miner_peer_blocks_total', "Peers' blocks re-executed, by result.", () =>
      by('result', { adopted: c.peerBlocksAdopted, refused: c.peerBlocksRefused }),
    );
    m.observableCounter(
      'monsoon_miner_reorg_transactions_total',
      'Transactions of a losing branch submitted again after a reorg, by result.',
      () => by('result', { requeued: c.requeued, dropped: c.dropped }),
    );
    m.gauge('monsoon_miner_head_number', 'Number of the head block.', () =>
      Number(this.miner.head.header.number),
    );
    m.gauge(
      'monsoon_miner_blocks_held',
      "Blocks the miner holds: the head's window (`--keep-blocks`), forks included.",
      () => this.miner.blockCount,
    );
    m.gauge(
      'monsoon_miner_indexed_transactions',
      'Transactions indexed by the held blocks that hold them.',
      () => this.miner.indexedTransactions,
    );
    m.gauge(
      'monsoon_miner_pending_transactions',
      'Transactions in the pending block.',
      () => this.miner.pendingCount,
    );
    m.observableCounter(
      'monsoon_miner_storage_blocks_total',
      'Blocks sent to a storage node, by storage node and result (applied, or refused after the retries).',
      () => perStorage((p) => ({ applied: p.counters.applied, refused: p.counters.refused })),
    );
    m.observableCounter(
      'monsoon_miner_storage_retries_total',
      'ApplyBlock calls to a storage node tried again after a failure, by storage node.',
      () => this.storagePeers.map((p) => ({ labels: { storage: p.address }, value: p.counters.retries })),
    );
    m.observableCounter(
      'monsoon_miner_storage_caught_up_blocks_total',
      'Blocks sent again to a storage node that was behind, by storage node.',
      () => this.storagePeers.map((p) => ({ labels: { storage: p.address }, value: p.counters.caughtUp })),
    );
    m.gauge(
      'monsoon_miner_storage_backlog_blocks',
      'Blocks waiting to be sent to a storage node, by storage node.',
      () => this.storagePeers.map((p) => ({ labels: { storage: p.address }, value: p.behind })),
    );
    addProcessMetrics(m);
  }

  private async listen(): Promise<void> {
    this.server = await GrpcServer.create<MinerServiceServer>(
      { listen: this.opts.listen, maxReceiveMessageBytes: this.opts.maxReceiveMessageBytes },
      {
        grpcStatusOf,
        logger: this.log,
        // Only Submit is unary, and the histogram is Submit's.
        metrics: {
          observeRequest: (_method, code, seconds) => this.submitSeconds.observe({ code }, seconds ?? 0),
        },
      },
      // One block message goes to every SubscribeBlocks stream: encoded once (blockMessage).
      withSharedEncoding(MinerServiceDefinition, ['subscribeBlocks']),
      this.methods(),
    );
  }

  /** The RPCs served here. */
  private methods(): MethodTable<MinerServiceServer> {
    return {
      submit: unaryRpc({
        decode: submitRequestFromProto,
        run: (req) => this.miner.submit(req),
        encode: submitResponseToProto,
      }),
      peer: (call) => this.attachPeer(call, 'inbound'),
      subscribeHeads: (call) => {
        const end = streamHeads(
          call,
          this.heads,
          (b) => headToProto(headOf(b)),
          () => this.headStreams.delete(end),
        );
        this.headStreams.add(end);
      },
      subscribeBlocks: (call) => {
        const end = this.streamBlocks(call);
        this.headStreams.add(end);
      },
      getHeaders: (call) => {
        this.streamHeaders(call).catch((e: Error & { code?: number }) =>
          call.emit('error', {
            code: e.code ?? status.INTERNAL,
            details: e.message,
            metadata: new Metadata(),
          }),
        );
      },
    };
  }

  /**
   * Canonical headers `fromNumber`..`toNumber` in chunks of HEADERS_PER_CHUNK: the held blocks'
   * from the head's chain, those below from the header archive (NOT_FOUND where neither has one).
   */
  private async streamHeaders(
    call: ServerWritableStream<minerPb.GetHeadersRequest, minerPb.HeadersChunk>,
  ): Promise<void> {
    const { fromNumber: from, toNumber: to } = call.request;
    const head = this.announcedHead;
    const fail = (code: number, why: string): never => {
      throw Object.assign(new Error(why), { code });
    };
    if (to < from || to > head.header.number)
      fail(status.OUT_OF_RANGE, `headers #${from}..#${to}: the head is #${head.header.number}`);
    const held: Uint8Array[] = [];
    let b: ChainBlock | undefined = head;
    for (; b !== undefined && b.header.number >= from; b = b.parent)
      if (b.header.number <= to) held.push(encodeHeader(b.header));
    held.reverse();
    const archivedTo = to - BigInt(held.length); // the last header the archive must give
    if (archivedTo >= from && archivedTo >= this.archive.next)
      fail(
        status.NOT_FOUND,
        `headers #${from}..#${archivedTo} are neither held nor archived here (archive: #0..#${this.archive.next - 1n})`,
      );
    let chunk: Uint8Array[] = [];
    const flush = async () => {
      if (chunk.length === 0) return;
      const ok = call.write({ headers: chunk });
      chunk = [];
      if (!ok) await new Promise((resolve) => call.once('drain', resolve));
    };
    for (let n = from; n <= archivedTo; n++) {
      if (call.cancelled) return;
      chunk.push(await this.archive.read(n));
      if (chunk.length === HEADERS_PER_CHUNK) await flush();
    }
    for (const h of held) {
      chunk.push(h);
      if (chunk.length === HEADERS_PER_CHUNK) await flush();
    }
    await flush();
    call.end();
  }

  /**
   * Canonical blocks with receipts: from `fromNumber` (or the head) up, then each new head's
   * blocks from where the chain last sent agrees with it (after a reorg, the new branch from
   * the fork on). Blocks are never skipped: a client indexes every one.
   */
  private streamBlocks(
    call: ServerWritableStream<minerPb.SubscribeBlocksRequest, minerPb.BlockWithReceipts>,
  ): () => void {
    const head = this.announcedHead;
    const floor = call.request.fromNumber ?? head.header.number;
    const sent = new Map<bigint, string>();
    let ended = false;
    const send = (tip: ChainBlock): void => {
      if (ended) return;
      const fresh: ChainBlock[] = [];
      for (let b: ChainBlock | undefined = tip; b !== undefined && b.header.number >= floor; b = b.parent) {
        if (sent.get(b.header.number) === toHex(b.hash)) break;
        fresh.push(b);
      }
      // Above the tip: replaced by a reorg. Below the miner's window: no walk reaches them again
      // (and a stream that runs for days must not keep a key per block).
      const oldest = tip.header.number - BigInt(this.miner.opts.keepBlocks);
      for (const n of [...sent.keys()]) if (n > tip.header.number || n < oldest) sent.delete(n);
      for (const b of fresh.reverse()) {
        sent.set(b.header.number, toHex(b.hash));
        call.write(this.blockMessage(b));
      }
    };
    const unsubscribe = this.heads.subscribe(send);
    const finish = () => {
      if (ended) return;
      ended = true;
      unsubscribe();
      this.headStreams.delete(end);
    };
    const end = () => {
      if (ended) return;
      finish();
      call.end();
    };
    call.on('cancelled', finish);
    call.on('error', finish);
    send(head);
    return end;
  }

  /** `b` as SubscribeBlocks streams it, built once for every stream (not its receipts encoded once a subscriber). */
  private blockMessage(b: ChainBlock): minerPb.BlockWithReceipts {
    let m = this.blockMessages.get(b);
    if (m === undefined) {
      m = blockWithReceiptsToProto({
        headerRlp: encodeHeader(b.header),
        transactions: b.transactions,
        receipts: b.receipts,
      });
      this.blockMessages.set(b, m);
    }
    return m;
  }

  private dial(address: string): void {
    const client = new MinerServiceClient(address, credentials.createInsecure(), CHANNEL);
    this.peerClients.push(client);
    const connect = () => {
      // A retry timer that fires after close() would call a closed channel (which throws).
      if (this.closing) return;
      const stream = client.peer();
      this.attachPeer(stream, address);
      stream.on('error', () => setTimeout(connect, 500).unref());
    };
    connect();
  }

  private attachPeer(stream: PeerStream, who: string): void {
    this.peerStreams.add(stream);
    const link: PeerStreamLink = {
      who,
      stream,
      send: (m) => {
        if (this.peerStreams.has(stream)) stream.write(peerMessageToProto(m));
      },
    };
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
      if (msg.kind === 'getBlocks') this.sync.answer(msg.hash, msg.count, link);
      else this.sync.receive(msg.block, link);
    });
  }

  /** Seals the pending block now and sends it everywhere. */
  sealNow(): Promise<SealedBlock> {
    return this.miner.seal();
  }

  /** Every block the miner seals (timer, sealNow, or a full pending block): logged and sent on. */
  private sealed(sealed: SealedBlock): void {
    this.log.info('block sealed', {
      number: Number(sealed.block.header.number),
      txs: sealed.block.transactions.length,
      hash: toHex(sealed.block.hash),
    });
    this.announce(sealed, undefined);
  }

  /** To every peer (but the one it came from), every storage node, the chain log, every head subscriber. */
  private announce(sealed: SealedBlock, from: PeerStream | undefined): void {
    const msg = peerMessageToProto({ kind: 'block', block: sealed.peer });
    for (const s of this.peerStreams) if (s !== from) s.write(msg);
    if (this.storagePeers.length > 0) this.keepSealed(sealed);
    for (const p of this.storagePeers) p.send(sealed);
    const head = this.miner.head === sealed.block;
    const heard = () => {
      if (head) this.announcedHead = sealed.block;
      this.heads.check();
    };
    if (this.blockLog === undefined) {
      heard();
      return;
    }
    // Head subscribers (clients) hear of a block once it is in the log: a head they saw survives a restart.
    const log = this.blockLog;
    void log
      .append(sealed.peer)
      .catch((e) => this.log.error('chain log append failed', { error: (e as Error).message }))
      .then(heard);
    // The count restarts when a compaction is queued: the next waits for as many blocks again.
    if (log.count > this.opts.logCompactAfter + this.miner.blockCount) this.compactLog(log);
  }

  /** Compacts the chain log to a checkpoint of the oldest held block of the head's chain and the held blocks after it. */
  private compactLog(log: BlockLog): void {
    const cp = this.miner.oldestHeld;
    const after = this.miner
      .heldBlocks()
      .filter((b) => b.header.number > cp.header.number)
      .map(peerBlockOf);
    const started = performance.now();
    // The headers of the blocks it drops are in the archive first.
    void log
      .compact(this.miner.checkpointOf(cp), after, this.archive.flushed())
      .then(() => {
        this.log.info('chain log compacted', {
          checkpoint: Number(cp.header.number),
          blocks: after.length,
          ms: Math.round(performance.now() - started),
        });
        // Appends went on meanwhile (a compaction asked for then was this one): as many again?
        // (Closing too: BlockLog.close waits for it, and a restart replays fewer blocks.)
        if (log.count > this.opts.logCompactAfter + this.miner.blockCount) this.compactLog(log);
      })
      .catch((e) => this.log.error('chain log compaction failed', { error: (e as Error).message }));
  }

  /** Remembers `sealed` for catch-ups and forgets what fell out of the window below the head. */
  private keepSealed(sealed: SealedBlock): void {
    this.recentSealed.set(toHex(sealed.block.hash), sealed);
    const floor = this.miner.head.header.number - BigInt(this.opts.storageCatchUpBlocks);
    // A block the miner forgot (its window, `keepBytes`) goes too: kept here, it would keep its
    // transactions, witness and top layer alive past the miner's window.
    for (const [k, s] of this.recentSealed) {
      if (s.block.header.number < floor || this.miner.block(s.block.hash) === undefined)
        this.recentSealed.delete(k);
    }
  }

  /** Sealed blocks (with their shard updates) kept for catching storage nodes up. */
  get sealedHeld(): number {
    return this.recentSealed.size;
  }

  /** Waits until every storage node has been sent every block so far. */
  async storageSettled(): Promise<void> {
    await Promise.all(this.storagePeers.map((p) => p.idle()));
  }

  async close(): Promise<void> {
    this.closing = true;
    this.timer?.stop();
    await this.metricsServer?.close();
    for (const end of [...this.headStreams]) end();
    for (const s of this.peerStreams) s.end();
    for (const c of this.peerClients) c.close();
    for (const p of this.storagePeers) p.close();
    await this.server?.close();
    await this.blockLog?.close();
    await this.archive.close();
  }
}
