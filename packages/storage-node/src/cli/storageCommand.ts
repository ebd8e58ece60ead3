/**
 * `monsoon node storage` (`npm run node -- storage --genesis g.json …`): a storage node process.
 * Opens the node on its data directory (replaying its log), serves it over gRPC, optionally
 * serves /metrics, and logs JSON lines to stdout; the line `{"msg":"listening","address":…}` says
 * it is ready. Flags, `MONSOON_*` environment, `--config`, exit codes and signals are the shared
 * role scaffold's (`runRole` in `@monsoon/edge`).
 */
import { resolve } from 'node:path';
import {
  EdgeErrorCode,
  isEdgeError,
  MetricsServer,
  type RawOptions,
  type RoleContext,
  type RoleSpec,
  type RunningRole,
  readJsonFile,
  runRole,
} from '@monsoon/edge';
import { type Genesis, parseGenesis } from '@monsoon/protocol';
import { StorageMetrics } from '../server/storageMetrics.js';
import { StorageServer } from '../server/storageServer.js';
import { isStorageError, StorageError, StorageErrorCode } from '../storageError.js';
import { StorageNode } from '../storageNode.js';
import { resolveStorageConfig, STORAGE_OPTIONS, type StorageCliConfig } from './storageConfig.js';

/** What the storage role runs with: its checked options and the parsed genesis. */
export interface StorageRoleConfig {
  readonly cfg: StorageCliConfig;
  readonly genesis: Genesis;
}

async function startStorage(
  { cfg, genesis }: StorageRoleConfig,
  { logger: log }: RoleContext,
): Promise<RunningRole> {
  const node = await StorageNode.open(
    genesis,
    {
      dataDir: cfg.dataDir,
      fsync: cfg.fsync,
      checkpointEvery: cfg.checkpointEvery,
      shardCount: cfg.shardCount,
      shards: cfg.shards,
      window: cfg.window,
      forkWindow: cfg.forkWindow,
    },
    { logger: log },
  );
  const metrics = new StorageMetrics();
  metrics.watchNode(node, cfg.dataDir);
  let server: StorageServer;
  let metricsServer: MetricsServer | undefined;
  try {
    server = await StorageServer.create(
      {
        listen: cfg.listen,
        maxReceiveMessageBytes: cfg.maxMessageBytes,
        maxBatchQueries: cfg.maxBatch,
        maxNodes: cfg.maxNodes,
      },
      { node, logger: log, metrics },
    );
    if (cfg.metrics !== undefined) {
      metricsServer = await MetricsServer.create(
        { listen: cfg.metrics },
        { registry: metrics.registry, logger: log },
      );
    }
  } catch (e) {
    await node.close().catch(() => undefined);
    throw e;
  }
  return {
    listening: {
      address: server.address(),
      metrics: metricsServer?.address(),
      shards: cfg.shardSpec,
      shardCount: cfg.shardCount,
      dataDir: resolve(cfg.dataDir),
      fsync: cfg.fsync,
      head: Number(node.head.header.number),
      hash: node.head.id,
    },
    status: () => ({ head: Number(node.head.header.number), hash: node.head.id }),
    async close() {
      await metricsServer?.close();
      await server.close();
      await node.close();
    },
  };
}

/** The storage role as the shared scaffold runs it. */
export const storageRole: RoleSpec<StorageRoleConfig> = {
  role: 'storage',
  description: 'Run a storage node: its shards of the state, multi-versioned and durable, over gRPC.',
  options: STORAGE_OPTIONS,
  async load(raw: RawOptions) {
    const cfg = resolveStorageConfig(raw);
    const genesis = parseGenesis(
      await readJsonFile(cfg.genesis, 'genesis', (m) => new StorageError(StorageErrorCode.BadGenesis, m)),
    );
    return { cfg, genesis };
  },
  start: startStorage,
  // A data directory written for other shards, an address that is not host:port.
  isUsageError: (e) =>
    isStorageError(e, StorageErrorCode.BadArgument) || isEdgeError(e, EdgeErrorCode.BadArgument),
};

/** Runs the storage node until SIGTERM/SIGINT. `argv` excludes `node`, the script and the role. */
export function runStorage(argv: readonly string[]): Promise<void> {
  return runRole(storageRole, argv);
}
