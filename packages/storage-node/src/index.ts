export {
  type Checkpoint,
  CheckpointStore,
  type CheckpointStoreModules,
  type CheckpointStoreOptions,
  defaultCheckpointStoreOptions,
} from './checkpointStore.js';
export { crc32c } from './crc32c.js';
export { type Logger, silentLogger } from './logger.js';
export { isStorageError, StorageError, StorageErrorCode } from './storageError.js';
export {
  defaultWriteAheadLogOptions,
  type FsyncPolicy,
  type WalRecord,
  WriteAheadLog,
  type WriteAheadLogModules,
  type WriteAheadLogOptions,
} from './writeAheadLog.js';
