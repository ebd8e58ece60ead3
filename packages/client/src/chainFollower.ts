/**
 * Follows the chain from the miners (MinerService.SubscribeBlocks) into a ChainView: each
 * streamed block is checked against its header (`clientBlockOf`) and added; on a broken stream
 * or a bad block it resumes a little below its head, from the next miner. It also knows the
 * *state head* — the newest canonical block every shard can already be read at, what
 * transactions are pre-executed against — and tells listeners when it moves.
 */
import { type Logger, silentLogger } from '@monsoon/edge';
import { blockWithReceiptsFromProto, type minerPb } from '@monsoon/protocol';
import { type ChainView, type ClientBlock, clientBlockOf } from './chain.js';
import { ClientError, ClientErrorCode } from './clientError.js';
import type { MinerPool } from './minerPool.js';
import type { ShardedStorage } from './shardedStorage.js';

export interface ChainFollowerOptions {
  /** Blocks below the head a broken stream resumes from (a reorg while disconnected is then seen). */
  resumeDepth: bigint;
  /** Wait before following again after a broken stream, ms. */
  retryMs: number;
  logger: Logger;
}

export const defaultChainFollowerOptions: ChainFollowerOptions = {
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

  constructor(
    readonly opts: ChainFollowerOptions,
    private readonly modules: ChainFollowerModules,
  ) {
    modules.chain.onHead(() => this.stateMoved());
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

  private stateMoved(): void {
    for (const f of [...this.stateListeners]) f();
  }

  /** Streams canonical blocks from the current miner; on a break, resumes (another miner if need be). */
  private followChain(): void {
    if (this.closed) return;
    const { chain, miners } = this.modules;
    const head = chain.head;
    const depth = this.opts.resumeDepth;
    // Resume a little below the head: a reorg while disconnected is then seen.
    const from = head === undefined ? 0n : head.header.number > depth ? head.header.number - depth : 0n;
    const call = miners.current.subscribeBlocks({ fromNumber: from });
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
      try {
        chain.add(clientBlockOf(blockWithReceiptsFromProto(m)));
      } catch (e) {
        call.cancel();
        retry((e as Error).message);
      }
    });
    call.on('error', (e) => retry(e.message));
    call.on('end', () => retry('the miner ended the stream'));
  }
}
