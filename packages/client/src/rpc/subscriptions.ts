/**
 * One connection's eth_subscribe subscriptions (WebSocket only), as geth serves them:
 * `newHeads` (each new canonical head's header), `logs` (each matching log, one notification per
 * log; on a reorg the logs of the removed blocks come again with `removed: true` before those of
 * the new head), and `newPendingTransactions` (each accepted transaction's hash, or the
 * transaction when asked with `true`). Notifications are
 * `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":id,"result":…}}`.
 *
 * A subscription stays silent until `activate(id)`: the connection calls it once the answer that
 * carries the new id is sent, so no notification ever precedes its id (geth does the same).
 * Bounded: at most `maxSubscriptions` per connection, and at most `maxQueuedNotifications`
 * notifications held for subscriptions not yet active — beyond, `onOverflow` is called (the
 * connection drops).
 */
import { type Logger, silentLogger } from '@monsoon/edge';
import type { RpcBackend } from './backend.js';
import { headerJson } from './blockJson.js';
import type { ChainChange, ChainEvents } from './chainEvents.js';
import type { FilterCriteria } from './filterCriteria.js';
import { hexData, type Json, type JsonObject } from './json.js';
import { entryJson } from './logJson.js';
import { logsOfChange } from './logQuery.js';
import { RpcError, RpcErrorCode } from './rpcError.js';
import { newRpcId } from './rpcId.js';
import { commonFor, transactionJson } from './transactionJson.js';

export interface SubscriptionsOptions {
  /** Most subscriptions one connection holds. */
  maxSubscriptions: number;
  /** Most notifications held for subscriptions whose id is not yet answered. */
  maxQueuedNotifications: number;
}

export const defaultSubscriptionsOptions: SubscriptionsOptions = {
  maxSubscriptions: 128,
  maxQueuedNotifications: 10_000,
};

export interface SubscriptionsModules {
  readonly events: ChainEvents;
  /** Full transactions for `newPendingTransactions` with `true`. */
  readonly backend: RpcBackend;
  /** Sends one notification on the connection. */
  readonly send: (notification: JsonObject) => void;
  /** Called once when more than `maxQueuedNotifications` notifications wait for activation. */
  readonly onOverflow: () => void;
  readonly logger?: Logger;
}

/** What a subscription is for (the eth_subscribe name and its argument). */
export type SubscriptionKind =
  | { readonly name: 'newHeads' }
  | { readonly name: 'logs'; readonly crit: FilterCriteria }
  | { readonly name: 'newPendingTransactions'; readonly fullTx: boolean };

interface Subscription {
  readonly id: string;
  readonly kind: SubscriptionKind;
  /** Results waiting for activation; undefined once active. */
  queued: Json[] | undefined;
}

export class Subscriptions {
  private readonly subs = new Map<string, Subscription>();
  private readonly stopListening: (() => void)[];
  private readonly log: Logger;
  private queuedCount = 0;
  private overflowed = false;

  constructor(
    readonly opts: SubscriptionsOptions,
    private readonly modules: SubscriptionsModules,
  ) {
    this.log = modules.logger ?? silentLogger;
    this.stopListening = [
      modules.events.onChange((c) => this.chainChanged(c)),
      modules.events.onPendingTransaction((h) => this.pendingTransaction(h)),
    ];
  }

  get size(): number {
    return this.subs.size;
  }

  /** Adds a subscription (silent until `activate`); resolves to its id. */
  subscribe(kind: SubscriptionKind): string {
    if (this.subs.size >= this.opts.maxSubscriptions) {
      throw new RpcError(
        RpcErrorCode.Server,
        `too many subscriptions on this connection (limit ${this.opts.maxSubscriptions})`,
      );
    }
    const id = newRpcId();
    this.subs.set(id, { id, kind, queued: [] });
    return id;
  }

  /** Removes a subscription; false when this connection has none with that id. */
  unsubscribe(id: string): boolean {
    const s = this.subs.get(id);
    if (s === undefined) return false;
    this.queuedCount -= s.queued?.length ?? 0;
    return this.subs.delete(id);
  }

  /**
   * Starts delivering to subscription `id`, first what it queued; does nothing for an id that
   * is not a subscription waiting to start (so any answered string may be passed).
   */
  activate(id: string): void {
    const s = this.subs.get(id);
    if (s?.queued === undefined) return;
    const queued = s.queued;
    s.queued = undefined;
    this.queuedCount -= queued.length;
    for (const result of queued) this.notify(s, result);
  }

  /** Stops listening and drops every subscription. */
  close(): void {
    for (const off of this.stopListening) off();
    this.subs.clear();
  }

  private deliver(s: Subscription, result: Json): void {
    if (s.queued === undefined) {
      this.notify(s, result);
      return;
    }
    if (this.overflowed) return;
    if (this.queuedCount >= this.opts.maxQueuedNotifications) {
      this.overflowed = true;
      this.modules.onOverflow();
      return;
    }
    s.queued.push(result);
    this.queuedCount++;
  }

  private notify(s: Subscription, result: Json): void {
    this.modules.send({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: s.id, result } });
  }

  private chainChanged(c: ChainChange): void {
    let head: JsonObject | undefined;
    for (const s of [...this.subs.values()]) {
      if (s.kind.name === 'newHeads') {
        head ??= headerJson(c.head);
        this.deliver(s, head);
      } else if (s.kind.name === 'logs') {
        for (const l of logsOfChange(c, s.kind.crit)) this.deliver(s, entryJson(l.block, l.entry, l.removed));
      }
    }
  }

  private pendingTransaction(hash: Uint8Array): void {
    for (const s of [...this.subs.values()]) {
      if (s.kind.name !== 'newPendingTransactions') continue;
      if (!s.kind.fullTx) {
        this.deliver(s, hexData(hash));
        continue;
      }
      this.modules.backend.transactionByHash(hash).then(
        (view) => {
          if (view !== undefined && this.subs.has(s.id)) {
            this.deliver(s, transactionJson(view, commonFor(this.modules.backend.chainId())));
          }
        },
        (e: unknown) =>
          this.log.warn('pending transaction not found for a subscription', {
            error: e instanceof Error ? e.message : String(e),
          }),
      );
    }
  }
}
