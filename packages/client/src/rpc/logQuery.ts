/**
 * eth_getLogs and eth_getFilterLogs with geth's semantics (eth/filters: `GetLogs`,
 * `Filter.Logs`, `rangeLogs`) and messages, over the LogStore's window of recent blocks, plus
 * the checks geth makes when a log filter or subscription is installed (`SubscribeLogs`).
 *
 * Where this differs from geth, on purpose: `latest` is the head when the query starts (geth
 * resolves it to 2^64-1, which trips its own range limit whenever one is set); the window's
 * oldest block is geth's history cutoff (older blocks: "pruned history unavailable", 4444); and
 * a query matching more than `maxLogResults` logs is refused with -32005 "query returned more
 * than N results" (geth has no such limit; this is Infura's answer, which libraries know).
 */
import type { BlockTag, RpcBackend } from './backend.js';
import { confirmedNumber } from './blockTags.js';
import type { BlockLogs, ChainChange, FoundLog, LogStore } from './chainEvents.js';
import type { FilterCriteria } from './filterCriteria.js';
import type { Json } from './json.js';
import { logMatches } from './logFilter.js';
import { entryJson } from './logJson.js';
import { RpcError, RpcErrorCode } from './rpcError.js';

export interface LogQueryOptions {
  /** Most blocks one query spans (to − from); 0 = no limit (geth's `--rpc.rangelimit`, default 0). */
  maxBlockRange: number;
  /** Most logs one query returns; more is refused with -32005. */
  maxLogResults: number;
  /** Most addresses, and most topics in one position, of a filter (geth's `--rpc.logquerylimit`); 0 = no limit. */
  maxQueryTerms: number;
  /** How far below the head `safe` and `finalized` are (see blockTags.ts). */
  confirmationDepth: number;
}

export const defaultLogQueryOptions: LogQueryOptions = {
  maxBlockRange: 0,
  maxLogResults: 10_000,
  maxQueryTerms: 1000,
  confirmationDepth: 12,
};

/** What a log query runs against. */
export interface LogQueryContext {
  readonly logs: LogStore;
  readonly backend: RpcBackend;
  readonly opts: LogQueryOptions;
}

function invalidParams(message: string): RpcError {
  return new RpcError(RpcErrorCode.InvalidParams, message);
}

const INVALID_RANGE = 'invalid block range params';
const PENDING_UNSUPPORTED = 'pending logs are not supported';

function pruned(): RpcError {
  return new RpcError(RpcErrorCode.PrunedHistory, 'pruned history unavailable');
}

/** geth's query-size check (logQueryLimit), made on every query, filter and subscription. */
export function checkQueryTerms(crit: FilterCriteria, opts: LogQueryOptions): void {
  const limit = opts.maxQueryTerms;
  if (limit === 0) return;
  if (crit.addresses.length > limit || crit.topics.some((t) => t.length > limit)) {
    throw new RpcError(RpcErrorCode.Server, 'exceed max addresses or topics per search position');
  }
}

/**
 * geth's checks when a log filter or subscription is installed (SubscribeLogs): no `pending`,
 * nothing below the history cutoff, and a range that is `latest`..`latest`, n..m with m ≥ n, or
 * n..`latest` (`earliest` counts as the cutoff's number; `safe` and `finalized` are refused).
 */
export function checkLogSubscription(crit: FilterCriteria, logs: LogStore, opts: LogQueryOptions): void {
  checkQueryTerms(crit, opts);
  const from = crit.fromBlock ?? { kind: 'latest' };
  const to = crit.toBlock ?? { kind: 'latest' };
  if (from.kind === 'pending' || to.kind === 'pending') throw invalidParams(PENDING_UNSUPPORTED);
  const cutoff = logs.first ?? 0n;
  const fromNumber = from.kind === 'earliest' ? cutoff : from.kind === 'number' ? from.number : undefined;
  if (fromNumber !== undefined && fromNumber < cutoff) throw pruned();
  if (from.kind === 'latest' && to.kind === 'latest') return;
  if (fromNumber !== undefined && to.kind === 'number' && to.number >= fromNumber) return;
  if (fromNumber !== undefined && to.kind === 'latest') return;
  throw invalidParams(INVALID_RANGE);
}

