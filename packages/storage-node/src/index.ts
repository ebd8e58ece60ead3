export { type ShardCount, ShardLayout } from '@monsoon/protocol';
export {
  type Checkpoint,
  CheckpointStore,
  type CheckpointStoreModules,
  type CheckpointStoreOptions,
  defaultCheckpointStoreOptions,
} from './checkpointStore.js';
export { crc32c } from './crc32c.js';
export { type Logger, silentLogger } from './logger.js';
export { CallRefused, ERROR_CODE_TRAILER, type GrpcStatus, grpcStatusOf } from './server/grpcStatus.js';
export { HeadFeed, type HeadListener, headOf } from './server/headFeed.js';
export { formatHostPort, type HostPort, parseHostPort } from './server/hostPort.js';
export {
  Counter,
  Gauge,
  Histogram,
  type Labels,
  MetricsRegistry,
  REQUEST_SECONDS_BUCKETS,
  type RequestMetrics,
  StorageMetrics,
} from './server/metrics.js';
export {
  MetricsServer,
  type MetricsServerModules,
  type MetricsServerOptions,
} from './server/metricsServer.js';
export {
  defaultStorageServerOptions,
  type ServerLogger,
  StorageServer,
  type StorageServerModules,
  type StorageServerOptions,
} from './server/storageServer.js';
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
