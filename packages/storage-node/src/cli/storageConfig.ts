/**
 * The options of `monsoon storage`, from flags and an optional JSON config file (flags win),
 * checked and defaulted. Every refusal is a BAD_ARGUMENT error (a StorageError, or the edge's
 * EdgeError for an address that is not host:port) whose message names the option, what was
 * expected and what was found.
 */

import { resolve } from 'node:path';
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
import { defaultReplicaSyncOptions } from '../replicaSync.js';
import { defaultStorageServerOptions } from '../server/storageServer.js';
import { StorageError, StorageErrorCode } from '../storageError.js';
import { defaultStorageNodeOptions } from '../storageNode.js';
import { VERSION_CAP_FLOOR } from '../versionStore.js';
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
  checkpointDepth: number;
  window: number;
  forkWindow: number;
  maxVersionUpdates: number;
  /** Prometheus `/metrics` `host:port`, or undefined for none. */
  metrics: string | undefined;
  logLevel: LogLevel;
  maxMessageBytes: number;
  maxBatch: number;
  /** `memory` (every node in memory) or `tiered` (cold nodes in LevelDB). */
  backend: 'memory' | 'tiered';
  /** Tiered: bytes of memory for trie nodes. */
  memoryBudget: number;
  /** Tiered: `host:port` of a LevelDB role; undefined = a LevelDB in this process, in `<dataDir>/leveldb`. */
  leveldb: string | undefined;
  /** The node region file for one-sided reads (e.g. /dev/shm/monsoon-s0.region); undefined: none. */
  exportRegion: string | undefined;
  /** The region's arena, MiB. */
  regionMb: number;
  /** Register the exported region with this RDMA device for clients' READs; undefined: no RDMA. */
  rdmaDevice: string | undefined;
  maxNodes: number;
  /** The other replicas of these shards to catch up from (`host:port`); empty: none. */
  replicas: string[];
  /** How often the replicas' heads are compared with this node's (ms). */
  syncInterval: number;
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
  {
    name: 'checkpointDepth',
    arg: '<n>',
    description:
      'checkpoint a block once the head is n past it, and join a replica n below its peer (default: 16; forks deeper than n strand a restart)',
  },
  { name: 'window', arg: '<n>', description: "blocks of history kept on the head's chain (default: 256)" },
  {
    name: 'forkWindow',
    arg: '<n>',
    description: 'blocks a losing fork is kept below the head (default: 64)',
  },
  {
    name: 'maxVersionUpdates',
    arg: '<n>',
    description: `account updates the head chain's versions hold at most: beyond it the oldest go too, down to ${VERSION_CAP_FLOOR} blocks (default: ${defaultStorageNodeOptions.maxVersionUpdates})`,
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
  {
    name: 'backend',
    arg: '<kind>',
    description: 'memory (every trie node in memory) | tiered (cold nodes in LevelDB) (default: memory)',
  },
  {
    name: 'memoryBudget',
    arg: '<bytes>',
    description:
      'tiered: memory the process may grow by for its state (+20%, held by sampling its RSS), e.g. 2GiB, 512MiB, 1e9 (default: 2GiB)',
  },
  {
    name: 'leveldb',
    arg: '<host:port>',
    description:
      'tiered: the LevelDB role (monsoon node leveldb) to use (default: one in <data-dir>/leveldb)',
  },
  {
    name: 'exportRegion',
    arg: '<file>',
    description:
      "export the held versions' nodes in a region file clients on this host map for one-sided reads, e.g. /dev/shm/monsoon-s0.region (default: off)",
    path: true,
  },
  {
    name: 'regionMb',
    arg: '<n>',
    description: "the exported region's node arena, MiB (default: 2048; RAM is taken as it fills)",
  },
  {
    name: 'rdmaDevice',
    arg: '<name>',
    description:
      'also serve the exported region to RDMA readers through this device (ibv_devices; clients connect over gRPC ConnectRdma); needs --export-region (default: off)',
  },
  {
    name: 'replicas',
    arg: '<host:port,…>',
    description:
      'other replicas of the same shards: a node behind (or new) catches up from them, by blocks or from a checkpoint (default: none)',
  },
  {
    name: 'syncInterval',
    arg: '<ms>',
    description: `how often the replicas' heads are compared with this node's (default: ${defaultReplicaSyncOptions.intervalMs})`,
  },
];

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
};

