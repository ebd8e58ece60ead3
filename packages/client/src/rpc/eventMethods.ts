/**
 * The event methods: eth_getLogs, the filter methods (eth_newFilter, eth_newBlockFilter,
 * eth_newPendingTransactionFilter, eth_getFilterChanges, eth_getFilterLogs,
 * eth_uninstallFilter) and eth_subscribe / eth_unsubscribe, with geth's arguments, answers and
 * messages. They need the server's ChainEvents (and, for subscriptions, a WebSocket); without
 * them they answer as methods this server does not have.
 */
import type { ChainEvents } from './chainEvents.js';
import { type FilterCriteria, filterCriteriaArg } from './filterCriteria.js';
import type { FilterChanges, Filters } from './filters.js';
import { hexData, type Json } from './json.js';
import { entryJson } from './logJson.js';
import { checkLogSubscription, type LogQueryContext, queryLogs } from './logQuery.js';
import { ArgError, boolArg, type Decoder, idArg } from './params.js';
import { RpcError, RpcErrorCode } from './rpcError.js';
import { method, type RpcContext, type RpcMethod } from './rpcMethod.js';
import type { SubscriptionKind, Subscriptions } from './subscriptions.js';
import { commonFor, transactionJson } from './transactionJson.js';

function notAvailable(name: string): RpcError {
  return new RpcError(RpcErrorCode.MethodNotFound, `the method ${name} does not exist/is not available`);
}

function eventsOf(ctx: RpcContext, name: string): ChainEvents {
  if (ctx.events === undefined) throw notAvailable(name);
  return ctx.events;
}

function filtersOf(ctx: RpcContext, name: string): Filters {
  if (ctx.filters === undefined) throw notAvailable(name);
  return ctx.filters;
}

function logQuery(ctx: RpcContext, name: string): LogQueryContext {
  return { logs: eventsOf(ctx, name).logs, backend: ctx.backend, opts: ctx.logQuery };
}

/** eth_getFilterChanges' answer: logs, block hashes, or pending transactions (hashes or objects). */
async function changesJson(ctx: RpcContext, c: FilterChanges): Promise<Json> {
  switch (c.kind) {
    case 'logs':
      return c.logs.map((l) => entryJson(l.block, l.entry, l.removed));
    case 'blocks':
      return c.hashes.map(hexData);
    default: {
      if (!c.fullTx) return c.hashes.map(hexData);
      const common = commonFor(ctx.backend.chainId());
      const views = await Promise.all(c.hashes.map((h) => ctx.backend.transactionByHash(h)));
      return views.flatMap((v) => (v === undefined ? [] : [transactionJson(v, common)]));
    }
  }
}

/** The positional arguments of one subscription, decoded as geth does (`name` is argument 0). */
function subscriptionArgs<T>(
  args: readonly unknown[],
  decoders: readonly Decoder<T>[],
  required: number,
): T[] {
  if (args.length > decoders.length) {
    throw new RpcError(RpcErrorCode.InvalidParams, `too many arguments, want at most ${decoders.length + 1}`);
  }
  const out: T[] = [];
  for (let i = 0; i < decoders.length; i++) {
    const v = args[i];
    if (v === undefined || v === null) {
      if (i < required) {
        throw new RpcError(RpcErrorCode.InvalidParams, `missing value for required argument ${i + 1}`);
      }
      continue;
    }
    try {
      out[i] = decoders[i]!(v);
    } catch (e) {
      if (e instanceof ArgError)
        throw new RpcError(RpcErrorCode.InvalidParams, `invalid argument ${i + 1}: ${e.message}`);
      throw e;
    }
  }
  return out;
}

/** What eth_subscribe's params ask for; geth's checks and messages, in geth's order. */
function subscriptionKind(ctx: RpcContext, events: ChainEvents, params: unknown): SubscriptionKind {
  if (!Array.isArray(params)) throw new RpcError(RpcErrorCode.InvalidParams, 'non-array args');
  const [name, ...args] = params as unknown[];
  if (typeof name !== 'string') {
    throw new RpcError(RpcErrorCode.InvalidParams, 'expected subscription name as first argument');
  }
  switch (name) {
    case 'newHeads':
      subscriptionArgs(args, [], 0);
      return { name };
    case 'logs': {
      const [crit] = subscriptionArgs<FilterCriteria>(args, [filterCriteriaArg], 1);
      checkLogSubscription(crit!, events.logs, ctx.logQuery);
      return { name, crit: crit! };
    }
    case 'newPendingTransactions': {
      const [fullTx] = subscriptionArgs<boolean>(args, [boolArg], 0);
      return { name, fullTx: fullTx ?? false };
    }
    default:
      throw new RpcError(
        RpcErrorCode.MethodNotFound,
        `no ${JSON.stringify(name)} subscription in eth namespace`,
      );
  }
}

const subscribe: RpcMethod = {
  required: [],
  optional: [],
  rawParams: true,
  run: (ctx, [params]) => {
    const subs: Subscriptions | undefined = ctx.subscriptions;
    if (subs === undefined) throw new RpcError(RpcErrorCode.MethodNotFound, 'notifications not supported');
    return subs.subscribe(subscriptionKind(ctx, eventsOf(ctx, 'eth_subscribe'), params));
  },
};

/** The event methods, by name. */
export const EVENT_METHODS: readonly (readonly [string, RpcMethod])[] = [
  [
    'eth_getLogs',
    method([filterCriteriaArg], [], (ctx, crit) => queryLogs(logQuery(ctx, 'eth_getLogs'), crit)),
  ],
  [
    'eth_newFilter',
    method([filterCriteriaArg], [], (ctx, crit) => {
      checkLogSubscription(crit, eventsOf(ctx, 'eth_newFilter').logs, ctx.logQuery);
      return filtersOf(ctx, 'eth_newFilter').newLogFilter(crit);
    }),
  ],
  ['eth_newBlockFilter', method([], [], (ctx) => filtersOf(ctx, 'eth_newBlockFilter').newBlockFilter())],
  [
    'eth_newPendingTransactionFilter',
    method([], [boolArg], (ctx, fullTx) =>
      filtersOf(ctx, 'eth_newPendingTransactionFilter').newPendingTransactionFilter(fullTx ?? false),
    ),
  ],
  [
    'eth_getFilterChanges',
    method([idArg], [], (ctx, id) => changesJson(ctx, filtersOf(ctx, 'eth_getFilterChanges').changes(id))),
  ],
  [
    'eth_getFilterLogs',
    method([idArg], [], (ctx, id) =>
      queryLogs(logQuery(ctx, 'eth_getFilterLogs'), filtersOf(ctx, 'eth_getFilterLogs').criteria(id), false),
    ),
  ],
  [
    'eth_uninstallFilter',
    method([idArg], [], (ctx, id) => filtersOf(ctx, 'eth_uninstallFilter').uninstall(id)),
  ],
  ['eth_subscribe', subscribe],
  [
    'eth_unsubscribe',
    method([idArg], [], (ctx, id) => {
      if (ctx.subscriptions?.unsubscribe(id) !== true)
        throw new RpcError(RpcErrorCode.Server, 'subscription not found');
      return true;
    }),
  ],
];
