export { type ShardCount, ShardLayout } from '@monsoon/protocol';
export {
  type Checkpoint,
  CheckpointStore,
  type CheckpointStoreModules,
  type CheckpointStoreOptions,
  defaultCheckpointStoreOptions,
} from './checkpointStore.js';
export { LEVELDB_OPTIONS, type LeveldbRoleConfig, leveldbRole, runLeveldb } from './cli/leveldbCommand.js';
export { runStorage, type StorageRoleConfig, storageRole } from './cli/storageCommand.js';
export { STORAGE_OPTIONS, type StorageCliConfig } from './cli/storageConfig.js';
export { crc32c } from './crc32c.js';
export {
  connectRemoteNodeDb,
  DEFAULT_LEVELDB_CACHE_BYTES,
  defaultRemoteNodeDbOptions,
  type LocalNodeDbOptions,
  leveldbCacheFor,
  type NodeDb,
  openLocalNodeDb,
  type RemoteNodeDbOptions,
} from './nodeStore/levelNodeStore.js';
export {
  defaultMemoryGovernorOptions,
  type GovernorState,
  MemoryGovernor,
  type MemoryGovernorOptions,
  type MemorySample,
  rssAnonBytes,
} from './nodeStore/memoryGovernor.js';
export { CACHE_ENTRY_OVERHEAD, ENTRY_HEADER, NodeCache } from './nodeStore/nodeCache.js';
export type { NodeFaults } from './nodeStore/nodeFaults.js';
export {
  forEachChildOnPath,
  nextOnPath,
  PATH_INDEX_KEY,
  PATH_KEY_BYTES,
  PATH_TAG,
  pathKey,
  pathValue,
} from './nodeStore/pathRecords.js';
export { defaultRdmaExportOptions, RdmaExport, type RdmaExportOptions } from './nodeStore/rdmaExport.js';
export {
  defaultRegionExportOptions,
  RegionExport,
  type RegionExportOptions,
  type RegionInfo,
} from './nodeStore/regionExport.js';
export { CHUNK_SLABS, SLAB_BYTES, SlabPool } from './nodeStore/slabPool.js';
export {
  CACHE_SHARE,
  defaultTieredStoreOptions,
  type TieredCounters,
  type TieredStats,
  TieredStore,
  type TieredStoreModules,
  type TieredStoreOptions,
} from './nodeStore/tieredStore.js';
export type { FreshNode, VersionObserver } from './nodeStore/versionObserver.js';
export {
  defaultReplicaSyncOptions,
  ReplicaSync,
  type ReplicaSyncCounters,
  type ReplicaSyncModules,
  type ReplicaSyncOptions,
} from './replicaSync.js';
export { grpcStatusOf } from './server/grpcStatus.js';
export { StorageMetrics } from './server/storageMetrics.js';
export {
  defaultStorageServerOptions,
  headOf,
  MAX_BLOCK_UPDATES,
  StorageServer,
  type StorageServerModules,
  type StorageServerOptions,
} from './server/storageServer.js';
export { ShardState } from './shardState.js';
export { decodeCheckpoint, encodeCheckpoint } from './stateCheckpoint.js';
export { isStorageError, StorageError, StorageErrorCode } from './storageError.js';
export {
  type DurabilityOptions,
  defaultStorageNodeOptions,
  StorageNode,
  type StorageNodeModules,
  type StorageNodeOptions,
} from './storageNode.js';
export {
  type GenesisAccounts,
  type GenesisSink,
  type PlacedNode,
  type StreamGenesisOptions,
  streamGenesis,
} from './streamGenesis.js';
export {
  defaultVersionStoreOptions,
  VERSION_CAP_FLOOR,
  type Version,
  VersionStore,
  type VersionStoreOptions,
} from './versionStore.js';
export {
  defaultWriteAheadLogOptions,
  type FsyncPolicy,
  type WalRecord,
  WriteAheadLog,
  type WriteAheadLogModules,
  type WriteAheadLogOptions,
} from './writeAheadLog.js';