/** Whether block `number` is inside the filter's numeric bounds (tags bound nothing, as in geth). */
export function inFilterRange(crit: FilterCriteria, number: bigint): boolean {
  if (crit.fromBlock?.kind === 'number' && number < crit.fromBlock.number) return false;
  if (crit.toBlock?.kind === 'number' && number > crit.toBlock.number) return false;
  return true;
}

/** A log a chain change delivers to a filter or subscription: `removed` when a reorg took its block. */
export interface ChangedLog extends FoundLog {
  readonly removed: boolean;
}

/**
 * The logs of `change` that `crit` selects, as geth delivers them: first those of the blocks a
 * reorg removed (oldest block first, `removed: true`), then those of the new head.
 */
export function logsOfChange(change: ChainChange, crit: FilterCriteria): ChangedLog[] {
  const out: ChangedLog[] = [];
  const collect = (block: BlockLogs, removed: boolean) => {
    if (block.logs.length === 0 || !inFilterRange(crit, block.number)) return;
    for (const entry of block.logs) if (logMatches(crit, entry.log)) out.push({ block, entry, removed });
  };
  for (const block of change.removed) collect(block, true);
  collect(change.added, false);
  return out;
}

/** The block number a range end names; `pending` was refused before. */
function resolveEnd(tag: BlockTag, head: bigint, cutoff: bigint, opts: LogQueryOptions): bigint {
  switch (tag.kind) {
    case 'number':
      return tag.number;
    case 'earliest':
      return cutoff;
    case 'safe':
    case 'finalized':
      return confirmedNumber(head, opts.confirmationDepth);
    default:
      return head;
  }
}

/**
 * The JSON of the logs `crit` selects (eth_getLogs; `checkRange` false for eth_getFilterLogs,
 * which geth lets skip the early from > to check).
 */
export async function queryLogs(
  ctx: LogQueryContext,
  crit: FilterCriteria,
  checkRange = true,
): Promise<Json> {
  const { logs, opts } = ctx;
  checkQueryTerms(crit, opts);
  let from: bigint;
  let to: bigint;
  if (crit.blockHash !== undefined) {
    const block = logs.byHash(crit.blockHash);
    if (block === undefined) {
      // A block the chain knows but the window no longer holds is pruned; any other is unknown.
      const known = await ctx.backend.blockByTag({ kind: 'hash', hash: crit.blockHash });
      if (known !== undefined) throw pruned();
      throw new RpcError(RpcErrorCode.Server, 'unknown block');
    }
    from = block.number;
    to = block.number;
  } else {
    const begin = crit.fromBlock ?? { kind: 'latest' };
    const end = crit.toBlock ?? { kind: 'latest' };
    if (
      checkRange &&
      begin.kind === 'number' &&
      end.kind === 'number' &&
      begin.number > 0n &&
      begin.number > end.number
    ) {
      throw invalidParams(INVALID_RANGE);
    }
    const head = logs.head;
    const cutoff = logs.first;
    if (head === undefined || cutoff === undefined)
      throw new RpcError(RpcErrorCode.Server, 'head block not available');
    if (begin.kind === 'number' && begin.number < cutoff) throw pruned();
    if (begin.kind === 'pending' || end.kind === 'pending') throw invalidParams(PENDING_UNSUPPORTED);
    from = resolveEnd(begin, head, cutoff, opts);
    to = resolveEnd(end, head, cutoff, opts);
    if (from > to) throw invalidParams(INVALID_RANGE);
    if (opts.maxBlockRange !== 0 && to - from > BigInt(opts.maxBlockRange)) {
      throw invalidParams(`exceed maximum block range ${opts.maxBlockRange}`);
    }
    if (to > head) throw invalidParams('block range extends beyond current head block');
    if (from < cutoff) throw pruned();
  }
  const found = logs.query(from, to, crit, opts.maxLogResults);
  if (found.overflow) {
    throw new RpcError(RpcErrorCode.LimitExceeded, `query returned more than ${opts.maxLogResults} results`);
  }
  return found.logs.map((l) => entryJson(l.block, l.entry));
}
