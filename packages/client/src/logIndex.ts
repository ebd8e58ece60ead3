/**
 * The logs of the most recent canonical blocks, by number and by hash, each block with its logs
 * bloom so a query skips blocks that cannot match without reading their logs. Memory is bounded:
 * only the newest `window` blocks are held. Blocks arrive as the chain's new heads; one at a
 * height already held replaces it and everything above (a reorg), and `add` says what left.
 */
import { bytesEqual, toHex } from '@monsoon/dsm-tree';
import { detachAll } from '@monsoon/util';
import type { ClientBlock } from './chain.js';
import { ClientError, ClientErrorCode } from './clientError.js';
import type { BlockLogs, FoundLog, LogEntry, LogFilter, LogStore } from './rpc/chainEvents.js';
import { BloomMatcher, logMatches } from './rpc/logFilter.js';

export interface LogIndexOptions {
  /** Blocks held, the newest ones; older ones are dropped (eth_getLogs answers "pruned history"). */
  window: number;
}

/** About 2 minutes of 250 ms blocks, 8.5 of 1 s ones: the client's chain window (`--chain-window`) by default. */
export const defaultLogIndexOptions: LogIndexOptions = { window: 512 };

/**
 * A block's logs as the index holds them: its receipts' logs, numbered block-wide, with their
 * transactions' hashes, copied into one buffer of their own. The block's fields are views into
 * one buffer with all its transactions (see chain.ts `detachBlock`): holding those views would
 * hold every transaction of the index's window (512 blocks by default), not of the chain view's,
 * which is bounded by transactions (a client held ~130 KB a block for ~80 KB of logs: soak heap
 * snapshots, session 12).
 */
export function blockLogsOf(b: ClientBlock): BlockLogs {
  const parts: Uint8Array[] = [];
  b.receipts.forEach((r, i) => {
    if (r.logs.length === 0) return;
    // From its key: the block's hashes as views are made only for JSON-RPC (see ClientBlock.txKeys).
    parts.push(Buffer.from(b.txKeys[i]!, 'latin1'));
    for (const l of r.logs) parts.push(l.address, ...l.topics, l.data);
  });
  const copies = detachAll(parts);
  let at = 0;
  const next = () => copies[at++]!;
  const logs: LogEntry[] = [];
  b.receipts.forEach((r, transactionIndex) => {
    if (r.logs.length === 0) return;
    const transactionHash = next();
    for (const l of r.logs) {
      logs.push({
        log: { address: next(), topics: l.topics.map(next), data: next() },
        transactionHash,
        transactionIndex,
        logIndex: logs.length,
      });
    }
  });
  return { number: b.header.number, hash: b.hash, timestamp: b.header.timestamp, bloom: b.logsBloom, logs };
}

export class LogIndex implements LogStore {
  /** Consecutive block numbers, oldest first. */
  private readonly blocks: BlockLogs[] = [];
  private readonly hashes = new Map<string, BlockLogs>();

  constructor(readonly opts: LogIndexOptions = defaultLogIndexOptions) {
    if (!Number.isInteger(opts.window) || opts.window < 1) {
      throw new ClientError(
        ClientErrorCode.BadArgument,
        `log window: expected an integer ≥ 1, found ${opts.window}`,
        {
          window: opts.window,
        },
      );
    }
  }

  get first(): bigint | undefined {
    return this.blocks[0]?.number;
  }

  get head(): bigint | undefined {
    return this.blocks.at(-1)?.number;
  }

  at(number: bigint): BlockLogs | undefined {
    const first = this.first;
    if (first === undefined || number < first) return undefined;
    return this.blocks[Number(number - first)];
  }

  byHash(hash: Uint8Array): BlockLogs | undefined {
    return this.hashes.get(toHex(hash));
  }

  /**
   * Adds the chain's new head. Resolves to the blocks it replaced, oldest first (empty when it
   * simply extends the chain), or undefined when it is the block already held at its height.
   * A block more than one above the head is refused (UNKNOWN_BLOCK): the window has no gaps.
   */
  add(b: BlockLogs): { readonly removed: readonly BlockLogs[] } | undefined {
    const head = this.head;
    let removed: BlockLogs[] = [];
    if (head !== undefined) {
      if (b.number > head + 1n) {
        throw new ClientError(
          ClientErrorCode.UnknownBlock,
          `log index: block #${b.number} arrived after #${head}: blocks missing in between`,
          { number: b.number, head },
        );
      }
      const held = this.at(b.number);
      if (held !== undefined && bytesEqual(held.hash, b.hash)) return undefined;
      const first = this.first!;
      // A reorg deeper than the window replaces everything held.
      removed = this.blocks.splice(b.number < first ? 0 : Number(b.number - first));
      for (const gone of removed) this.hashes.delete(toHex(gone.hash));
    }
    this.blocks.push(b);
    this.hashes.set(toHex(b.hash), b);
    while (this.blocks.length > this.opts.window) this.hashes.delete(toHex(this.blocks.shift()!.hash));
    return { removed };
  }

  query(
    from: bigint,
    to: bigint,
    filter: LogFilter,
    limit: number,
  ): { readonly logs: readonly FoundLog[]; readonly overflow: boolean } {
    const bloom = new BloomMatcher(filter);
    const logs: FoundLog[] = [];
    for (let n = from; n <= to; n++) {
      const block = this.at(n);
      if (block === undefined) {
        throw new ClientError(ClientErrorCode.UnknownBlock, `log index: block #${n} is not held`, {
          number: n,
          first: this.first,
          head: this.head,
        });
      }
      if (block.logs.length === 0 || !bloom.mayContain(block.bloom)) continue;
      for (const entry of block.logs) {
        if (!logMatches(filter, entry.log)) continue;
        if (logs.length === limit) return { logs, overflow: true };
        logs.push({ block, entry });
      }
    }
    return { logs, overflow: false };
  }
}
