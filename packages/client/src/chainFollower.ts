/**
 * Follows the chain from the miners (MinerService.SubscribeBlocks) into a ChainView: each
 * streamed block is checked against its header (`clientBlockOf`) and added; on a broken stream
 * or a bad block it resumes a little below its head, from the next miner. A fresh follower
 * starts just below the miner's head (`syncFrom: 'head'`, the default: `resumeDepth` blocks
 * below it, so a reorg while starting is followed; the first block it takes is trusted as an
 * anchor, its proof of work checked but not its ancestry) or replays the chain
 * from genesis (`'genesis'`: every parent link checked, reads at old heads until it is through).
 * Started at the head, it then fetches the history behind its anchor (`history` blocks, what
 * the chain view has room for) from a second stream, checks that it links up to the anchor and
 * adds it below; eth_syncing reports that fetch until it is through.
 * It also knows the
 * *state head* — the newest canonical block every shard can already be read at, what
 * transactions are pre-executed against — and tells listeners when it moves.
 */

import { bytesEqual } from '@monsoon/dsm-tree';
import { type Logger, silentLogger } from '@monsoon/edge';
import { keccak } from '@monsoon/keccak';
import {
  blockWithReceiptsFromProto,
  checkPow,
  decodeHeader,
  headerHash,
  type minerPb,
} from '@monsoon/protocol';
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
  /**
   * Blocks behind its anchor a head-synced follower fetches once it serves (0: none). The
   * client passes its chain window; the view keeps what its caps leave room for.
   */
  history: number;
  /** Attempts at that history (a broken stream, a reorg below the anchor) before it gives up, loudly. */
  historyAttempts: number;
  logger: Logger;
}

export const defaultChainFollowerOptions: ChainFollowerOptions = {
  syncFrom: 'head',
  resumeDepth: 16n,
  retryMs: 200,
  history: 512,
  historyAttempts: 8,
  logger: silentLogger,
};

export interface ChainFollowerModules {
  readonly chain: ChainView;
  readonly miners: MinerPool;
  /** Its `readableNumber` bounds the state head; `followHeads` says when storage moved. */
  readonly storage: ShardedStorage;
  /**
   * This chain's block 0 hash, from the genesis file (computed off the event loop when first
   * asked): the trust root a late start's ancestry is checked down to. Without it, that check is
   * not made.
   */
  readonly genesisHash?: () => Promise<Uint8Array>;
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
  /** The history fetch behind the anchor while it runs: where it starts, the newest block taken. */
  private history: { from: bigint; at: bigint; call: { cancel(): void } } | undefined;
  /** History blocks added below the anchor. */
  historyBlocks = 0;
  /**
   * Whether the oldest block held descends from the genesis file's block 0: true once its
   * history reaches block 0, or the miner's headers below it linked it there (proof of work,
   * difficulty rule and parent link of each); undefined until known.
   */
  ancestryChecked: boolean | undefined;

