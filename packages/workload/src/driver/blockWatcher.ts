/**
 * Watches a miner's canonical chain (MinerService.SubscribeBlocks) and reports each block's
 * transaction hashes the moment it arrives, on the driver's clock: how the driver learns
 * inclusion without polling receipts.
 */

import { type ClientReadableStream, credentials } from '@grpc/grpc-js';
import { channelOptions } from '@monsoon/edge';
import { keccak } from '@monsoon/keccak';
import {
  blockWithReceiptsFromProto,
  decodeHeader,
  MinerServiceClient,
  type minerPb,
} from '@monsoon/protocol';
import { bytesToHex } from '@monsoon/util';
import { DriverError, DriverErrorCode } from './driverError.js';

/** A canonical block as the driver needs it. */
export interface WatchedBlock {
  readonly number: bigint;
  /** 0x-hex block hash (keccak256 of the header's RLP). */
  readonly hash: string;
  /** 0x-hex hashes of its transactions, in block order. */
  readonly txHashes: readonly string[];
  readonly gasUsed: bigint;
  /** When it arrived, on the driver's clock (ms). */
  readonly receivedAt: number;
}

export interface BlockWatcherOptions {
  /** The miner's gRPC address, host:port. */
  readonly miner: string;
  /** How long to wait for the miner's head block before giving up (MINER_UNAVAILABLE). */
  readonly readyTimeoutMs: number;
  /** Pause before re-subscribing after the stream broke mid-run. */
  readonly retryMs: number;
}

export const defaultBlockWatcherOptions: Omit<BlockWatcherOptions, 'miner'> = {
  readyTimeoutMs: 10_000,
  retryMs: 250,
};

/** Blocks remembered by number to recognise a block streamed twice (after a re-subscription). */
const REMEMBERED_BLOCKS = 256;

/**
 * Follows the miner from its current head. The first block streamed (the head itself) is only
 * the starting point: transactions sent afterwards cannot be in it. After a broken stream it
 * re-subscribes from the last block seen; blocks it already reported are skipped, and a block
 * whose number was already reported with another hash is passed on (a reorg, for the driver
 * to undo what the replaced blocks committed).
 */
export class BlockWatcher {
  /** The head block when the watch began. */
  readonly head: WatchedBlock;
  /** Times the stream broke and was re-subscribed. */
  resubscriptions = 0;
  /** Blocks that failed to decode (skipped). */
  badBlocks = 0;
  private call: ClientReadableStream<minerPb.BlockWithReceipts> | undefined;
  private closed = false;
  private last: bigint;
  private readonly seen = new Map<bigint, string>();

  private constructor(
    private readonly opts: BlockWatcherOptions,
    private readonly client: MinerServiceClient,
    private readonly onBlock: (b: WatchedBlock) => void,
    private readonly clock: () => number,
    head: WatchedBlock,
  ) {
    this.head = head;
    this.last = head.number;
    this.seen.set(head.number, head.hash);
  }

  /** Subscribes and resolves once the miner's head block arrived; `onBlock` then hears every later block. */
  static async start(
    opts: Partial<BlockWatcherOptions> & Pick<BlockWatcherOptions, 'miner'>,
    onBlock: (b: WatchedBlock) => void,
    clock: () => number,
  ): Promise<BlockWatcher> {
    const o = { ...defaultBlockWatcherOptions, ...opts };
    const client = new MinerServiceClient(o.miner, credentials.createInsecure(), channelOptions());
    const call = client.subscribeBlocks({});
    let watcher: BlockWatcher | undefined;
    const early: minerPb.BlockWithReceipts[] = [];
    try {
      const head = await new Promise<WatchedBlock>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(unavailable(o.miner, `no head block within ${o.readyTimeoutMs} ms`)),
          o.readyTimeoutMs,
        );
        let first = true;
        call.on('data', (m: minerPb.BlockWithReceipts) => {
          if (watcher !== undefined) return watcher.receive(m);
          if (!first) return early.push(m);
          first = false;
          clearTimeout(timer);
          try {
            resolve(decode(m, clock()));
          } catch (e) {
            reject(unavailable(o.miner, `its head block does not decode: ${(e as Error).message}`));
          }
        });
        call.on('error', (e: Error) => {
          clearTimeout(timer);
          if (watcher === undefined) reject(unavailable(o.miner, e.message));
        });
      });
      watcher = new BlockWatcher(o, client, onBlock, clock, head);
    } catch (e) {
      call.cancel();
      client.close();
      throw e;
    }
    watcher.attach(call);
    for (const m of early) watcher.receive(m);
    return watcher;
  }

  /** Ends the stream. */
  close(): void {
    this.closed = true;
    this.call?.cancel();
    this.client.close();
  }

  private attach(call: ClientReadableStream<minerPb.BlockWithReceipts>): void {
    this.call = call;
    let broken = false;
    const retry = () => {
      if (broken || this.closed) return;
      broken = true;
      call.cancel();
      setTimeout(() => this.resubscribe(), this.opts.retryMs).unref();
    };
    call.on('error', retry);
    call.on('end', retry);
  }

  private resubscribe(): void {
    if (this.closed) return;
    this.resubscriptions++;
    const call = this.client.subscribeBlocks({ fromNumber: this.last });
    call.on('data', (m: minerPb.BlockWithReceipts) => this.receive(m));
    this.attach(call);
  }

  private receive(m: minerPb.BlockWithReceipts): void {
    if (this.closed) return;
    let b: WatchedBlock;
    try {
      b = decode(m, this.clock());
    } catch {
      this.badBlocks++;
      return;
    }
    if (this.seen.get(b.number) === b.hash) return;
    for (const n of [...this.seen.keys()])
      if (n > b.number || n <= b.number - BigInt(REMEMBERED_BLOCKS)) this.seen.delete(n);
    this.seen.set(b.number, b.hash);
    this.last = b.number;
    this.onBlock(b);
  }
}

function decode(m: minerPb.BlockWithReceipts, receivedAt: number): WatchedBlock {
  const b = blockWithReceiptsFromProto(m);
  const header = decodeHeader(b.headerRlp);
  return {
    number: header.number,
    hash: bytesToHex(keccak.keccak256(b.headerRlp)),
    txHashes: hexHashes(b.transactions),
    gasUsed: header.gasUsed,
    receivedAt,
  };
}

/**
 * `0x`-hex keccak-256 of each transaction: hashed in one native call and written out as one hex
 * string, sliced (a call and a Buffer per transaction were most of what watching a block cost).
 */
function hexHashes(txs: readonly Uint8Array[]): string[] {
  if (txs.length === 0) return [];
  const digests = keccak.keccak256Batch(txs);
  const hex = Buffer.from(digests.buffer, digests.byteOffset, digests.length).toString('hex');
  return txs.map((_, i) => `0x${hex.slice(64 * i, 64 * i + 64)}`);
}

function unavailable(miner: string, why: string): DriverError {
  return new DriverError(
    DriverErrorCode.MinerUnavailable,
    `miner ${miner}: expected SubscribeBlocks to stream its head block, but ${why}`,
    { miner },
  );
}
