/**
 * `monsoon node miner` (`npm run node -- miner --genesis g.json --storage 127.0.0.1:7001,…`):
 * loads the genesis, keeps its top layer, serves MinerService, seals a block every interval and
 * sends it to its peers and storage nodes; with `--metrics`, serves Prometheus text. Flags,
 * `MONSOON_*` environment, `--config`, logs, exit codes and signals are the shared role
 * scaffold's (`runRole` in `@monsoon/edge`).
 */
import { availableParallelism } from 'node:os';
import { fromHex, toHex } from '@monsoon/dsm-tree';
import {
  EdgeError,
  EdgeErrorCode,
  parseHostPort,
  type RawOptions,
  type RoleContext,
  type RoleOption,
  type RoleSpec,
  type RunningRole,
  read,
  readJsonFile,
  runRole,
} from '@monsoon/edge';
import { chainRulesOf, SenderRecoveryPool } from '@monsoon/execution';
import { type Genesis, minDifficultyOf, parseGenesis } from '@monsoon/protocol';
import { readChainCheckpoint } from '../blockLog.js';
import { defaultMinerOptions, KEEP_BLOCKS_FLOOR, Miner } from '../miner.js';
import { defaultMinerNodeOptions, MinerNode } from '../minerNode.js';
import { defaultStoragePeerOptions } from '../storagePeer.js';

/** The miner role's own options. */
/**
 * Sender-recovery worker threads a miner starts unless told: the cores beyond two (one for the
 * execution thread, one for the rest of the process: gRPC, bag checks, garbage collection), at
 * most four. On a two-core machine shared with storage and clients, none: a worker would only
 * take CPU from the roles beside it.
 */
export function defaultRecoveryThreads(cores = availableParallelism()): number {
  return Math.max(0, Math.min(4, cores - 2));
}

export const MINER_OPTIONS: readonly RoleOption[] = [
  { name: 'genesis', arg: '<file>', description: 'geth-style genesis.json (required)', path: true },
  {
    name: 'listen',
    arg: '<host:port>',
    description: `MinerService address (default: ${defaultMinerNodeOptions.listen})`,
  },
  {
    name: 'metrics',
    arg: '<host:port>',
    description: 'serve Prometheus text at http://<host:port>/metrics (default: off)',
  },
  { name: 'storage', arg: '<list>', description: 'storage nodes, host:port,…' },
  { name: 'peers', arg: '<list>', description: 'peer miners, host:port,…' },
  {
    name: 'coinbase',
    arg: '<address>',
    description: '20-byte hex address paid the fees and reward (default: zero)',
  },
  {
    name: 'retention',
    arg: '<r>',
    description: `top-layer levels kept (default: ${defaultMinerOptions.retention})`,
  },
  {
    name: 'difficulty',
    arg: '<n>',
    description: `proof-of-work difficulty, 0 = none (default: ${defaultMinerOptions.difficulty})`,
  },
  {
    name: 'blockInterval',
    arg: '<ms>',
    description: `seal a block this often (default: ${defaultMinerNodeOptions.blockIntervalMs})`,
  },
  {
    name: 'maxBlockTxs',
    arg: '<n>',
    description: `most transactions per block (default: ${defaultMinerOptions.maxBlockTransactions})`,
  },
  {
    name: 'recoveryThreads',
    arg: '<n>',
    description: `worker threads recovering senders while submissions execute, 0 = on the execution thread (default: the cores beyond two, at most four; here ${defaultRecoveryThreads()})`,
  },
  { name: 'shardCount', arg: '<n>', description: '16 or 256 (default: 16)' },
  {
    name: 'dataDir',
    arg: '<dir>',
    description: 'log the chain here and continue from it on restart (default: nothing on disk)',
    path: true,
  },
  {
    name: 'fsync',
    arg: '<always|none>',
    description: 'fsync the chain log after every block, or leave it to the OS (default: always)',
  },
  {
    name: 'logCompactAfter',
    arg: '<n>',
    description: `blocks logged before the chain log is compacted to a checkpoint of the oldest held block and the blocks after it (default: ${defaultMinerNodeOptions.logCompactAfter})`,
  },
  {
    name: 'keepBlocks',
    arg: '<n>',
    description: `blocks kept below the head; older ones are forgotten (default: ${defaultMinerOptions.keepBlocks})`,
  },
  {
    name: 'keepBytes',
    arg: '<n>',
    description: `transaction and witness bytes those blocks hold at most: beyond it the oldest go too, down to ${KEEP_BLOCKS_FLOOR} blocks (default: ${defaultMinerOptions.keepBytes})`,
  },
  {
    name: 'maxQueueWait',
    arg: '<ms>',
    description: `a submission that waited longer for its turn is answered stale, unexecuted (its client resubmits) (default: ${defaultMinerOptions.maxQueueWaitMs})`,
  },
  {
    name: 'storageRetryMax',
    arg: '<ms>',
    description: `longest wait between tries to reach a storage node; its blocks are kept meanwhile (default: ${defaultStoragePeerOptions.retryMaxMs})`,
  },
  {
    name: 'storageCatchUp',
    arg: '<blocks>',
    description: `sealed blocks kept below the head to catch up a storage node that is behind (default: ${defaultMinerNodeOptions.storageCatchUpBlocks})`,
  },
];