/** A byte count: a number with an optional unit (`2GiB`, `512MiB`, `1e9`, `64kb`). */
export function parseBytes(v: unknown, option: string): number {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?(?:e[0-9]+)?)\s*([a-zA-Z]*)\s*$/.exec(String(v));
  const unit = m === null ? undefined : UNITS[m[2]!.toLowerCase()];
  const n = m === null || unit === undefined ? Number.NaN : Math.floor(Number(m[1]) * unit);
  if (!Number.isSafeInteger(n) || n < 1) bad(option, 'a positive byte count such as 2GiB, 512MiB or 1e9', v);
  return n;
}

export const defaultStorageCliOptions = {
  shards: 'all',
  shardCount: 16,
  listen: '127.0.0.1:50051',
  fsync: 'always' as FsyncPolicy,
  checkpointEvery: 1024,
  checkpointDepth: 16,
  window: defaultStorageNodeOptions.window,
  forkWindow: defaultStorageNodeOptions.forkWindow,
  maxVersionUpdates: defaultStorageNodeOptions.maxVersionUpdates,
  logLevel: 'info' as LogLevel,
  maxMessageBytes: defaultStorageServerOptions.maxReceiveMessageBytes,
  maxBatch: defaultStorageServerOptions.maxBatchQueries,
  backend: 'memory' as const,
  memoryBudget: '2GiB',
  regionMb: 2048,
  maxNodes: defaultStorageServerOptions.maxNodes,
  syncInterval: defaultReplicaSyncOptions.intervalMs,
};

function bad(option: string, expected: string, found: unknown): never {
  throw new StorageError(
    StorageErrorCode.BadArgument,
    `${flagOf(option)}: expected ${expected}, found ${JSON.stringify(found)}`,
    { option },
  );
}

/** `auto`, or a path resolved against the working directory (a config file's are against its folder). */
function exportRegionOf(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  const s = read.str(v, 'exportRegion');
  return s === 'auto' ? s : resolve(s);
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
    checkpointDepth: read.int(
      pick('checkpointDepth') ?? defaultStorageCliOptions.checkpointDepth,
      'checkpointDepth',
      1,
    ),
    window: read.int(pick('window') ?? defaultStorageCliOptions.window, 'window', 1),
    forkWindow: read.int(pick('forkWindow') ?? defaultStorageCliOptions.forkWindow, 'forkWindow', 0),
    maxVersionUpdates: read.int(
      pick('maxVersionUpdates') ?? defaultStorageCliOptions.maxVersionUpdates,
      'maxVersionUpdates',
      1,
    ),
    metrics,
    logLevel: read.oneOf(pick('logLevel') ?? defaultStorageCliOptions.logLevel, 'logLevel', LOG_LEVELS),
    maxMessageBytes: read.int(
      pick('maxMessageBytes') ?? defaultStorageCliOptions.maxMessageBytes,
      'maxMessageBytes',
      1,
    ),
    maxBatch: read.int(pick('maxBatch') ?? defaultStorageCliOptions.maxBatch, 'maxBatch', 1),
    backend: read.oneOf(pick('backend') ?? defaultStorageCliOptions.backend, 'backend', [
      'memory',
      'tiered',
    ] as const),
    memoryBudget: parseBytes(pick('memoryBudget') ?? defaultStorageCliOptions.memoryBudget, 'memoryBudget'),
    leveldb: read.optionalHostPort(pick('leveldb'), 'leveldb'),
    exportRegion: exportRegionOf(pick('exportRegion')),
    regionMb: read.int(pick('regionMb') ?? defaultStorageCliOptions.regionMb, 'regionMb', 1),
    rdmaDevice: pick('rdmaDevice') === undefined ? undefined : read.str(pick('rdmaDevice'), 'rdmaDevice'),
    maxNodes: read.int(pick('maxNodes') ?? defaultStorageCliOptions.maxNodes, 'maxNodes', 1),
    replicas: pick('replicas') === undefined ? [] : read.hostPorts(pick('replicas'), 'replicas'),
    syncInterval: read.int(pick('syncInterval') ?? defaultStorageCliOptions.syncInterval, 'syncInterval', 1),
  };
}
