/**
 * One storage node as a miner feeds it: a backlog of blocks to send, in order, that is never
 * given up on because the node is unreachable. A node that comes back behind (it answers
 * UNKNOWN_PARENT) is caught up: the miner asks for its head and sends, oldest first, the blocks
 * of its own chain from there to the block refused. Only a gap the miner cannot fill (the
 * blocks are no longer held here) or a block the node refuses as bad is dropped, loudly.
 */
import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { toHex } from '@monsoon/dsm-tree';
import { ERROR_CODE_TRAILER, type Logger, unary } from '@monsoon/edge';
import {
  type ApplyBlockRequest,
  applyBlockRequestToProto,
  atHash,
  type BlockRef,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  HEAD,
  StorageServiceClient,
} from '@monsoon/protocol';
import type { SealedBlock } from './miner.js';

/** How hard a miner tries to feed one storage node. */
export interface StoragePeerOptions {
  /** First wait after a failed call (ms); doubled per failure in a row up to `retryMaxMs`. */
  retryMinMs: number;
  /** Longest wait between tries (ms). */
  retryMaxMs: number;
  /** After this many failures in a row the node is reported unreachable (the blocks are kept). */
  warnAfter: number;
  /** Most blocks waiting for one node; older ones are dropped (a catch-up resends what a later one needs). */
  maxBacklog: number;
  /** Deadline of each call to the node (ms). */
  callTimeoutMs: number;
  /** Blocks below the node's head a catch-up looks for a block the node holds (forks). */
  forkDepth: number;
  shardCount: 16 | 256;
}

export const defaultStoragePeerOptions: StoragePeerOptions = {
  retryMinMs: 50,
  retryMaxMs: 2000,
  warnAfter: 8,
  maxBacklog: 256,
  callTimeoutMs: 30_000,
  forkDepth: 64,
  shardCount: 16,
};

export interface StoragePeerModules {
  log: Logger;
  /** The sealed block (updates and roots included) with this hash, while the miner still holds it. */
  sealed: (hash: Uint8Array) => SealedBlock | undefined;
}

/** What became of the blocks sent to a storage node (or to all of them). */
export interface StorageCounters {
  /** Blocks the node acknowledged (catch-up blocks included). */
  applied: number;
  /** Blocks dropped: refused as bad, or behind a gap the miner could not fill. */
  refused: number;
  /** Calls tried again after the node could not be reached. */
  retries: number;
  /** Blocks sent again to a node that was behind, to catch it up. */
  caughtUp: number;
}

type Outcome = { ok: true } | { ok: false; code: status; errorCode: string | undefined; message: string };

/** A refusal the node decided (bad block, or a parent it lacks) rather than a failure to reach it. */
function decided(o: Outcome & { ok: false }): boolean {
  return o.code === status.INVALID_ARGUMENT || o.code === status.FAILED_PRECONDITION;
}

export class StoragePeer {
  readonly client: StorageServiceClient;
  readonly counters: StorageCounters = { applied: 0, refused: 0, retries: 0, caughtUp: 0 };
  private shards: Set<number> | undefined;
  private readonly backlog: SealedBlock[] = [];
  private running = false;
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  /** Cuts a backoff wait short (on close). */
  private wake: (() => void) | undefined;
  /** Failed calls in a row. */
  private failures = 0;

  constructor(
    readonly address: string,
    private readonly opts: StoragePeerOptions,
    private readonly modules: StoragePeerModules,
    channelOptions: Record<string, number>,
  ) {
    this.client = new StorageServiceClient(address, credentials.createInsecure(), {
      ...channelOptions,
      // grpc-js's own reconnect backoff (up to 120 s) would keep a node that is back unreached
      // long after our own retries ask again: held to ours.
      'grpc.initial_reconnect_backoff_ms': Math.min(opts.retryMinMs * 4, opts.retryMaxMs),
      'grpc.max_reconnect_backoff_ms': opts.retryMaxMs,
    });
  }

  /** Blocks waiting to be sent to this node. */
  get behind(): number {
    return this.backlog.length;
  }

  /** Queues a block; blocks are sent in the order queued. */
  send(b: SealedBlock): void {
    if (this.closed) return;
    this.backlog.push(b);
    if (this.backlog.length > this.opts.maxBacklog) {
      // A later block's catch-up resends whichever of these its chain needs.
      this.backlog.splice(0, this.backlog.length - this.opts.maxBacklog);
    }
    if (!this.running) void this.run();
  }

  /** Resolves once the backlog is empty (every block queued so far delivered or dropped). */
  idle(): Promise<void> {
    if (!this.running && this.backlog.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    this.backlog.length = 0;
    this.wake?.();
    this.client.close();
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (!this.closed && this.backlog.length > 0) {
        const b = this.backlog[0]!;
        const o = await this.apply(b);
        if (o.ok) {
          this.backlog.shift();
          continue;
        }
        if (o.errorCode === 'UNKNOWN_PARENT') {
          const caught = await this.catchUp(b);
          if (caught === 'retry') continue;
          if (caught === 'gap') {
            this.backlog.shift();
            this.drop(b, o, 'a gap this miner cannot fill: the blocks between are no longer held here');
          }
          continue;
        }
        if (decided(o)) {
          this.backlog.shift();
          this.drop(b, o, 'refused');
          continue;
        }
        await this.backoff(o);
      }
    } finally {
      this.running = false;
      if (this.backlog.length === 0 || this.closed) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    }
  }

