/**
 * Follows the chain from the miners (MinerService.SubscribeBlocks) into a ChainView: each
 * streamed block is checked against its header (`clientBlockOf`) and added; on a broken stream
 * or a bad block it resumes a little below its head, from the next miner. A fresh follower
 * starts just below the miner's head (`syncFrom: 'head'`, the default: `resumeDepth` blocks
 * below it, so a reorg while starting is followed; the first block it takes is trusted as an
 * anchor, its proof of work checked but not its ancestry) or replays the chain
 * from genesis (`'genesis'`: every parent link checked, reads at old heads until it is through).
 * It also knows the
 * *state head* — the newest canonical block every shard can already be read at, what
 * transactions are pre-executed against — and tells listeners when it moves.
 */
import { type Logger, silentLogger } from '@monsoon/edge';
import { blockWithReceiptsFromProto, type minerPb } from '@monsoon/protocol';
import { type ChainView, type ClientBlock, clientBlockOf } from './chain.js';
import { ClientError, ClientErrorCode } from './clientError.js';
import type { MinerPool } from './minerPool.js';
import type { SyncView } from './rpc/backend.js';
import type { ShardedStorage } from './shardedStorage.js';

/** Where a follower with no block yet starts: the miner's head, or block 0. */
export type SyncFrom = 'head' | 'genesis';
export const SYNC_FROM: readonly SyncFrom[] = ['head', 'genesis'];

export interface ChainFollowerOptions {
  /**
   * Where to start when no block is held: 'head' (the miner's head, at once; nothing older is
   * fetched) or 'genesis' (every block from 0, each parent link checked, before the head).
   */
  syncFrom: SyncFrom;
  /** Blocks below the head a broken stream resumes from (a reorg while disconnected is then seen). */
  resumeDepth: bigint;
  /** Wait before following again after a broken stream, ms. */
  retryMs: number;
  logger: Logger;
}

export const defaultChainFollowerOptions: ChainFollowerOptions = {
  syncFrom: 'head',
  resumeDepth: 16n,
  retryMs: 200,
  logger: silentLogger,
};

export interface ChainFollowerModules {
  readonly chain: ChainView;
  readonly miners: MinerPool;
  /** Its `readableNumber` bounds the state head; `followHeads` says when storage moved. */
  readonly storage: ShardedStorage;
}

export class ChainFollower {
  private follow: { cancel(): void } | undefined;
  private closed = false;
  private readonly stateListeners = new Set<() => void>();
  /** Blocks taken from miners' streams (replays included). */
  blocksReceived = 0;
  /** The number of the first block taken. */
  private firstNumber: bigint | undefined;
  /** Where a head-synced follower anchors: `resumeDepth` below the miner's head when it started. */
  private anchorFrom: bigint | undefined;

  constructor(
    readonly opts: ChainFollowerOptions,
    private readonly modules: ChainFollowerModules,
  ) {
    modules.chain.onHead((b) => {
      this.firstNumber ??= b.header.number;
      this.stateMoved();
    });
    modules.storage.followHeads(() => this.stateMoved());
  }

  /** Starts streaming blocks (from the current miner). */
  start(): void {
    this.followChain();
  }

  stop(): void {
    this.closed = true;
    this.follow?.cancel();
  }

