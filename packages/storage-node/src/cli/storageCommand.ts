/**
 * `monsoon node storage` (`npm run node -- storage --genesis g.json …`): a storage node process.
 * Opens the node on its data directory (replaying its log), serves it over gRPC, optionally
 * serves /metrics, and logs JSON lines to stdout; the line `{"msg":"listening","address":…}` says
 * it is ready. Flags, `MONSOON_*` environment, `--config`, exit codes and signals are the shared
 * role scaffold's (`runRole` in `@monsoon/edge`).
 */
import { join, resolve } from 'node:path';
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
import { requireRdma } from '@monsoon/rdma';
import { connectRemoteNodeDb, leveldbCacheFor, openLocalNodeDb } from '../nodeStore/levelNodeStore.js';
import { RdmaExport } from '../nodeStore/rdmaExport.js';
import { autoRegionPath, RegionExport } from '../nodeStore/regionExport.js';
import { TieredStore } from '../nodeStore/tieredStore.js';
import { defaultReplicaSyncOptions, ReplicaSync } from '../replicaSync.js';
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
  if (cfg.backend === 'tiered' && cfg.exportRegion !== undefined) {
    // The region holds the nodes resident in the trees; a tiered node's cold ones are in LevelDB.
    throw new StorageError(
      StorageErrorCode.BadArgument,
      '--export-region needs --backend memory (a tiered node keeps its cold nodes in LevelDB, not in the region)',
    );
  }
  if (cfg.rdmaDevice !== undefined) {
    if (cfg.exportRegion === undefined)
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `--rdma-device ${cfg.rdmaDevice}: needs --export-region <file|auto> (RDMA serves the exported region)`,
      );
    try {
      requireRdma(); // before anything is built: say at once what is missing here
    } catch (e) {
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `--rdma-device ${cfg.rdmaDevice}: ${(e as Error).message}`,
        {},
        e,
      );
    }
  }
  let tiered: TieredStore | undefined;
  if (cfg.backend === 'tiered') {
    // An in-process LevelDB's block cache is this process' memory: counted inside the budget.
    const leveldbCacheBytes = cfg.leveldb !== undefined ? 0 : leveldbCacheFor(cfg.memoryBudget);
    const db =
      cfg.leveldb !== undefined
        ? await connectRemoteNodeDb(cfg.leveldb)
        : await openLocalNodeDb(join(cfg.dataDir, 'leveldb'), { cacheBytes: leveldbCacheBytes });
    // The budget holds for the process (MemoryGovernor), measured from its RSS before the state.
    tiered = new TieredStore(
      {
        memoryBudget: cfg.memoryBudget,
        checkpointEvery: cfg.checkpointEvery,
        leveldbCacheBytes,
        processBudget: true,
      },
      { db, logger: log },
    );
  }
  const region =
    cfg.exportRegion === undefined
      ? undefined
      : await RegionExport.create(
          {
            path: cfg.exportRegion === 'auto' ? autoRegionPath(cfg.dataDir) : cfg.exportRegion,
            removeOnClose: cfg.exportRegion === 'auto',
            arenaBytes: cfg.regionMb * 1024 * 1024,
            nodes: cfg.regionMb * 4096,
          },
          { logger: log },
        );
  let rdma: RdmaExport | undefined;
  let node: StorageNode;
  try {
    if (region !== undefined && cfg.rdmaDevice !== undefined)
      rdma = await RdmaExport.open({ device: cfg.rdmaDevice }, region, { logger: log });
    node = await StorageNode.open(
      genesis,
      {
        dataDir: cfg.dataDir,
        fsync: cfg.fsync,
        checkpointEvery: cfg.checkpointEvery,
        checkpointDepth: cfg.checkpointDepth,
        shardCount: cfg.shardCount,
        shards: cfg.shards,
        window: cfg.window,
        forkWindow: cfg.forkWindow,
        maxVersionUpdates: cfg.maxVersionUpdates,
      },
      {
        logger: log,
        ...(tiered !== undefined ? { observers: [tiered], faults: tiered, genesisSink: tiered } : {}),
        ...(region !== undefined ? { observers: [region] } : {}),
      },
    );
  } catch (e) {
    rdma?.close();
    await region?.close().catch(() => undefined);
    throw e;
  }
  const metrics = new StorageMetrics();
  metrics.watchNode(node, cfg.dataDir);
  if (tiered !== undefined) {
    const store = tiered;
    metrics.watchTiered(() => store.tieredStats(), cfg.memoryBudget);
  }
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
      {
        node,
        logger: log,
        metrics,
        ...(region?.info() !== undefined ? { region: region.info()! } : {}),
        ...(rdma !== undefined ? { rdma } : {}),
      },
    );
    if (cfg.metrics !== undefined) {
      metricsServer = await MetricsServer.create(
        { listen: cfg.metrics },
        { registry: metrics.registry, logger: log },
      );
    }
  } catch (e) {
    rdma?.close();
    await node.close().catch(() => undefined);
    throw e;
  }
  const sync = new ReplicaSync(
    { ...defaultReplicaSyncOptions, peers: cfg.replicas, intervalMs: cfg.syncInterval },
    { node, log, moved: () => server.heads.check() },
  );
  sync.start();
  return {
    listening: {
      address: server.address(),
      metrics: metricsServer?.address(),
      shards: cfg.shardSpec,
      shardCount: cfg.shardCount,
      dataDir: resolve(cfg.dataDir),
      fsync: cfg.fsync,
      backend: cfg.backend,
      ...(tiered !== undefined ? { memoryBudget: cfg.memoryBudget, leveldb: tiered.db.where } : {}),
      head: Number(node.head.header.number),
      hash: node.head.id,
      ...(region !== undefined ? { region: region.info()?.path } : {}),
      ...(rdma !== undefined ? { rdmaDevice: rdma.opts.device } : {}),
      ...(cfg.replicas.length > 0 ? { replicas: cfg.replicas.join(',') } : {}),
    },
    status: () => ({ head: Number(node.head.header.number), hash: node.head.id }),
    async close() {
      await sync.close();
      await metricsServer?.close();
      await server.close();
      rdma?.close();
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
