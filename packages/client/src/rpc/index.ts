export type {
  AccessListEntry,
  AccountProofView,
  BlockTag,
  BlockView,
  CallRequest,
  FeeHistoryView,
  NamedBlockTag,
  ReceiptView,
  RpcBackend,
  StorageProofView,
  TransactionView,
} from './backend.js';
export {
  defaultRpcHandlerOptions,
  handleRpc,
  type RpcErrorObject,
  type RpcHandlerOptions,
  type RpcId,
  type RpcResponse,
} from './handleRpc.js';
export type { Json, JsonObject } from './json.js';
export { RevertError, revertReason } from './revertError.js';
export { RpcError, RpcErrorCode, rpcErrorOf } from './rpcError.js';
export {
  defaultRpcServerOptions,
  RpcServer,
  type RpcServerModules,
  type RpcServerOptions,
} from './rpcServer.js';