  /** Resolves once a head is known (or rejects after `ms`). */
  async ready(ms: number): Promise<ClientBlock> {
    const chain = this.modules.chain;
    const head = chain.head;
    if (head !== undefined) return head;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        off();
        reject(
          new ClientError(
            ClientErrorCode.UnknownBlock,
            `no block from miners ${this.modules.miners.addresses.join(', ')} within ${ms} ms`,
            { miners: this.modules.miners.addresses, ms },
          ),
        );
      }, ms);
      const off = chain.onHead((b) => {
        clearTimeout(t);
        off();
        resolve(b);
      });
    });
  }

  /**
   * The newest canonical block every shard can already be read at (what transactions are
   * pre-executed against): the chain head, or below it while storage nodes catch up.
   */
  stateHead(): ClientBlock {
    const chain = this.modules.chain;
    const head = chain.requireHead();
    const readable = this.modules.storage.readableNumber;
    if (readable >= head.header.number) return head;
    return chain.byNumber(readable) ?? head;
  }

  /** Calls `f` whenever the state head may have moved (a new head, or storage caught up); returns the unsubscribe. */
  onStateMoved(f: () => void): () => void {
    this.stateListeners.add(f);
    return () => this.stateListeners.delete(f);
  }

  /** Resolves when the state head is no longer `than`, or after `ms`. */
  stateChange(than: ClientBlock, ms: number): Promise<void> {
    if (this.stateHead() !== than) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        off();
        resolve();
      };
      const t = setTimeout(done, ms);
      const off = this.onStateMoved(() => {
        if (this.stateHead() !== than) done();
      });
    });
  }

  /**
   * eth_syncing: undefined when the chain head and the storage nodes' head agree (or before
   * either is known); else how far this client has come towards the newer of the two (storage
   * behind the chain head, or this client still replaying blocks storage already holds).
   */
  syncing(): SyncView | undefined {
    const head = this.modules.chain.head;
    const readable = this.modules.storage.readableNumber;
    if (head === undefined || this.firstNumber === undefined || readable < 0n) return undefined;
    const chainHead = head.header.number;
    if (readable === chainHead) return undefined;
    const [currentBlock, highestBlock] = readable < chainHead ? [readable, chainHead] : [chainHead, readable];
    return { startingBlock: this.firstNumber, currentBlock, highestBlock };
  }

  private stateMoved(): void {
    for (const f of [...this.stateListeners]) f();
  }

  /**
   * Where a stream starts: a little below the head held (a reorg while disconnected is then
   * seen); with no block yet, at the miner's head (undefined: no fromNumber) or at genesis.
   */
  private streamFrom(): bigint | undefined {
    const head = this.modules.chain.head;
    if (head === undefined) return this.opts.syncFrom === 'genesis' ? 0n : this.anchorFrom;
    const depth = this.opts.resumeDepth;
    return head.header.number > depth ? head.header.number - depth : 0n;
  }

  /** Streams canonical blocks from the current miner; on a break, resumes (another miner if need be). */
  private followChain(): void {
    if (this.closed) return;
    const { chain, miners } = this.modules;
    const from = this.streamFrom();
    const call = miners.current.subscribeBlocks(from === undefined ? {} : { fromNumber: from });
    this.follow = call;
    let failed = false;
    const retry = (why: string) => {
      if (failed || this.closed) return;
      failed = true;
      this.opts.logger.warn('chain stream broken: following again', { miner: miners.currentAddress, why });
      miners.next();
      setTimeout(() => this.followChain(), this.opts.retryMs);
    };
    call.on('data', (m: minerPb.BlockWithReceipts) => {
      if (failed) return;
      try {
        const block = clientBlockOf(blockWithReceiptsFromProto(m));
        if (from === undefined && chain.head === undefined) {
          // The miner's head says where to anchor: `resumeDepth` below it, not at it, so a reorg
          // of the newest blocks while this client starts is followed like any other (a block
          // whose parent is older than the first block taken could never be linked).
          const n = block.header.number;
          this.anchorFrom = n > this.opts.resumeDepth ? n - this.opts.resumeDepth : 0n;
          if (this.anchorFrom < n) {
            failed = true; // not a failure: this stream is replaced by one from the anchor
            call.cancel();
            this.followChain();
            return;
          }
        }
        this.blocksReceived++;
        chain.add(block);
      } catch (e) {
        call.cancel();
        retry((e as Error).message);
      }
    });
    call.on('error', (e) => retry(e.message));
    call.on('end', () => retry('the miner ended the stream'));
  }
}
