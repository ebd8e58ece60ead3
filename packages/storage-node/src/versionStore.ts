/**
 * The versions a storage node holds: one per block, named by block hash, on every live fork.
 * The head is the version with the most total difficulty, then the highest number (so a chain
 * with difficulty 0, as in benchmarks, follows the longest), the first seen winning a tie; reads by
 * number follow the head's chain. Versions fall away when they are more than `window` blocks
 * below the head, or sit on a losing fork more than `forkWindow` blocks below it; and the head
 * chain's oldest go while its versions changed more than `maxUpdates` accounts in all.
 */
import type { BlockHeader, BlockRef } from '@monsoon/protocol';
import { toHex, windowLength } from '@monsoon/util';
import type { ShardState } from './shardState.js';

export interface Version {
  readonly hash: Uint8Array;
  /** Lower-case hex of `hash`: the map key. */
  readonly id: string;
  readonly header: BlockHeader;
  readonly headerRlp: Uint8Array;
  readonly totalDifficulty: bigint;
  readonly state: ShardState;
  /** The write-ahead log record of this block, on a durable node. */
  readonly seq?: bigint;
  /** Accounts the block changed in this node's shards (what its version costs): 0 when unknown. */
  readonly updates?: number;
  /**
   * The block's ApplyBlockRequest as applied here (protobuf), for replicas that catch up from
   * this node; absent for the version a node started from (genesis, checkpoint).
   */
  readonly record?: Uint8Array;
}

export interface VersionStoreOptions {
  /** Blocks below the head a version is kept on the head's chain. */
  window: number;
  /** Blocks below the head a version on another fork is kept. */
  forkWindow: number;
  /**
   * Account updates the head chain's versions hold at most: beyond it the oldest go too, down
   * to {@link VERSION_CAP_FLOOR} blocks. A version's nodes are the paths its block changed, so a
   * window counted in blocks alone holds as much as the blocks are full, and its memory rose
   * with the load.
   */
  maxUpdates: number;
}

/** ~256 blocks of ~500 updates (half of a 2-process cluster's ~1,000 tx/s). */
export const defaultVersionStoreOptions: VersionStoreOptions = {
  window: 256,
  forkWindow: 64,
  maxUpdates: 131_072,
};

/**
 * Head-chain versions kept whatever `maxUpdates` says (fewer only where `window` is smaller):
 * checkpoints are written 16 below the head, late clients anchor there, and replicas behind by
 * fewer blocks catch up by blocks, not a checkpoint.
 */
export const VERSION_CAP_FLOOR = 64;

const idOf = toHex;

export class VersionStore {
  private readonly byId = new Map<string, Version>();
  /**
   * Each held version's parent's id, made once when the version is added: prune walks the head's
   * chain after every block (~256 versions deep), and naming each parent by the hex of its hash
   * there was two strings and a hash per step.
   */
  private readonly parentIds = new Map<string, string>();
  private headVersion: Version;
  readonly opts: VersionStoreOptions;

  constructor(genesis: Version, opts: Partial<VersionStoreOptions> = {}) {
    this.opts = { ...defaultVersionStoreOptions, ...opts };
    this.hold(genesis);
    this.headVersion = genesis;
  }

  private hold(v: Version): void {
    this.byId.set(v.id, v);
    this.parentIds.set(v.id, idOf(v.header.parentHash));
  }

  /** The version's parent, when it is held. */
  private parentOf(v: Version): Version | undefined {
    const p = this.parentIds.get(v.id);
    return p === undefined ? undefined : this.byId.get(p);
  }

  static idOf(hash: Uint8Array): string {
    return idOf(hash);
  }

  get head(): Version {
    return this.headVersion;
  }

  get size(): number {
    return this.byId.size;
  }

  byHash(hash: Uint8Array): Version | undefined {
    return this.byId.get(idOf(hash));
  }

  /** The version a read names: the head, a block hash, or a number on the head's chain. */
  get(ref: BlockRef): Version | undefined {
    if (ref.kind === 'head') return this.headVersion;
    if (ref.kind === 'hash') return this.byHash(ref.hash);
    let v: Version | undefined = this.headVersion;
    while (v !== undefined && v.header.number > ref.number) v = this.parentOf(v);
    return v !== undefined && v.header.number === ref.number ? v : undefined;
  }

  /** Adds a version (its parent must be here); it becomes the head if its chain is heavier (or as heavy and longer). */
  add(v: Version): void {
    this.hold(v);
    const h = this.headVersion;
    if (
      v.totalDifficulty > h.totalDifficulty ||
      (v.totalDifficulty === h.totalDifficulty && v.header.number > h.header.number)
    ) {
      this.headVersion = v;
    }
  }

  /** Drops every version and starts again from `v` (a node that joined from a checkpoint). */
  reset(v: Version): void {
    this.byId.clear();
    this.parentIds.clear();
    this.hold(v);
    this.headVersion = v;
  }

  /** Frees the versions that fell out of the windows; returns them. */
  prune(): Version[] {
    const head = this.headVersion;
    const canonical = new Set<string>();
    const lowest = head.header.number - BigInt(Math.max(this.opts.window, this.opts.forkWindow));
    for (let v: Version | undefined = head; v !== undefined && v.header.number >= lowest; ) {
      canonical.add(v.id);
      v = this.parentOf(v);
    }
    // How deep the head's chain is kept: the window, or less where its updates exceed the cap.
    const kept = windowLength(this.headChainUpdates(), {
      most: this.opts.window + 1,
      cap: this.opts.maxUpdates,
      floor: VERSION_CAP_FLOOR,
    });
    const depth = BigInt(kept - 1);
    const freed: Version[] = [];
    for (const [id, v] of this.byId) {
      const below = head.header.number - v.header.number;
      const keep = canonical.has(id) ? below <= depth : below <= BigInt(this.opts.forkWindow);
      if (!keep) {
        this.byId.delete(id);
        this.parentIds.delete(id);
        freed.push(v);
      }
    }
    return freed;
  }

  /** What each version on the head's chain costs (`maxUpdates`), the head first. */
  private *headChainUpdates(): Generator<number> {
    for (let v: Version | undefined = this.headVersion; v !== undefined; ) {
      yield v.updates ?? 0;
      v = this.parentOf(v);
    }
  }

  /** All versions held (for metrics and tests). */
  all(): Version[] {
    return [...this.byId.values()];
  }
}