/** What the miner role runs with. */
export interface MinerRoleConfig {
  readonly genesis: Genesis;
  readonly listen: string;
  readonly metrics: string | undefined;
  readonly storage: readonly string[];
  readonly peers: readonly string[];
  readonly coinbase: Uint8Array;
  readonly retention: number;
  readonly difficulty: bigint;
  readonly blockIntervalMs: number;
  readonly maxBlockTxs: number;
  readonly recoveryThreads: number;
  readonly shardCount: 16 | 256;
  readonly keepBlocks: number;
  readonly keepBytes: number;
  readonly maxQueueWaitMs: number;
  readonly dataDir: string | undefined;
  readonly fsync: 'always' | 'none';
  readonly logCompactAfter: number;
  readonly storageRetryMaxMs: number;
  readonly storageCatchUpBlocks: number;
}

function bad(option: string, expected: string, found: unknown): never {
  throw new EdgeError(
    EdgeErrorCode.BadArgument,
    `--${option}: expected ${expected}, found ${JSON.stringify(found)}`,
    {
      option,
    },
  );
}

async function loadMiner(raw: RawOptions): Promise<MinerRoleConfig> {
  if (raw.genesis === undefined) {
    throw new EdgeError(
      EdgeErrorCode.BadArgument,
      '--genesis <file> is required (or "genesis" in the --config file)',
      {
        option: 'genesis',
      },
    );
  }
  const coinbaseRaw =
    raw.coinbase === undefined ? `0x${'00'.repeat(20)}` : read.str(raw.coinbase, 'coinbase');
  let coinbase: Uint8Array;
  try {
    coinbase = fromHex(coinbaseRaw);
  } catch {
    bad('coinbase', 'a 20-byte hex address', coinbaseRaw);
  }
  if (coinbase.length !== 20) bad('coinbase', 'a 20-byte hex address', coinbaseRaw);
  const shardCount = read.int(raw.shardCount ?? 16, 'shardCount');
  if (shardCount !== 16 && shardCount !== 256) bad('shard-count', '16 | 256', raw.shardCount);
  const difficultyRaw = raw.difficulty ?? String(defaultMinerOptions.difficulty);
  if (!/^\d+$/.test(String(difficultyRaw))) bad('difficulty', 'an integer >= 0', difficultyRaw);
  const config = {
    listen: read.hostPort(raw.listen ?? defaultMinerNodeOptions.listen, 'listen'),
    metrics: read.optionalHostPort(raw.metrics, 'metrics'),
    storage: read.hostPorts(raw.storage, 'storage'),
    peers: read.hostPorts(raw.peers, 'peers'),
    coinbase,
    retention: read.int(raw.retention ?? defaultMinerOptions.retention, 'retention'),
    difficulty: BigInt(String(difficultyRaw)),
    blockIntervalMs: read.int(raw.blockInterval ?? defaultMinerNodeOptions.blockIntervalMs, 'blockInterval'),
    maxBlockTxs: read.int(raw.maxBlockTxs ?? defaultMinerOptions.maxBlockTransactions, 'maxBlockTxs', 1),
    recoveryThreads: read.int(raw.recoveryThreads ?? defaultRecoveryThreads(), 'recoveryThreads'),
    shardCount: shardCount as 16 | 256,
    keepBlocks: read.int(raw.keepBlocks ?? defaultMinerOptions.keepBlocks, 'keepBlocks', 1),
    keepBytes: read.int(raw.keepBytes ?? defaultMinerOptions.keepBytes, 'keepBytes', 1),
    maxQueueWaitMs: read.int(raw.maxQueueWait ?? defaultMinerOptions.maxQueueWaitMs, 'maxQueueWait', 1),
    dataDir: raw.dataDir === undefined ? undefined : read.str(raw.dataDir, 'dataDir'),
    fsync: read.oneOf(raw.fsync ?? defaultMinerNodeOptions.fsync, 'fsync', ['always', 'none'] as const),
    logCompactAfter: read.int(
      raw.logCompactAfter ?? defaultMinerNodeOptions.logCompactAfter,
      'logCompactAfter',
      1,
    ),
    storageRetryMaxMs: read.int(
      raw.storageRetryMax ?? defaultStoragePeerOptions.retryMaxMs,
      'storageRetryMax',
      1,
    ),
    storageCatchUpBlocks: read.int(
      raw.storageCatchUp ?? defaultMinerNodeOptions.storageCatchUpBlocks,
      'storageCatchUp',
      1,
    ),
  };
  const genesis = parseGenesis(await readJsonFile(read.str(raw.genesis, 'genesis'), 'genesis'));
  const min = minDifficultyOf(genesis);
  if (config.difficulty < min) {
    bad(
      'difficulty',
      `at least ${min}, the genesis' difficulty rule (config.monsoon.minDifficulty, 1 when absent)`,
      String(config.difficulty),
    );
  }
  return { ...config, genesis };
}

