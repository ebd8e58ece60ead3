/**
 * What the JSON-RPC layer needs, beyond RpcBackend, to serve events: the logs of recent
 * canonical blocks (eth_getLogs, eth_getFilterLogs), and word of every change to the canonical
 * chain and of every transaction accepted (filters and eth_subscribe). A reorg is one change:
 * the blocks it replaced, oldest first, and the block that replaced them.
 */
import type { Log } from '@monsoon/execution';
import type { BlockView } from './backend.js';

/** One log with its place in the chain (geth's types.Log, less the block it sits in). */
export interface LogEntry {
  readonly log: Log;
  /** 32 bytes: the transaction that emitted it. */
  readonly transactionHash: Uint8Array;
  /** Position of that transaction in its block. */
  readonly transactionIndex: number;
  /** Position of the log in its block: numbered block-wide, as geth does. */
  readonly logIndex: number;
}

/** A canonical block's logs, in block order, and its logs bloom. */
export interface BlockLogs {
  readonly number: bigint;
  /** 32 bytes. */
  readonly hash: Uint8Array;
  readonly timestamp: bigint;
  /** 256 bytes: the bloom of all `logs` (what lets a query skip the block). */
  readonly bloom: Uint8Array;
  readonly logs: readonly LogEntry[];
}

/** A block for newHeads: the header fields of BlockView. */
export type HeadView = Pick<BlockView, 'hash' | 'header' | 'baseFeePerGas' | 'logsBloom'>;

/** One change to the canonical chain: a new head, and what it replaced (a reorg) if anything. */
export interface ChainChange {
  /** Blocks that left the canonical chain, oldest first; empty unless a reorg. */
  readonly removed: readonly BlockLogs[];
  /** The new head's logs. */
  readonly added: BlockLogs;
  /** The new head, as newHeads sends it. */
  readonly head: HeadView;
}

/** Which logs a query wants (geth's FilterCriteria without the block range). */
export interface LogFilter {
  /** 20 bytes each: a log from any of these matches; empty = any address. */
  readonly addresses: readonly Uint8Array[];
  /**
   * Per position, the topics that match there (any of them); an empty list is a wildcard. A log
   * with fewer topics than positions never matches (geth), wildcards or not.
   */
  readonly topics: readonly (readonly Uint8Array[])[];
}

/** A log found by a query, with the block it sits in. */
export interface FoundLog {
  readonly block: BlockLogs;
  readonly entry: LogEntry;
}

/** The recent canonical blocks' logs: a bounded window, newest at `head`. */
export interface LogStore {
  /** Lowest block number held (undefined while empty). */
  readonly first: bigint | undefined;
  /** Highest block number held: the head (undefined while empty). */
  readonly head: bigint | undefined;
  /** The canonical block `number`'s logs, while the window holds it. */
  at(number: bigint): BlockLogs | undefined;
  /** A canonical block's logs by hash, while the window holds it. */
  byHash(hash: Uint8Array): BlockLogs | undefined;
  /**
   * The logs of blocks `from`..`to` (both held) that match, in chain order; a block whose bloom
   * cannot contain a match is skipped without looking at its logs. Stops, returning
   * `{ overflow: true }`, as soon as more than `limit` logs match.
   */
  query(
    from: bigint,
    to: bigint,
    filter: LogFilter,
    limit: number,
  ): { readonly logs: readonly FoundLog[]; readonly overflow: boolean };
}

/** The events a JSON-RPC server serves from. Listeners return a function that removes them. */
export interface ChainEvents {
  readonly logs: LogStore;
  /** Called for every change of the canonical chain, in order. */
  onChange(listener: (change: ChainChange) => void): () => void;
  /** Called with the hash of every transaction accepted for mining (newPendingTransactions). */
  onPendingTransaction(listener: (hash: Uint8Array) => void): () => void;
}
