/**
 * A topology: what a local cluster is made of — how many storage processes hold the shards
 * (and how many replicas of each shard group), how many miners and clients, how the genesis
 * is generated — as a JSON file in `deploy/topologies/`. Every key is optional (defaults in
 * {@link defaultTopology}); an unknown key or a value out of range is an error naming it.
 */
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { LOG_LEVELS, type LogLevel } from '@monsoon/edge';
import { ClusterError, ClusterErrorCode } from './clusterError.js';
import { checkRegions, type RegionTopology } from './regionTopology.js';
import { Checker } from './topologyChecker.js';

/** The storage nodes' write-ahead log fsync policy (`--fsync`). */
export type FsyncPolicy = 'always' | 'group' | 'none';
export const FSYNC_POLICIES: readonly FsyncPolicy[] = ['always', 'group', 'none'];

/** The storage processes. */
export interface StorageTopology {
  /** Storage processes in all: shard groups × replicas. */
  readonly processes: number;
  /** Processes holding each shard group (1 = no replicas); divides `processes`. */
  readonly replicas: number;
  /** `--fsync` of every storage process. */
  readonly fsync: FsyncPolicy;
  /** More flags for every storage process (not one the cluster sets itself). */
  readonly args: readonly string[];
}

/** The miners: peered with each other, each sending every block to every storage process. */
export interface MinerTopology {
  readonly count: number;
  /** `--block-interval`: a block is sealed this often. */
  readonly blockIntervalMs: number;
  /** `--retention` r: top-layer levels the miners keep; the clients leave the same levels out of bags. */
  readonly retention: number;
  /** `--difficulty`: proof-of-work difficulty, 0 = none. */
  readonly difficulty: number;
  /**
   * Gas a block may hold, in a generated genesis (the chain's rule; Ethereum's 30M by default).
   * A pending block that reaches it is sealed at once, before the interval is up.
   */
  readonly blockGasLimit: number;
  /** More flags for every miner. */
  readonly args: readonly string[];
}

/** The clients: each follows every miner and reads from every storage process. */
export interface ClientTopology {
  readonly count: number;
  /** More flags for every client. */
  readonly args: readonly string[];
}

/** A validated topology (see {@link parseTopology}). */
export interface Topology {
  /** Names the cluster in messages; defaults to the file's base name. */
  readonly name: string;
  /** Free text for whoever reads the file. */
  readonly description: string;
  /** 16 or 256 shards (one or two nibbles of the account key). */
  readonly shardCount: 16 | 256;
  /** Accounts in a generated genesis (when no genesis file is given). */
  readonly accounts: number;
  /** The accounts' seed (UTF-8): the same seed and count give the same keys, so a load generator can sign for them. */
  readonly seed: string;
  /** Every process serves Prometheus metrics on a port of its own. */
  readonly metrics: boolean;
  /** `--log-level` of every process. */
  readonly logLevel: LogLevel;
  readonly storage: StorageTopology;
  readonly miners: MinerTopology;
  readonly clients: ClientTopology;
  /**
   * Where each process lives and the round-trip time between regions, emulated on this machine
   * (see `RegionTopology`); without it every process talks to every other directly.
   */
  readonly regions?: RegionTopology;
}

/** What a key left out of a topology file becomes: a minimal cluster, one of each role. */
export const defaultTopology: Topology = {
  name: 'cluster',
  description: '',
  shardCount: 16,
  accounts: 1_000,
  seed: 'monsoon',
  metrics: true,
  logLevel: 'info',
  storage: { processes: 1, replicas: 1, fsync: 'always', args: [] },
  miners: {
    count: 1,
    blockIntervalMs: 1_000,
    retention: 2,
    difficulty: 0,
    blockGasLimit: 30_000_000,
    args: [],
  },
  clients: { count: 1, args: [] },
};

/** Largest number of each role a topology may ask for. */
export const MAX_MINERS = 16;
export const MAX_CLIENTS = 64;
export const MAX_ACCOUNTS = 100_000_000;

/** Flags each role gets from the cluster itself, which `args` may not repeat. */
export const MANAGED_FLAGS: Readonly<Record<'storage' | 'miners' | 'clients', readonly string[]>> = {
  storage: [
    '--config',
    '--genesis',
    '--shards',
    '--shard-count',
    '--listen',
    '--data-dir',
    '--fsync',
    '--metrics',
    '--log-level',
  ],
  miners: [
    '--genesis',
    '--listen',
    '--storage',
    '--peers',
    '--coinbase',
    '--retention',
    '--difficulty',
    '--block-interval',
    '--shard-count',
    '--metrics',
    '--log-level',
  ],
  clients: [
    '--genesis',
    '--miners',
    '--storage',
    '--rpc',
    '--grpc',
    '--compact-levels',
    '--metrics',
    '--log-level',
  ],
};

const TOP_KEYS = [
  '$schema',
  'name',
  'description',
  'shardCount',
  'accounts',
  'seed',
  'metrics',
  'logLevel',
  'storage',
  'miners',
  'clients',
  'regions',
];

/**
 * Checks a topology document (a parsed JSON file, or an object built in code) and fills in the
 * defaults. Throws one {@link ClusterErrorCode.BadTopology} error listing every problem, each
 * as `path: expected …, found …`, prefixed with `source`.
 */
