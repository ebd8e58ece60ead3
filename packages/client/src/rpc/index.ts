export type {
  AccessListEntry,
  AccessListView,
  AccountProofView,
  BlockTag,
  BlockView,
  CallRequest,
  FeeHistoryView,
  NamedBlockTag,
  ReceiptView,
  RpcBackend,
  StorageProofView,
  SyncView,
  TransactionView,
} from './backend.js';
export { confirmedNumber } from './blockTags.js';
export type {
  BlockLogs,
  ChainChange,
  ChainEvents,
  FoundLog,
  HeadView,
  LogEntry,
  LogFilter,
  LogStore,
} from './chainEvents.js';
export { type FilterCriteria, filterCriteriaArg, MAX_SUB_TOPICS, MAX_TOPICS } from './filterCriteria.js';
export {
  defaultFiltersOptions,
  type FilterChanges,
  Filters,
  type FiltersModules,
  type FiltersOptions,
} from './filters.js';
export {
  defaultRpcHandlerOptions,
  handleRpc,
  type RpcErrorObject,
  type RpcHandlerOptions,
  type RpcId,
  type RpcResponse,
  type RpcSession,
} from './handleRpc.js';
export type { Json, JsonObject } from './json.js';
export { BloomMatcher, logMatches } from './logFilter.js';
export { defaultLogQueryOptions, type LogQueryOptions } from './logQuery.js';
export { RevertError, revertReason } from './revertError.js';
export { RpcError, RpcErrorCode, rpcErrorOf } from './rpcError.js';
export {
  defaultRpcServerOptions,
  RpcServer,
  type RpcServerModules,
  type RpcServerOptions,
} from './rpcServer.js';
export {
  defaultSubscriptionsOptions,
  type SubscriptionKind,
  Subscriptions,
  type SubscriptionsModules,
  type SubscriptionsOptions,
} from './subscriptions.js';
export type { WsConnectionOptions } from './wsConnection.js';