  constructor(
    readonly opts: ChainFollowerOptions,
    private readonly modules: ChainFollowerModules,
  ) {
    modules.chain.onHead((b) => {
      if (this.firstNumber === undefined) {
        this.firstNumber = b.header.number;
        if (opts.syncFrom === 'head') this.fetchHistory(0);
      }
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
    this.history?.call.cancel();
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
   * either is known); while the history behind a late start is fetched, how far that has come
   * (from its first block towards the head); else how far this client has come towards the newer of the two (storage
   * behind the chain head, or this client still replaying blocks storage already holds).
   */
  syncing(): SyncView | undefined {
    const head = this.modules.chain.head;
    const readable = this.modules.storage.readableNumber;
    if (head === undefined || this.firstNumber === undefined || readable < 0n) return undefined;
    const chainHead = head.header.number;
    const h = this.history;
    if (h !== undefined) return { startingBlock: h.from, currentBlock: h.at, highestBlock: chainHead };
    if (readable === chainHead) return undefined;
    const [currentBlock, highestBlock] = readable < chainHead ? [readable, chainHead] : [chainHead, readable];
    return { startingBlock: this.firstNumber, currentBlock, highestBlock };
  }

  private stateMoved(): void {
    for (const f of [...this.stateListeners]) f();
  }

  /**
   * The history behind the anchor (the oldest block held): a stream from `history` blocks below
   * it, each block checked on its own (clientBlockOf) and collected until the anchor's height,
   * then the lot checked as one chain linked to the anchor and added below it. A miner that no
   * longer holds the oldest of them starts its stream higher: history then starts there. A
   * broken stream or a chain that does not link (a reorg below the anchor meanwhile) is tried
   * again, `historyAttempts` times in all, from the next miner.
   */
  private fetchHistory(attempt: number): void {
    const { chain, miners } = this.modules;
    const anchor = chain.oldest;
    if (this.closed || anchor === undefined || this.opts.history <= 0 || anchor.header.number === 0n) return;
    const top = anchor.header.number;
    const from = top > BigInt(this.opts.history) ? top - BigInt(this.opts.history) : 0n;
    const call = miners.current.subscribeBlocks({ fromNumber: from });
    const history = { from, at: from, call };
    this.history = history;
    const got: ClientBlock[] = [];
    const stream = this.ending(call, (why?: string): void => {
      let added = 0;
      try {
        if (why !== undefined) throw new Error(why);
        added = chain.addHistory(got);
      } catch (e) {
        const message = (e as Error).message;
        if (this.again('history behind the anchor', attempt, message, (n) => this.fetchHistory(n))) return;
        this.opts.logger.error('history behind the anchor not fetched: blocks below it stay unknown', {
          anchor: Number(top),
          attempts: attempt + 1,
          why: message,
        });
      }
      this.history = undefined;
      this.historyBlocks += added;
      if (why === undefined) {
        this.opts.logger.info('history fetched', {
          from: got.length === 0 ? Number(top) : Number(got[0]!.header.number),
          to: Number(top - 1n),
          kept: added,
        });
        this.checkAncestry(0);
      }
    });
    call.on('data', (m: minerPb.BlockWithReceipts) => {
      if (stream.over) return;
      let b: ClientBlock;
      try {
        b = clientBlockOf(blockWithReceiptsFromProto(m));
      } catch (e) {
        stream.end((e as Error).message);
        return;
      }
      const n = b.header.number;
      if (n >= top) {
        stream.end();
        return;
      }
      // A reorg on the miner's side re-sends the new branch from the fork on.
      while (got.length > 0 && got.at(-1)!.header.number >= n) got.pop();
      got.push(b);
      history.at = n;
      if (n === top - 1n) stream.end();
    });
    call.on('error', (e) => stream.end(e.message));
    call.on('end', () => stream.end('the miner ended the stream'));
  }

  /**
   * A backfill stream's end: `finish` runs once, when `call` first ends (`why` when it broke
   * off), the call cancelled; not at all after stop().
   */
  private ending(
    call: { cancel(): void },
    finish: (why?: string) => void,
  ): { end: (why?: string) => void; readonly over: boolean } {
    let over = false;
    return {
      end: (why?: string) => {
        if (over) return;
        over = true;
        call.cancel();
        if (!this.closed) finish(why);
      },
      get over() {
        return over;
      },
    };
  }

  /**
   * After a failed attempt `attempt` at `what` (history, ancestry): true if it is tried again
   * from the next miner after `retryMs`, false once `historyAttempts` are spent.
   */
  private again(what: string, attempt: number, why: string, retry: (attempt: number) => void): boolean {
    if (attempt + 1 >= this.opts.historyAttempts) return false;
    this.opts.logger.warn(`${what}: trying again`, { miner: this.modules.miners.currentAddress, why });
    this.modules.miners.next();
    setTimeout(() => retry(attempt + 1), this.opts.retryMs);
    return true;
  }

  /**
   * The oldest block held checked against genesis: the miner's headers from block 0 up to it
   * (GetHeaders), block 0's hash equal to the genesis file's, each later one's proof of work,
   * difficulty rule and parent link, the last the oldest block's parent. Streamed, a header at a
   * time, nothing kept. A broken stream or a chain that does not link is tried again from the
   * next miner, `historyAttempts` times in all, then reported (`ancestryChecked` false).
   */
  private checkAncestry(attempt: number): void {
    const ask = this.modules.genesisHash;
    if (ask === undefined) {
      if (this.modules.chain.oldest?.header.number === 0n) this.ancestryChecked = true;
      return;
    }
    ask().then(
      (genesis) => this.checkAncestryTo(genesis, attempt),
      (e: Error) => this.opts.logger.error('ancestry not checked: no genesis hash', { why: e.message }),
    );
  }

  /** checkAncestry once the genesis file's block 0 hash is known. */
  private checkAncestryTo(genesis: Uint8Array, attempt: number): void {
    const { chain, miners } = this.modules;
    const oldest = chain.oldest;
    if (this.closed || oldest === undefined) return;
    if (oldest.header.number === 0n) {
      this.ancestryChecked = bytesEqual(oldest.hash, genesis);
      if (!this.ancestryChecked)
        this.opts.logger.error("block 0 from the miners is not this chain's genesis");
      return;
    }
    const top = oldest.header.number;
    const call = miners.current.getHeaders({ fromNumber: 0n, toNumber: top - 1n });
    const progress = { from: 0n, at: 0n, call };
    this.history = progress;
    let parent = genesis;
    let next = 0n;
    const stream = this.ending(call, (why?: string): void => {
      let problem = why;
      if (problem === undefined && next !== top)
        problem = `the headers ended at #${next - 1n}, #${top - 1n} was due`;
      if (problem === undefined && !bytesEqual(parent, oldest.header.parentHash))
        problem = `header #${top - 1n} is not the parent of block #${top}, the oldest held`;
      if (
        problem !== undefined &&
        this.again('ancestry check', attempt, problem, (n) => this.checkAncestry(n))
      )
        return;
      this.history = undefined;
      this.ancestryChecked = problem === undefined;
      if (problem === undefined)
        this.opts.logger.info('ancestry checked down to genesis', { headers: Number(top) });
      else
        this.opts.logger.error('ancestry not checked: the oldest block held is not linked to genesis', {
          block: Number(top),
          attempts: attempt + 1,
          why: problem,
        });
    });
    call.on('data', (m: minerPb.HeadersChunk) => {
      for (const rlp of m.headers) {
        if (stream.over) return;
        let problem: string | undefined;
        try {
          const h = decodeHeader(rlp);
          const hash = headerHash(h, keccak);
          if (h.number !== next) problem = `header #${h.number} where #${next} was due`;
          else if (next === 0n) {
            if (!bytesEqual(hash, genesis))
              problem = "block 0 is not this chain's genesis (the genesis file's hash differs)";
          } else if (!bytesEqual(h.parentHash, parent))
            problem = `header #${next} does not name #${next - 1n} as its parent`;
          else if (!checkPow(h, keccak))
            problem = `header #${next}: its proof of work does not meet its difficulty`;
          else if (h.difficulty < chain.opts.minDifficulty)
            problem = `header #${next}: difficulty ${h.difficulty} is below the chain's minimum ${chain.opts.minDifficulty}`;
          parent = hash;
        } catch (e) {
          problem = `header #${next}: ${(e as Error).message}`;
        }
        if (problem !== undefined) {
          stream.end(problem);
          return;
        }
        progress.at = next;
        next++;
      }
    });
    call.on('error', (e) => stream.end(e.message));
    call.on('end', () => stream.end());
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
