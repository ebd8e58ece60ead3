/**
 * The client's view of the storage layer: every storage node it was given, which shards each
 * holds (asked with GetShardRoots), and batched reads routed to a replica of the right shard.
 * A replica that is down, or whose answer fails the caller's check (a wrong value, a forged
 * proof), is passed over for the next one; only when none is left does the read fail.
 */
import { credentials, type ServiceError, status } from '@grpc/grpc-js';
import { channelOptions, unary } from '@monsoon/edge';
import {
  type BatchGetRequest,
  type BatchGetResponse,
  batchGetRequestToProto,
  batchGetResponseFromProto,
  type commonPb,
  type ExportedRegion,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  HEAD,
  headFromProto,
  type ShardCount,
  ShardLayout,
  StorageServiceClient,
} from '@monsoon/protocol';
import { ClientError, ClientErrorCode, isClientError } from './clientError.js';

const CHANNEL = channelOptions();

export interface StorageReplica {
  readonly address: string;
  readonly client: StorageServiceClient;
  readonly shards: ReadonlySet<number>;
  /** Answers refused by the caller's check (a wrong value or proof). */
  badAnswers: number;
  /** Calls that failed at the transport (down, deadline). */
  failures: number;
  /** The number of the newest block it announced it applied (SubscribeHeads), -1 before any. */
  appliedNumber: bigint;
  /** The node region it exports for one-sided reads, if any (GetShardRoots). */
  readonly region?: ExportedRegion;
}

export interface ShardedStorageOptions {
  /** Per-call deadline, ms. */
  deadlineMs: number;
  /** How long a read at a block the replica has not applied yet is retried, ms. */
  notYetAppliedMs: number;
}

export const defaultShardedStorageOptions: ShardedStorageOptions = {
  deadlineMs: 10_000,
  notYetAppliedMs: 5_000,
};

/** What readableNumber says of a shard no replica has applied a block of. */
const NONE_APPLIED = -1n;

export class ShardedStorage {
  private closed = false;
  private readonly streams = new Set<{ cancel(): void }>();
  private readonly routes = new Map<number, string>();

  private constructor(
    readonly layout: ShardLayout,
    readonly replicas: readonly StorageReplica[],
    private readonly opts: ShardedStorageOptions,
  ) {}

  /** Connects to every node and learns its shards; fails if some shard has no node. */
  static async connect(
    addresses: readonly string[],
    opts: Partial<ShardedStorageOptions> = {},
  ): Promise<ShardedStorage> {
    const o = { ...defaultShardedStorageOptions, ...opts };
    if (addresses.length === 0) throw new ClientError(ClientErrorCode.BadArgument, 'no storage nodes given');
    let count: ShardCount | undefined;
    const replicas: StorageReplica[] = [];
    for (const address of addresses) {
      const client = new StorageServiceClient(address, credentials.createInsecure(), CHANNEL);
      let res: ReturnType<typeof getShardRootsResponseFromProto>;
      try {
        res = getShardRootsResponseFromProto(
          await unary(client, client.getShardRoots, getShardRootsRequestToProto({ at: HEAD }), {
            deadline: Date.now() + o.deadlineMs,
          }),
        );
      } catch (e) {
        client.close();
        for (const r of replicas) r.client.close();
        throw new ClientError(
          ClientErrorCode.StorageUnavailable,
          `storage node ${address}: ${(e as Error).message}`,
          {},
          e,
        );
      }
      if (count !== undefined && res.shardCount !== count) {
        for (const r of replicas) r.client.close();
        client.close();
        throw new ClientError(
          ClientErrorCode.BadArgument,
          `storage node ${address} splits the state into ${res.shardCount} shards, another into ${count}`,
        );
      }
      count = res.shardCount as ShardCount;
      replicas.push({
        address,
        client,
        shards: new Set(res.roots.map((r) => r.shard)),
        badAnswers: 0,
        failures: 0,
        appliedNumber: res.number,
        ...(res.region !== undefined ? { region: res.region } : {}),
      });
    }
    const layout = new ShardLayout(count!);
    const orphan = layout.all().find((s) => !replicas.some((r) => r.shards.has(s)));
    if (orphan !== undefined) {
      for (const r of replicas) r.client.close();
      throw new ClientError(ClientErrorCode.BadArgument, `no storage node given holds shard ${orphan}`);
    }
    return new ShardedStorage(layout, replicas, o);
  }

  shardOfKey(hashedKey: Uint8Array): number {
    return this.layout.shardOfKey(hashedKey);
  }

