/**
 * A storage replica catching up from the other replicas of its shard group, not only from the
 * miners' pushes. Every `intervalMs` it asks each peer for its head; a peer ahead is asked for
 * the blocks after this node's head (GetBlockUpdates: the ApplyBlocks the peer applied, checked
 * here as a miner's would be: proof of work, difficulty rule, every root), applied in order.
 * Where the peer no longer holds them (this node is new, or was down longer than the peer's
 * window), or this node's head is on a fork the peer's blocks do not extend, it joins from the
 * peer's checkpoint of its head (GetCheckpoint) and goes on from there. Replicas that sync from
 * each other converge on the heaviest head any of them holds.
 */
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { channelOptions, ERROR_CODE_TRAILER, type Logger, unary } from '@monsoon/edge';
import {
  type ApplyBlockRequest,
  applyBlockRequestFromBytes,
  atNumber,
  getBlockUpdatesRequestToProto,
  getBlockUpdatesResponseFromProto,
  getCheckpointRequestToProto,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  HEAD,
  StorageServiceClient,
  type storagePb,
} from '@monsoon/protocol';
import { StorageError, StorageErrorCode } from './storageError.js';
import type { StorageNode } from './storageNode.js';

export interface ReplicaSyncOptions {
  /** `host:port` of the other replicas of this node's shards (the same shard selection). */
  peers: readonly string[];
  /** How often the peers' heads are compared with this node's (ms). */
  intervalMs: number;
  /** Most blocks asked for in one GetBlockUpdates. */
  batch: number;
  /** Blocks below its head this node asks from again when the peer's next block does not extend its head (a fork). */
  forkDepth: number;
  /** Deadline of a call (ms); a checkpoint's stream gets ten times this. */
  callTimeoutMs: number;
}

export const defaultReplicaSyncOptions: ReplicaSyncOptions = {
  peers: [],
  intervalMs: 1000,
  batch: 64,
  forkDepth: 16,
  callTimeoutMs: 30_000,
};

export interface ReplicaSyncModules {
  node: StorageNode;
  log: Logger;
  /** Called after blocks were applied or a checkpoint installed (the server's head feed checks). */
  moved: () => void;
}

/** What the sync did, for metrics and tests. */
export interface ReplicaSyncCounters {
  /** Blocks applied from peers. */
  blocks: number;
  /** Checkpoints joined from. */
  joins: number;
  /** Rounds in which a peer could not be asked, or answered with something this node refused. */
  failures: number;
}

function errorCodeOf(e: unknown): string | undefined {
  if (e instanceof StorageError) return e.code;
  const m = (e as ServiceError).metadata;
  const t = m instanceof Metadata ? m.get(ERROR_CODE_TRAILER)[0] : undefined;
  return t === undefined ? undefined : String(t);
}

export class ReplicaSync {
  readonly counters: ReplicaSyncCounters = { blocks: 0, joins: 0, failures: 0 };
  private readonly clients: StorageServiceClient[];
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> = Promise.resolve();
  private closed = false;
  /** Peers already reported as holding other shards (once each). */
  private readonly mismatched = new Set<string>();

  constructor(
    readonly opts: ReplicaSyncOptions,
    private readonly modules: ReplicaSyncModules,
  ) {
    this.clients = opts.peers.map(
      (p) =>
        new StorageServiceClient(
          p,
          credentials.createInsecure(),
          channelOptions({
            'grpc.max_receive_message_length': -1,
            'grpc.initial_reconnect_backoff_ms': Math.min(1000, opts.intervalMs),
            'grpc.max_reconnect_backoff_ms': Math.max(1000, opts.intervalMs),
          }),
        ),
    );
  }

  /** Starts the rounds: one at once, then one every `intervalMs` after the last ended. */
  start(): void {
    if (this.clients.length === 0 || this.closed) return;
    const next = () => {
      this.round = this.syncOnce().finally(() => {
        if (!this.closed) this.timer = setTimeout(next, this.opts.intervalMs);
      });
    };
    next();
  }

