export {
  type Checkpoint,
  CheckpointStore,
  type CheckpointStoreModules,
  type CheckpointStoreOptions,
  defaultCheckpointStoreOptions,
} from './checkpointStore.js';
export { crc32c } from './crc32c.js';
export { type Genesis, type GenesisAccount, genesisHeader, parseGenesis } from './genesis.js';
export { type Logger, silentLogger } from './logger.js';
export { type ShardCount, ShardLayout } from './shardLayout.js';
export { ShardState } from './shardState.js';
export { isStorageError, StorageError, StorageErrorCode } from './storageError.js';
export {
  type DurabilityOptions,
  defaultStorageNodeOptions,
  StorageNode,
  type StorageNodeModules,
  type StorageNodeOptions,
} from './storageNode.js';
export {
  defaultVersionStoreOptions,
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