  /**
   * The route of a shard: the nodes holding it (their addresses, sorted). Shards on one route
   * are held by the same nodes, so one BatchGet to any of them can ask for all of them.
   */
  routeOf(shard: number): string {
    let r = this.routes.get(shard);
    if (r === undefined) {
      r = this.replicas
        .filter((x) => x.shards.has(shard))
        .map((x) => x.address)
        .sort()
        .join(',');
      this.routes.set(shard, r);
    }
    return r;
  }

  /** Replicas of a shard, the ones with fewer bad answers and failures first. */
  replicasOf(shard: number): StorageReplica[] {
    return this.replicas
      .filter((r) => r.shards.has(shard))
      .sort((a, b) => a.badAnswers * 4 + a.failures - (b.badAnswers * 4 + b.failures));
  }

  /**
   * BatchGet on a replica of `shard`; `check` judges the answer (throw a BAD_PROOF ClientError to
   * refuse it). Tries each replica in turn.
   */
  async batchGet(
    shard: number,
    req: BatchGetRequest,
    check: (res: BatchGetResponse, replica: StorageReplica) => void,
  ): Promise<BatchGetResponse> {
    const errors: string[] = [];
    for (const replica of this.replicasOf(shard)) {
      try {
        const res = await this.call(replica, req);
        check(res, replica);
        return res;
      } catch (e) {
        if (isClientError(e, ClientErrorCode.BadProof)) replica.badAnswers++;
        else replica.failures++;
        errors.push(`${replica.address}: ${(e as Error).message}`);
      }
    }
    throw new ClientError(
      errors.some((m) => m.includes(ClientErrorCode.BadProof))
        ? ClientErrorCode.BadProof
        : ClientErrorCode.StorageUnavailable,
      `no replica of shard ${shard} gave a good answer (${errors.join('; ')})`,
      { shard },
    );
  }

  /** One BatchGet; a block the replica has not applied yet is asked again for a while. */
  private async call(replica: StorageReplica, req: BatchGetRequest): Promise<BatchGetResponse> {
    const until = Date.now() + this.opts.notYetAppliedMs;
    for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
      try {
        return batchGetResponseFromProto(
          await unary(replica.client, replica.client.batchGet, batchGetRequestToProto(req), {
            deadline: Date.now() + this.opts.deadlineMs,
          }),
        );
      } catch (e) {
        const notYet = (e as ServiceError).code === status.NOT_FOUND && req.at.kind !== 'head';
        if (!notYet || Date.now() + wait > until) throw e;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /**
   * The newest block number every shard can be read at: for each shard the furthest any of its
   * replicas has applied, the least of those. Storage nodes apply blocks in chain order, so a
   * block at or below it on their chain is held by a replica of every shard.
   */
  get readableNumber(): bigint {
    let least: bigint | undefined;
    // Asked for every state-head lookup (a few a transaction): no array of shards each time, and
    // no `-1n` in the loop (a negated literal is a new BigInt each time it is evaluated: 17 a call).
    for (let shard = 0; shard < this.layout.count; shard++) {
      let best = NONE_APPLIED;
      for (const r of this.replicas)
        if (r.shards.has(shard) && r.appliedNumber > best) best = r.appliedNumber;
      if (least === undefined || best < least) least = best;
    }
    return least ?? NONE_APPLIED;
  }

  /**
   * Follows every replica's SubscribeHeads, keeping `appliedNumber` current; `onApplied` hears
   * each announcement. A broken stream is followed again after a pause.
   */
  followHeads(onApplied: () => void): void {
    for (const r of this.replicas) {
      const follow = (): void => {
        if (this.closed) return;
        const call = r.client.subscribeHeads({});
        this.streams.add(call);
        let again = false;
        const retry = () => {
          this.streams.delete(call);
          if (again || this.closed) return;
          again = true;
          setTimeout(follow, 500).unref();
        };
        call.on('data', (h: commonPb.Head) => {
          const head = headFromProto(h);
          if (head.number !== r.appliedNumber) {
            r.appliedNumber = head.number;
            onApplied();
          }
        });
        call.on('error', retry);
        call.on('end', retry);
      };
      follow();
    }
  }

  close(): void {
    this.closed = true;
    for (const s of this.streams) s.cancel();
    for (const r of this.replicas) r.client.close();
  }

  describe(): string {
    return this.replicas.map((r) => `${r.address} [${[...r.shards].join(',')}]`).join(' ');
  }
}