async function startMiner(o: MinerRoleConfig, { logger }: RoleContext): Promise<RunningRole> {
  const genesis = o.genesis;
  const started = Date.now();
  // A compacted chain log's checkpoint: the miner starts there, never building the genesis.
  const from = o.dataDir === undefined ? undefined : await readChainCheckpoint(o.dataDir);
  const miner = await Miner.create(
    genesis,
    {
      rules: chainRulesOf(genesis),
      coinbase: o.coinbase,
      retention: o.retention,
      difficulty: o.difficulty,
      maxBlockTransactions: o.maxBlockTxs,
      shardCount: o.shardCount,
      keepBlocks: o.keepBlocks,
      keepBytes: o.keepBytes,
      maxQueueWaitMs: o.maxQueueWaitMs,
      ...(o.recoveryThreads > 0
        ? { recovery: await SenderRecoveryPool.create({ threads: o.recoveryThreads }) }
        : {}),
    },
    undefined,
    from,
  );
  logger.info(from === undefined ? 'genesis loaded' : 'checkpoint loaded', {
    ...(from === undefined
      ? { accounts: genesis.alloc.length }
      : { number: Number(miner.head.header.number) }),
    ms: Date.now() - started,
    root: toHex(miner.head.header.stateRoot),
  });
  const node = await MinerNode.start(
    miner,
    {
      listen: o.listen,
      metrics: o.metrics === undefined ? undefined : parseHostPort(o.metrics, '--metrics'),
      storage: [...o.storage],
      peers: [...o.peers],
      blockIntervalMs: o.blockIntervalMs,
      storageFeed: { retryMaxMs: o.storageRetryMaxMs },
      storageCatchUpBlocks: o.storageCatchUpBlocks,
      fsync: o.fsync,
      logCompactAfter: o.logCompactAfter,
      ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
    },
    logger,
  );
  return {
    listening: { address: node.address, metrics: node.metricsAddress },
    status: () => ({
      head: Number(miner.head.header.number),
      counters: miner.counters,
      storage: node.storageCounters,
    }),
    close: () => node.close(),
  };
}

/** The miner role as the shared scaffold runs it. */
export const minerRole: RoleSpec<MinerRoleConfig> = {
  role: 'miner',
  description:
    'Run a miner: execute submissions over its top layer and their bags, seal blocks, gossip them.',
  options: MINER_OPTIONS,
  load: loadMiner,
  start: startMiner,
};

/** Runs the miner until SIGTERM/SIGINT. `argv` excludes `node`, the script and the role. */
export function runMiner(argv: readonly string[]): Promise<void> {
  return runRole(minerRole, argv);
}
