/**
 * The options of `monsoon storage`, from flags and an optional JSON config file (flags win),
 * checked and defaulted. Every refusal is a BAD_ARGUMENT error (a StorageError, or the edge's
 * EdgeError for an address that is not host:port) whose message names the option, what was
 * expected and what was found.
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import { LOG_LEVELS, type LogLevel, parseHostPort } from '@monsoon/edge';
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
}

/** The option names, as in a config file (camelCase; the kebab-case flag names are accepted too). */
export const CONFIG_KEYS = [
  'genesis',
  'shards',
  'shardCount',
  'listen',
  'dataDir',
  'fsync',
  'checkpointEvery',
  'window',
  'forkWindow',
  'metrics',
  'logLevel',
  'maxMessageBytes',
  'maxBatch',
] as const;
type ConfigKey = (typeof CONFIG_KEYS)[number];

/** Raw option values: strings from flags, JSON values from a config file. */
export type RawOptions = Partial<Record<ConfigKey, unknown>>;

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
};

function bad(option: string, expected: string, found: unknown): never {
  throw new StorageError(
    StorageErrorCode.BadArgument,
    `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: expected ${expected}, found ${JSON.stringify(found)}`,
    { option },
  );
}

function str(v: unknown, option: string): string {
  if (typeof v !== 'string' || v.trim() === '') bad(option, 'a non-empty string', v);
  return v.trim();
}

function int(v: unknown, option: string, min: number): number {
  const n =
    typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min) bad(option, `an integer >= ${min}`, v);
  return n;
}

function oneOf<T extends string>(v: unknown, option: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) bad(option, values.join(' | '), v);
  return v as T;
}

/** `camelCase` for `kebab-case` keys. */
function camel(k: string): string {
  return k.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * A parsed config file: an object whose keys are option names (camelCase or kebab-case).
 * Relative paths in it (genesis, dataDir) are relative to the file's directory.
 */
export function configFromFile(doc: unknown, file: string): RawOptions {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new StorageError(StorageErrorCode.BadArgument, `config ${file}: expected a JSON object`);
  }
  const out: RawOptions = {};
  for (const [k, v] of Object.entries(doc)) {
    const key = camel(k);
    if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `config ${file}: unknown option "${k}"; expected one of ${CONFIG_KEYS.join(', ')}`,
      );
    }
    let value = v;
    if ((key === 'genesis' || key === 'dataDir') && typeof v === 'string' && v !== '' && !isAbsolute(v)) {
      value = resolve(dirname(file), v);
    }
    out[key as ConfigKey] = value;
  }
  return out;
}

/** Flags over config over defaults, checked. */
export function resolveStorageConfig(flags: RawOptions, config: RawOptions = {}): StorageCliConfig {
  const pick = (k: ConfigKey): unknown => flags[k] ?? config[k];
  const genesisRaw = pick('genesis');
  if (genesisRaw === undefined) {
    throw new StorageError(
      StorageErrorCode.BadArgument,
      '--genesis <file> is required (or "genesis" in the --config file)',
      { option: 'genesis' },
    );
  }
  const shardCountRaw = pick('shardCount') ?? defaultStorageCliOptions.shardCount;
  const shardCount = int(shardCountRaw, 'shardCount', 0);
  if (shardCount !== 16 && shardCount !== 256) bad('shardCount', '16 | 256', shardCountRaw);
  const layout = new ShardLayout(shardCount);

  const shardsRaw = pick('shards') ?? defaultStorageCliOptions.shards;
  const shardSpec = Array.isArray(shardsRaw)
    ? shardsRaw.map((s) => int(s, 'shards', 0)).join(',')
    : str(shardsRaw, 'shards');
  let shards: number[];
  try {
    shards = layout.parse(shardSpec);
  } catch {
    bad('shards', `all, or shards and ranges within 0-${layout.count - 1} (e.g. 0-3,8)`, shardsRaw);
  }
  if (shards.length === 0) bad('shards', 'at least one shard', shardsRaw);

  const listen = str(pick('listen') ?? defaultStorageCliOptions.listen, 'listen');
  parseHostPort(listen, '--listen');
  const metricsRaw = pick('metrics');
  let metrics: string | undefined;
  if (metricsRaw !== undefined && metricsRaw !== 'off' && metricsRaw !== '') {
    metrics = str(metricsRaw, 'metrics');
    parseHostPort(metrics, '--metrics');
  }
  const dataDir = str(
    pick('dataDir') ?? `./data/storage-${shardSpec.replace(/[^0-9a-zA-Z-]+/g, '_')}`,
    'dataDir',
  );

  return {
    genesis: str(genesisRaw, 'genesis'),
    shardSpec,
    shards,
    shardCount,
    listen,
    dataDir,
    fsync: oneOf(pick('fsync') ?? defaultStorageCliOptions.fsync, 'fsync', FSYNC),
    checkpointEvery: int(
      pick('checkpointEvery') ?? defaultStorageCliOptions.checkpointEvery,
      'checkpointEvery',
      0,
    ),
    window: int(pick('window') ?? defaultStorageCliOptions.window, 'window', 1),
    forkWindow: int(pick('forkWindow') ?? defaultStorageCliOptions.forkWindow, 'forkWindow', 0),
    metrics,
    logLevel: oneOf(pick('logLevel') ?? defaultStorageCliOptions.logLevel, 'logLevel', LOG_LEVELS),
    maxMessageBytes: int(
      pick('maxMessageBytes') ?? defaultStorageCliOptions.maxMessageBytes,
      'maxMessageBytes',
      1,
    ),
    maxBatch: int(pick('maxBatch') ?? defaultStorageCliOptions.maxBatch, 'maxBatch', 1),
  };
}
