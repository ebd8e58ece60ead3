/**
 * The options of `monsoon storage`, from flags and an optional JSON config file (flags win),
 * checked and defaulted. Every refusal is a BAD_ARGUMENT error (a StorageError, or the edge's
 * EdgeError for an address that is not host:port) whose message names the option, what was
 * expected and what was found.
 */
import {
  flagOf,
  LOG_LEVELS,
  type LogLevel,
  mergeOptions,
  optionsFromFile,
  type RawOptions,
  type RoleOption,
  read,
} from '@monsoon/edge';
import { ShardLayout } from '@monsoon/protocol';
import { defaultStorageServerOptions } from '../server/storageServer.js';
import { StorageError, StorageErrorCode } from '../storageError.js';
import { defaultStorageNodeOptions } from '../storageNode.js';
import type { FsyncPolicy } from '../writeAheadLog.js';

const FSYNC = ['always', 'group', 'none'] as const;

/** Everything the storage process runs with. */
export interface StorageCliConfig {
  /** Path of the geth-style genesis.json. */
  genesis: string;
  /** The shard selection as given ("all", "0-7", …) and as shard numbers. */
  shardSpec: string;
  shards: number[];
  shardCount: 16 | 256;
  /** gRPC `host:port`. */
  listen: string;
  dataDir: string;
  fsync: FsyncPolicy;
  /** A checkpoint every this many blocks; 0 = never. */
  checkpointEvery: number;
  window: number;
  forkWindow: number;
  /** Prometheus `/metrics` `host:port`, or undefined for none. */
  metrics: string | undefined;
  logLevel: LogLevel;
  maxMessageBytes: number;
  maxBatch: number;
  maxNodes: number;
}

/** The role's own options (`config`, `logLevel` and `advertise` are every role's: `@monsoon/edge`). */
export const STORAGE_OPTIONS: readonly RoleOption[] = [
  { name: 'genesis', arg: '<file>', description: 'geth-style genesis.json (required)', path: true },
  { name: 'shards', arg: '<spec>', description: 'shards held: all, 3, 0-7, 0-3,8 (default: all)' },
  { name: 'shardCount', arg: '<n>', description: '16 or 256 (default: 16)' },
  {
    name: 'listen',
    arg: '<host:port>',
    description: 'gRPC address, port 0 = any free port (default: 127.0.0.1:50051)',
  },
  {
    name: 'dataDir',
    arg: '<dir>',
    description: 'write-ahead log and node.json (default: ./data/storage-<shards>)',
    path: true,
  },
  {
    name: 'fsync',
    arg: '<policy>',
    description: 'log fsync policy: always | group | none (default: always)',
  },
  {
    name: 'checkpointEvery',
    arg: '<n>',
    description: 'a checkpoint every n blocks, 0 = never (default: 1024)',
  },
  { name: 'window', arg: '<n>', description: "blocks of history kept on the head's chain (default: 256)" },
  {
    name: 'forkWindow',
    arg: '<n>',
    description: 'blocks a losing fork is kept below the head (default: 64)',
  },
  {
    name: 'metrics',
    arg: '<host:port>',
    description: 'serve Prometheus text at http://<host:port>/metrics (default: off)',
  },
  { name: 'maxMessageBytes', arg: '<n>', description: 'largest gRPC request accepted (default: 64 MiB)' },
  {
    name: 'maxBatch',
    arg: '<n>',
    description: `most BatchGet queries or slots (default: ${defaultStorageServerOptions.maxBatchQueries})`,
  },
  {
    name: 'maxNodes',
    arg: '<n>',
    description: `most GetNodes hashes (default: ${defaultStorageServerOptions.maxNodes})`,
  },
];