  private drop(b: SealedBlock, o: Outcome & { ok: false }, why: string): void {
    this.counters.refused++;
    this.modules.log.error('storage node refused a block', {
      storage: this.address,
      number: Number(b.block.header.number),
      hash: toHex(b.block.hash),
      why,
      code: o.errorCode ?? status[o.code],
      error: o.message,
    });
  }

  /** Waits before the next try, longer each failure in a row; reports the node once it looks down. */
  private async backoff(o: Outcome & { ok: false }): Promise<void> {
    this.counters.retries++;
    this.failures++;
    if (this.failures === this.opts.warnAfter) {
      this.modules.log.error('storage node unreachable; its blocks are kept and sent when it is back', {
        storage: this.address,
        behind: this.backlog.length,
        code: status[o.code],
        error: o.message,
      });
    }
    const ms = Math.min(this.opts.retryMaxMs, this.opts.retryMinMs * 2 ** Math.min(this.failures - 1, 20));
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
    this.wake = undefined;
  }

  /** One ApplyBlock of `b`'s updates to this node's shards. */
  private async apply(b: SealedBlock): Promise<Outcome> {
    return this.call(async () => {
      if (this.shards === undefined) {
        const r = getShardRootsResponseFromProto(
          await unary(this.client, this.client.getShardRoots, getShardRootsRequestToProto({ at: HEAD }), {
            deadline: this.deadline(),
          }),
        );
        this.shards = new Set(r.roots.map((x) => x.shard));
      }
      const mine = this.shards;
      const req: ApplyBlockRequest = {
        headerRlp: b.peer.headerRlp,
        shards: b.shards.filter((s) => mine.has(s.shard)),
        expectedRoots: b.expectedRoots,
      };
      await unary(
        this.client,
        this.client.applyBlock,
        applyBlockRequestToProto(req, { shardCount: this.opts.shardCount }),
        { deadline: this.deadline() },
      );
      this.counters.applied++;
    });
  }

  /** The node's head, or whether it holds a block. */
  private async holds(at: BlockRef): Promise<{ hash: Uint8Array; number: bigint } | undefined> {
    try {
      const r = getShardRootsResponseFromProto(
        await unary(this.client, this.client.getShardRoots, getShardRootsRequestToProto({ at }), {
          deadline: this.deadline(),
        }),
      );
      return { hash: r.blockHash, number: r.number };
    } catch (e) {
      if ((e as ServiceError).code === status.NOT_FOUND) return undefined;
      throw e;
    }
  }

  /**
   * The node lacks `b`'s parent: sends, oldest first, the blocks of `b`'s chain after the newest
   * one the node holds. 'retry' when `b` can be tried again (caught up, or the node could not be
   * reached: backed off already); 'gap' when the blocks the node lacks are no longer held here.
   */
  private async catchUp(b: SealedBlock): Promise<'retry' | 'gap'> {
    const log = this.modules.log;
    const missing: SealedBlock[] = [];
    try {
      const head = await this.holds(HEAD);
      if (head === undefined) return 'retry';
      const floor = head.number - BigInt(this.opts.forkDepth);
      let found = false;
      for (let c = b.block.parent; c !== undefined && c.header.number >= floor && c.header.number > 0n; ) {
        // On the node's chain the parent of the oldest missing block is its head; on another
        // fork, some block at or below the head's height that the node still holds.
        if (c.header.number <= head.number && (await this.holds(atHash(c.hash))) !== undefined) {
          found = true;
          break;
        }
        const s = this.modules.sealed(c.hash);
        if (s === undefined) break;
        missing.push(s);
        c = c.parent;
      }
      const oldest = missing.at(-1)?.block.parent;
      if (!found && !(oldest !== undefined && oldest.header.number === 0n)) {
        log.error('storage node is behind further than this miner holds blocks', {
          storage: this.address,
          nodeHead: Number(head.number),
          nodeHash: toHex(head.hash),
          block: Number(b.block.header.number),
          held: missing.length,
        });
        return 'gap';
      }
      log.warn('storage node is behind; catching it up', {
        storage: this.address,
        nodeHead: Number(head.number),
        block: Number(b.block.header.number),
        blocks: missing.length,
      });
    } catch (e) {
      const err = e as ServiceError;
      await this.backoff({
        ok: false,
        code: err.code,
        errorCode: undefined,
        message: err.details ?? String(e),
      });
      return 'retry';
    }
    for (const s of missing.reverse()) {
      if (this.closed) return 'retry';
      const o = await this.apply(s);
      if (!o.ok) {
        if (decided(o)) {
          this.drop(s, o, 'refused while catching the node up');
          return 'gap';
        }
        await this.backoff(o);
        return 'retry';
      }
      this.counters.caughtUp++;
    }
    return 'retry';
  }

  private async call(f: () => Promise<void>): Promise<Outcome> {
    try {
      await f();
      if (this.failures >= this.opts.warnAfter) {
        this.modules.log.info('storage node reachable again', { storage: this.address });
      }
      this.failures = 0;
      return { ok: true };
    } catch (e) {
      const err = e as ServiceError;
      if (err.code === undefined) {
        // Not an answer from the node (the request could not be built): trying again won't help.
        return { ok: false, code: status.INVALID_ARGUMENT, errorCode: undefined, message: String(e) };
      }
      const trailer = err.metadata instanceof Metadata ? err.metadata.get(ERROR_CODE_TRAILER)[0] : undefined;
      return {
        ok: false,
        code: err.code,
        errorCode: trailer === undefined ? undefined : String(trailer),
        message: err.details ?? err.message,
      };
    }
  }

  private deadline(): Date {
    return new Date(Date.now() + this.opts.callTimeoutMs);
  }
}
