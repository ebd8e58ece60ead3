/**
 * Installed filters (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter), as
 * geth's FilterAPI keeps them: each buffers what happened since it was last polled
 * (eth_getFilterChanges) — matching logs (those of blocks a reorg removed again, with
 * `removed: true`), new block hashes, or accepted transaction hashes. A filter not polled for
 * `filterTimeoutMs` is uninstalled by a sweep that runs every `filterTimeoutMs` (so, as in geth,
 * it lives between one and two timeouts unpolled); after that its id is "filter not found".
 *
 * Bounded: at most `maxFilters` filters (a new one beyond is refused), and at most
 * `maxFilterChanges` changes buffered per filter — a filter that falls that far behind is
 * uninstalled rather than silently losing events, so its next poll says "filter not found" and
 * the caller makes a new one (viem does so by itself).
 */
import { type Logger, silentLogger } from '@monsoon/edge';
import type { ChainChange, ChainEvents } from './chainEvents.js';
import type { FilterCriteria } from './filterCriteria.js';
import { type ChangedLog, logsOfChange } from './logQuery.js';
import { RpcError, RpcErrorCode } from './rpcError.js';
import { newRpcId } from './rpcId.js';

export interface FiltersOptions {
  /** A filter not polled for this long is uninstalled, ms (geth: 5 minutes). */
  filterTimeoutMs: number;
  /** Most filters installed at once. */
  maxFilters: number;
  /** Most changes one filter buffers between polls; beyond, it is uninstalled. */
  maxFilterChanges: number;
}

export const defaultFiltersOptions: FiltersOptions = {
  filterTimeoutMs: 5 * 60_000,
  maxFilters: 1024,
  maxFilterChanges: 10_000,
};

export interface FiltersModules {
  readonly events: ChainEvents;
  /** The clock deadlines are kept on (ms); tests move it. */
  readonly now?: () => number;
  readonly logger?: Logger;
}

/** What eth_getFilterChanges answers, before it becomes JSON. */
export type FilterChanges =
  | { readonly kind: 'logs'; readonly logs: readonly ChangedLog[] }
  | { readonly kind: 'blocks'; readonly hashes: readonly Uint8Array[] }
  | { readonly kind: 'pending'; readonly hashes: readonly Uint8Array[]; readonly fullTx: boolean };

type Filter =
  | { readonly kind: 'logs'; readonly crit: FilterCriteria; changes: ChangedLog[]; deadline: number }
  | { readonly kind: 'blocks'; changes: Uint8Array[]; deadline: number }
  | { readonly kind: 'pending'; readonly fullTx: boolean; changes: Uint8Array[]; deadline: number };

const NOT_FOUND = 'filter not found';

export class Filters {
  private readonly filters = new Map<string, Filter>();
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly stopListening: (() => void)[];
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly opts: FiltersOptions,
    modules: FiltersModules,
  ) {
    this.now = modules.now ?? Date.now;
    this.log = modules.logger ?? silentLogger;
    this.stopListening = [
      modules.events.onChange((c) => this.chainChanged(c)),
      modules.events.onPendingTransaction((h) => this.pendingTransaction(h)),
    ];
    this.timer = setInterval(() => this.sweep(), opts.filterTimeoutMs);
    this.timer.unref();
  }

  /** How many filters are installed. */
  get size(): number {
    return this.filters.size;
  }

  /** Installs a log filter (its criteria checked by the caller); resolves to its id. */
  newLogFilter(crit: FilterCriteria): string {
    return this.install({ kind: 'logs', crit, changes: [], deadline: 0 });
  }

  newBlockFilter(): string {
    return this.install({ kind: 'blocks', changes: [], deadline: 0 });
  }

  newPendingTransactionFilter(fullTx: boolean): string {
    return this.install({ kind: 'pending', fullTx, changes: [], deadline: 0 });
  }

  /** What happened since the last poll (and the deadline starts over); "filter not found" otherwise. */
  changes(id: string): FilterChanges {
    const f = this.filters.get(id);
    if (f === undefined) throw new RpcError(RpcErrorCode.Server, NOT_FOUND);
    f.deadline = this.now() + this.opts.filterTimeoutMs;
    switch (f.kind) {
      case 'logs': {
        const logs = f.changes;
        f.changes = [];
        return { kind: 'logs', logs };
      }
      case 'blocks': {
        const hashes = f.changes;
        f.changes = [];
        return { kind: 'blocks', hashes };
      }
      default: {
        const hashes = f.changes;
        f.changes = [];
        return { kind: 'pending', hashes, fullTx: f.fullTx };
      }
    }
  }

  /** A log filter's criteria (eth_getFilterLogs, which does not count as a poll); "filter not found" otherwise. */
  criteria(id: string): FilterCriteria {
    const f = this.filters.get(id);
    if (f?.kind !== 'logs') throw new RpcError(RpcErrorCode.Server, NOT_FOUND);
    return f.crit;
  }

  /** Removes a filter; false when there was none. */
  uninstall(id: string): boolean {
    return this.filters.delete(id);
  }

  /** Uninstalls every filter whose deadline has passed; returns how many. */
  sweep(): number {
    const now = this.now();
    let removed = 0;
    for (const [id, f] of this.filters) {
      if (f.deadline <= now) {
        this.filters.delete(id);
        removed++;
      }
    }
    return removed;
  }

  /** Stops listening and forgets every filter. */
  close(): void {
    clearInterval(this.timer);
    for (const off of this.stopListening) off();
    this.filters.clear();
  }

  private install(f: Filter): string {
    if (this.filters.size >= this.opts.maxFilters) {
      throw new RpcError(RpcErrorCode.Server, `too many filters installed (limit ${this.opts.maxFilters})`);
    }
    f.deadline = this.now() + this.opts.filterTimeoutMs;
    const id = newRpcId();
    this.filters.set(id, f);
    return id;
  }

  /** Appends to a filter's buffer; a filter over its bound is uninstalled. */
  private buffer<T>(id: string, f: { changes: T[] }, items: readonly T[]): void {
    if (items.length === 0) return;
    if (f.changes.length + items.length > this.opts.maxFilterChanges) {
      this.filters.delete(id);
      this.log.warn('filter uninstalled: not polled fast enough', {
        id,
        buffered: f.changes.length + items.length,
        limit: this.opts.maxFilterChanges,
      });
      return;
    }
    f.changes.push(...items);
  }

  private chainChanged(c: ChainChange): void {
    for (const [id, f] of this.filters) {
      if (f.kind === 'logs') this.buffer(id, f, logsOfChange(c, f.crit));
      else if (f.kind === 'blocks') this.buffer(id, f, [c.head.hash]);
    }
  }

  private pendingTransaction(hash: Uint8Array): void {
    for (const [id, f] of this.filters) if (f.kind === 'pending') this.buffer(id, f, [hash]);
  }
}
