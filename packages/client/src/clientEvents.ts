/**
 * The client's ChainEvents (what the JSON-RPC layer serves eth_getLogs, filters and
 * subscriptions from): a LogIndex fed with every new head of the ChainView, the reorgs it
 * detects turned into ChainChanges, and the transactions the client got accepted, as told by
 * `pendingTransaction`. Listeners run synchronously as blocks arrive; one that throws is logged
 * and never disturbs the chain or the other listeners.
 */
import { type Logger, silentLogger } from '@monsoon/edge';
import type { ChainView, ClientBlock } from './chain.js';
import { blockLogsOf, defaultLogIndexOptions, LogIndex, type LogIndexOptions } from './logIndex.js';
import type { ChainChange, ChainEvents } from './rpc/chainEvents.js';

export interface ClientEventsOptions extends LogIndexOptions {
  /** The chain's (constant) base fee, as newHeads writes it. */
  baseFeePerGas: bigint;
}

export const defaultClientEventsOptions: Pick<ClientEventsOptions, 'window'> = defaultLogIndexOptions;

export interface ClientEventsModules {
  readonly chain: ChainView;
  readonly logger?: Logger;
}

export class ClientEvents implements ChainEvents {
  readonly logs: LogIndex;
  private readonly changeListeners = new Set<(c: ChainChange) => void>();
  private readonly pendingListeners = new Set<(hash: Uint8Array) => void>();
  private readonly stopFollowing: () => void;
  private readonly log: Logger;

  /** Starts following `chain`, first indexing the newest blocks it already holds. */
  constructor(
    readonly opts: ClientEventsOptions,
    modules: ClientEventsModules,
  ) {
    this.log = modules.logger ?? silentLogger;
    this.logs = new LogIndex({ window: opts.window });
    const { chain } = modules;
    const head = chain.head?.header.number;
    if (head !== undefined) {
      const window = BigInt(opts.window);
      for (let n = head >= window ? head - window + 1n : 0n; n <= head; n++) {
        const b = chain.byNumber(n);
        if (b !== undefined) this.logs.add(blockLogsOf(b));
      }
    }
    this.stopFollowing = chain.onHead((b) => this.headArrived(b));
  }

  onChange(listener: (change: ChainChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  onPendingTransaction(listener: (hash: Uint8Array) => void): () => void {
    this.pendingListeners.add(listener);
    return () => this.pendingListeners.delete(listener);
  }

  /** Tells the listeners a transaction was accepted for mining. */
  pendingTransaction(hash: Uint8Array): void {
    this.notify(this.pendingListeners, hash);
  }

  /** Stops following the chain. */
  close(): void {
    this.stopFollowing();
    this.changeListeners.clear();
    this.pendingListeners.clear();
  }

  private headArrived(b: ClientBlock): void {
    const added = blockLogsOf(b);
    let replaced: ReturnType<LogIndex['add']>;
    try {
      replaced = this.logs.add(added);
    } catch (e) {
      // Only a gap can throw, and the ChainView refuses gaps first: never let it reach the chain.
      this.log.error('log index refused a block', { error: e instanceof Error ? e.message : String(e) });
      return;
    }
    if (replaced === undefined) return;
    const head = {
      hash: b.hash,
      header: b.header,
      baseFeePerGas: this.opts.baseFeePerGas,
      logsBloom: b.logsBloom,
    };
    this.notify(this.changeListeners, { removed: replaced.removed, added, head });
  }

  private notify<T>(listeners: ReadonlySet<(x: T) => void>, x: T): void {
    for (const f of [...listeners]) {
      try {
        f(x);
      } catch (e) {
        this.log.error('chain event listener failed', { error: e instanceof Error ? e.message : String(e) });
      }
    }
  }
}