  /** One round: catches up from every peer that is ahead, one after another. */
  async syncOnce(): Promise<void> {
    for (let i = 0; i < this.clients.length && !this.closed; i++) {
      const peer = this.opts.peers[i]!;
      try {
        await this.fromPeer(peer, this.clients[i]!);
      } catch (e) {
        this.counters.failures++;
        this.modules.log.warn('replica sync: a peer could not catch this node up', {
          peer,
          code: errorCodeOf(e),
          error: (e as ServiceError).details ?? (e as Error).message,
        });
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.round;
    for (const c of this.clients) c.close();
  }

  private deadline(factor = 1): Date {
    return new Date(Date.now() + this.opts.callTimeoutMs * factor);
  }

  private async fromPeer(peer: string, c: StorageServiceClient): Promise<void> {
    const { node, log } = this.modules;
    const head = getShardRootsResponseFromProto(
      await unary(c, c.getShardRoots, getShardRootsRequestToProto({ at: HEAD }), {
        deadline: this.deadline(),
      }),
    );
    const theirs = head.roots.map((r) => r.shard).join(',');
    if (head.shardCount !== node.layout.count || theirs !== node.opts.shards.join(',')) {
      if (!this.mismatched.has(peer)) {
        this.mismatched.add(peer);
        log.error('replica sync: a peer holds other shards; not syncing from it', {
          peer,
          peerShards: theirs,
          shards: node.opts.shards.join(','),
        });
      }
      return;
    }
    if (head.number <= node.head.header.number) return;
    let after = node.head.header.number;
    const from = after;
    const applied = this.counters.blocks;
    let forkTried = false;
    while (!this.closed && node.head.header.number < head.number) {
      const blocks = getBlockUpdatesResponseFromProto(
        await unary(
          c,
          c.getBlockUpdates,
          getBlockUpdatesRequestToProto({ afterNumber: after, count: this.opts.batch }),
          { deadline: this.deadline() },
        ),
      ).blocks;
      if (blocks.length === 0) break;
      try {
        for (const b of blocks) {
          await node.applyBlock(this.decode(b));
          this.counters.blocks++;
        }
      } catch (e) {
        if (errorCodeOf(e) !== StorageErrorCode.UnknownParent) throw e;
        if (!forkTried && after > 0n) {
          // This node's newest blocks may be on a losing fork: ask from a little further down.
          forkTried = true;
          after = after > BigInt(this.opts.forkDepth) ? after - BigInt(this.opts.forkDepth) : 0n;
          continue;
        }
        await this.join(peer, c, head.number);
      } finally {
        this.modules.moved();
      }
      after = node.head.header.number;
    }
    if (this.counters.blocks > applied) {
      log.info('replica sync: caught up from a peer', {
        peer,
        from: Number(from),
        blocks: this.counters.blocks - applied,
        head: Number(node.head.header.number),
      });
    }
  }

  private decode(b: Uint8Array): ApplyBlockRequest {
    return applyBlockRequestFromBytes(b, {
      shardCount: this.modules.node.layout.count,
    });
  }

  /**
   * Joins from `peer`'s checkpoint of the block `checkpointDepth` below its head (`head`), on its
   * head's chain: a block that deep is not on a fork about to lose (the head itself may be), and
   * the blocks after it come next by GetBlockUpdates.
   */
  private async join(peer: string, c: StorageServiceClient, head: bigint): Promise<void> {
    const started = performance.now();
    const parts: Buffer[] = [];
    const depth = this.modules.node.checkpointDepth;
    const at = head > depth ? atNumber(head - depth) : HEAD;
    await new Promise<void>((resolve, reject) => {
      const s = c.getCheckpoint(getCheckpointRequestToProto({ at }), { deadline: this.deadline(10) });
      s.on('data', (m: storagePb.CheckpointChunk) => parts.push(Buffer.from(m.data)));
      s.on('error', reject);
      s.on('end', resolve);
    });
    const bytes = Buffer.concat(parts);
    if (bytes.length === 0) {
      throw new StorageError(StorageErrorCode.CheckpointCorrupt, `peer ${peer} sent an empty checkpoint`);
    }
    const v = await this.modules.node.join(bytes);
    this.counters.joins++;
    this.modules.log.info('replica sync: joined from a peer checkpoint', {
      peer,
      number: Number(v.header.number),
      bytes: bytes.length,
      ms: Math.round(performance.now() - started),
    });
  }
}
