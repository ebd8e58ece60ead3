export { EdgeError, EdgeErrorCode, isEdgeError } from './edgeError.js';
export {
  channelOptions,
  FLOW_CONTROL_WINDOW,
  MAX_CHANNEL_MESSAGE_BYTES,
  widenServerWindows,
} from './flowControl.js';
export {
  defaultGrpcServerOptions,
  GrpcServer,
  type GrpcServerModules,
  type GrpcServerOptions,
  type MethodTable,
  type UnaryRpc,
  unaryRpc,
} from './grpcServer.js';
export {
  CallRefused,
  ERROR_CODE_TRAILER,
  type ErrorStatusRule,
  type GrpcStatus,
  grpcStatusMapping,
  statusName,
  toServiceError,
} from './grpcStatus.js';
export { HeadFeed, type HeadListener } from './headFeed.js';
export { streamHeads } from './headStream.js';
export { formatHostPort, type HostPort, parseHostPort } from './hostPort.js';
export { LOG_LEVELS, type Logger, type LogLevel, silentLogger } from './logger.js';
export { withSharedEncoding } from './messageBytes.js';
export {
  addProcessMetrics,
  Counter,
  Gauge,
  Histogram,
  type Labels,
  MetricsRegistry,
  ObservableCounter,
  REQUEST_SECONDS_BUCKETS,
  type Reading,
  type ReadMetric,
  type RequestMetrics,
  type Sample,
  secondsSince,
} from './metrics.js';
export { MetricsServer, type MetricsServerModules, type MetricsServerOptions } from './metricsServer.js';
export { createPino, pinoAdapter, routeGrpcLogs } from './pinoLogger.js';
export {
  advertisedAddress,
  COMMON_ROLE_OPTIONS,
  EXIT_FAILURE,
  EXIT_USAGE,
  loadRoleOptions,
  PARENT_PIPE_ENV,
  type RoleContext,
  type RoleSpec,
  type RunningRole,
  readJsonFile,
  roleProgram,
  runRole,
  STOP_DEADLINE_MS,
} from './roleCommand.js';
export {
  envOf,
  flagOf,
  mergeOptions,
  optionsFromEnv,
  optionsFromFile,
  type RawOptions,
  type RoleOption,
  read,
} from './roleOptions.js';
export { type UnaryMethod, unary } from './unary.js';
