export { createAccessList, MAX_ACCESS_LIST_RUNS } from './accessList.js';
export {
  CHAIN_TX_CAP_FLOOR,
  ChainView,
  type ChainViewOptions,
  type ClientBlock,
  clientBlockOf,
  decodeReceipt,
  defaultChainViewOptions,
  type TxLocation,
} from './chain.js';
export {
  ChainFollower,
  type ChainFollowerModules,
  type ChainFollowerOptions,
  defaultChainFollowerOptions,
  SYNC_FROM,
  type SyncFrom,
} from './chainFollower.js';
export { CLIENT_OPTIONS, type ClientRoleConfig, clientRole, runClient } from './cli/clientCommand.js';
export {
  Client,
  type ClientCounters,
  type ClientOptions,
  defaultClientOptions,
  MinerRefused,
} from './client.js';
export { ClientError, ClientErrorCode, isClientError } from './clientError.js';
export {
  ClientEvents,
  type ClientEventsModules,
  type ClientEventsOptions,
  defaultClientEventsOptions,
} from './clientEvents.js';
export { ClientMetrics } from './clientMetrics.js';
export { ClientServer } from './clientServer.js';
export { genesisHashInWorker, genesisHashOf } from './genesisHash.js';
export { blockLogsOf, defaultLogIndexOptions, LogIndex, type LogIndexOptions } from './logIndex.js';
export { MinerPool } from './minerPool.js';
export {
  defaultPoolSubmitterOptions,
  type PooledTx,
  PoolSubmitter,
  type PoolSubmitterModules,
  type PoolSubmitterOptions,
  type SendWait,
} from './poolSubmitter.js';
export {
  decodeWithSender,
  decodeWithSenders,
  defaultReadBackendOptions,
  MIN_CLAIMED_KEYS_BATCH,
  nextEnv,
  ReadBackend,
  type ReadBackendModules,
  type ReadBackendOptions,
  stateAt,
} from './readBackend.js';
export {
  type AccountRead,
  type FetchCounters,
  PathWitness,
  type ReadTree,
  RemoteState,
  type RemoteStateOptions,
  type StateRef,
  type WithStateOptions,
  type Witness,
} from './remoteState.js';
export * from './rpc/index.js';
export { ShardedStorage, type ShardedStorageOptions, type StorageReplica } from './shardedStorage.js';
export {
  defaultSlotPredictorOptions,
  KEY_WORDS,
  MAX_MAPPING_SLOT,
  SlotPredictor,
  type SlotPredictorOptions,
} from './slotPredictor.js';
export { engineOf, firstReads, plainTransfer, type Speculation, speculate } from './speculate.js';
export {
  type OneSidedAnswer,
  type OneSidedCounters,
  type OneSidedReads,
  openStorageTransport,
  RDMA_STAGING_BYTES,
  RdmaReads,
  ShmReads,
  STORAGE_TRANSPORTS,
  type StorageTransportKind,
} from './storageTransport.js';
export {
  defaultSubmitQueueOptions,
  type SubmitCounters,
  SubmitQueue,
  type SubmitQueueModules,
  type SubmitQueueOptions,
} from './submitQueue.js';
export {
  type Admission,
  defaultTxPoolOptions,
  isReplacement,
  type PoolAccount,
  type PoolEntry,
  type PoolTx,
  type PoolTxState,
  TxPool,
  type TxPoolModules,
  type TxPoolOptions,
} from './txPool.js';
export { asGethRefusal, withoutCode } from './txRefusal.js';