export function parseTopology(doc: unknown, source = 'topology'): Topology {
  const c = new Checker();
  const d = defaultTopology;
  const top = c.object('', doc, TOP_KEYS) ?? {};
  const shardCount = c.oneOf('shardCount', top.shardCount, d.shardCount, [16, 256] as const);

  const s =
    top.storage === undefined
      ? {}
      : c.object('storage', top.storage, ['processes', 'replicas', 'fsync', 'args']);
  const replicas = c.integer('storage.replicas', s?.replicas, d.storage.replicas, 1, 16);
  const processes = c.integer('storage.processes', s?.processes, replicas, 1, shardCount * replicas);
  if (processes % replicas !== 0) {
    c.issues.push(
      `storage.processes: expected a multiple of storage.replicas (${replicas}), found ${processes}`,
    );
  }
  const storage: StorageTopology = {
    processes,
    replicas,
    fsync: c.oneOf('storage.fsync', s?.fsync, d.storage.fsync, FSYNC_POLICIES),
    args: c.args('storage.args', s?.args, MANAGED_FLAGS.storage),
  };

  const m =
    top.miners === undefined
      ? {}
      : c.object('miners', top.miners, [
          'count',
          'blockIntervalMs',
          'retention',
          'difficulty',
          'blockGasLimit',
          'args',
        ]);
  const miners: MinerTopology = {
    count: c.integer('miners.count', m?.count, d.miners.count, 1, MAX_MINERS),
    blockIntervalMs: c.integer(
      'miners.blockIntervalMs',
      m?.blockIntervalMs,
      d.miners.blockIntervalMs,
      10,
      3_600_000,
    ),
    retention: c.integer('miners.retention', m?.retention, d.miners.retention, 0, 64),
    difficulty: c.integer(
      'miners.difficulty',
      m?.difficulty,
      d.miners.difficulty,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
    blockGasLimit: c.integer(
      'miners.blockGasLimit',
      m?.blockGasLimit,
      d.miners.blockGasLimit,
      21_000,
      Number.MAX_SAFE_INTEGER,
    ),
    args: c.args('miners.args', m?.args, MANAGED_FLAGS.miners),
  };

  const k = top.clients === undefined ? {} : c.object('clients', top.clients, ['count', 'args']);
  const clients: ClientTopology = {
    count: c.integer('clients.count', k?.count, d.clients.count, 0, MAX_CLIENTS),
    args: c.args('clients.args', k?.args, MANAGED_FLAGS.clients),
  };

  const regions =
    top.regions === undefined
      ? undefined
      : checkRegions(c, top.regions, {
          storageProcesses: storage.processes,
          storageReplicas: storage.replicas,
          miners: miners.count,
          clients: clients.count,
        });
  const topology: Topology = {
    name: c.string('name', top.name, d.name, true),
    description: c.string('description', top.description, d.description, false),
    shardCount,
    accounts: c.integer('accounts', top.accounts, d.accounts, 1, MAX_ACCOUNTS),
    seed: c.string('seed', top.seed, d.seed, true),
    metrics: c.boolean('metrics', top.metrics, d.metrics),
    logLevel: c.oneOf('logLevel', top.logLevel, d.logLevel, LOG_LEVELS),
    storage,
    miners,
    clients,
    ...(regions === undefined ? {} : { regions }),
  };
  if (c.issues.length > 0) {
    throw new ClusterError(
      ClusterErrorCode.BadTopology,
      `${source}: ${c.issues.length === 1 ? c.issues[0] : `\n  ${c.issues.join('\n  ')}`}`,
      { source, issues: c.issues },
    );
  }
  return topology;
}

/** Reads and checks a topology file; its `name` defaults to the file's base name (`small`). */
export async function readTopology(file: string): Promise<Topology> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ClusterError(
      ClusterErrorCode.BadTopology,
      `${file}: expected a readable topology file, found ${(e as Error).message}`,
      { source: file },
      e,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new ClusterError(
      ClusterErrorCode.BadTopology,
      `${file}: expected JSON, found ${(e as Error).message}`,
      { source: file },
      e,
    );
  }
  const named =
    typeof doc === 'object' && doc !== null && !Array.isArray(doc) && !('name' in doc)
      ? { ...doc, name: basename(file, extname(file)) }
      : doc;
  return parseTopology(named, file);
}

/** How clients read state: see `monsoon client --storage-transport`. */
export type StorageTransport = 'grpc' | 'shm';

/**
 * The topology with its clients reading over `transport`: for shm, every storage process exports
 * its region (`--export-region auto`) and every client walks it (`--storage-transport shm`);
 * flags the topology already sets are left as they are.
 */
export function withStorageTransport(t: Topology, transport: StorageTransport): Topology {
  if (transport === 'grpc') return t;
  const has = (args: readonly string[], flag: string) => args.includes(flag);
  return {
    ...t,
    storage: has(t.storage.args, '--export-region')
      ? t.storage
      : { ...t.storage, args: [...t.storage.args, '--export-region', 'auto'] },
    clients: has(t.clients.args, '--storage-transport')
      ? t.clients
      : { ...t.clients, args: [...t.clients.args, '--storage-transport', transport] },
  };
}
