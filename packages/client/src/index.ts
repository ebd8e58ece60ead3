export { ChainView, type ClientBlock, clientBlockOf, decodeReceipt, type TxLocation } from './chain.js';
export { CLIENT_OPTIONS, type ClientRoleConfig, clientRole, runClient } from './cli/clientCommand.js';
export {
  Client,
  type ClientCounters,
  type ClientOptions,
  defaultClientOptions,
  MinerRefused,
} from './client.js';
export { ClientError, ClientErrorCode, isClientError } from './clientError.js';
export { ClientMetrics } from './clientMetrics.js';
export { ClientServer } from './clientServer.js';
export { type FetchCounters, RemoteState, type RemoteStateOptions, type StateRef } from './remoteState.js';
export * from './rpc/index.js';
export { ShardedStorage, type ShardedStorageOptions, type StorageReplica } from './shardedStorage.js';
export { type Speculation, speculate } from './speculate.js';