export const defaultStorageCliOptions = {
  shards: 'all',
  shardCount: 16,
  listen: '127.0.0.1:50051',
  fsync: 'always' as FsyncPolicy,
  checkpointEvery: 1024,
  window: defaultStorageNodeOptions.window,
  forkWindow: defaultStorageNodeOptions.forkWindow,
  logLevel: 'info' as LogLevel,
  maxMessageBytes: defaultStorageServerOptions.maxReceiveMessageBytes,
  maxBatch: defaultStorageServerOptions.maxBatchQueries,
  maxNodes: defaultStorageServerOptions.maxNodes,
};

function bad(option: string, expected: string, found: unknown): never {
  throw new StorageError(
    StorageErrorCode.BadArgument,
    `${flagOf(option)}: expected ${expected}, found ${JSON.stringify(found)}`,
    { option },
  );
}

/** A parsed config file (see `optionsFromFile`): relative paths in it are relative to its folder. */
export function configFromFile(doc: unknown, file: string): RawOptions {
  return optionsFromFile(doc, file, [...STORAGE_OPTIONS, { name: 'logLevel', description: '' }]);
}

/** Flags over config over defaults, checked. */
export function resolveStorageConfig(flags: RawOptions, config: RawOptions = {}): StorageCliConfig {
  const raw = mergeOptions(flags, config);
  const pick = (k: string): unknown => raw[k];
  const genesisRaw = pick('genesis');
  if (genesisRaw === undefined) {
    throw new StorageError(
      StorageErrorCode.BadArgument,
      '--genesis <file> is required (or "genesis" in the --config file)',
      { option: 'genesis' },
    );
  }
  const shardCountRaw = pick('shardCount') ?? defaultStorageCliOptions.shardCount;
  const shardCount = read.int(shardCountRaw, 'shardCount', 0);
  if (shardCount !== 16 && shardCount !== 256) bad('shardCount', '16 | 256', shardCountRaw);
  const layout = new ShardLayout(shardCount);

  const shardsRaw = pick('shards') ?? defaultStorageCliOptions.shards;
  const shardSpec = Array.isArray(shardsRaw)
    ? shardsRaw.map((s) => read.int(s, 'shards', 0)).join(',')
    : read.str(shardsRaw, 'shards');
  let shards: number[];
  try {
    shards = layout.parse(shardSpec);
  } catch {
    bad('shards', `all, or shards and ranges within 0-${layout.count - 1} (e.g. 0-3,8)`, shardsRaw);
  }
  if (shards.length === 0) bad('shards', 'at least one shard', shardsRaw);

  const listen = read.hostPort(pick('listen') ?? defaultStorageCliOptions.listen, 'listen');
  const metrics = read.optionalHostPort(pick('metrics'), 'metrics');
  const dataDir = read.str(
    pick('dataDir') ?? `./data/storage-${shardSpec.replace(/[^0-9a-zA-Z-]+/g, '_')}`,
    'dataDir',
  );

  return {
    genesis: read.str(genesisRaw, 'genesis'),
    shardSpec,
    shards,
    shardCount,
    listen,
    dataDir,
    fsync: read.oneOf(pick('fsync') ?? defaultStorageCliOptions.fsync, 'fsync', FSYNC),
    checkpointEvery: read.int(
      pick('checkpointEvery') ?? defaultStorageCliOptions.checkpointEvery,
      'checkpointEvery',
      0,
    ),
    window: read.int(pick('window') ?? defaultStorageCliOptions.window, 'window', 1),
    forkWindow: read.int(pick('forkWindow') ?? defaultStorageCliOptions.forkWindow, 'forkWindow', 0),
    metrics,
    logLevel: read.oneOf(pick('logLevel') ?? defaultStorageCliOptions.logLevel, 'logLevel', LOG_LEVELS),
    maxMessageBytes: read.int(
      pick('maxMessageBytes') ?? defaultStorageCliOptions.maxMessageBytes,
      'maxMessageBytes',
      1,
    ),
    maxBatch: read.int(pick('maxBatch') ?? defaultStorageCliOptions.maxBatch, 'maxBatch', 1),
    maxNodes: read.int(pick('maxNodes') ?? defaultStorageCliOptions.maxNodes, 'maxNodes', 1),
  };
}
