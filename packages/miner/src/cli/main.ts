#!/usr/bin/env node
/**
 * `monsoon miner` (`npm run miner -- --genesis g.json --storage 127.0.0.1:7001,127.0.0.1:7002`):
 * loads the genesis, keeps its top layer, serves MinerService, seals a block every interval and
 * sends it to its peers and storage nodes; with `--metrics`, serves Prometheus text. Logs are
 * JSON lines on stdout; the first one that matters is
 * `{"msg":"listening","address":…,"metrics":…}`. A bad flag or genesis is one line on stderr
 * and exit 2.
 */
import { readFile } from 'node:fs/promises';
import { fromHex, toHex } from '@monsoon/dsm-tree';
import {
  createPino,
  type HostPort,
  LOG_LEVELS,
  type LogLevel,
  parseHostPort,
  pinoAdapter,
  routeGrpcLogs,
} from '@monsoon/edge';
import { defaultChainRules, SenderRecoveryPool } from '@monsoon/execution';
import { parseGenesis } from '@monsoon/protocol';
import { Command, InvalidArgumentError } from 'commander';
import { defaultMinerOptions, Miner } from '../miner.js';
import { defaultMinerNodeOptions, MinerNode } from '../minerNode.js';

const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError(`${name}: expected an integer ≥ 0, found "${v}"`);
  return n;
};
const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

const program = new Command('monsoon miner')
  .requiredOption('--genesis <file>', 'geth-style genesis.json')
  .option('--listen <host:port>', 'MinerService address', defaultMinerNodeOptions.listen)
  .option('--metrics <host:port>', 'serve Prometheus text at http://<host:port>/metrics (default: off)')
  .option('--storage <list>', 'storage nodes, host:port,…', list, [])
  .option('--peers <list>', 'peer miners, host:port,…', list, [])
  .option('--coinbase <address>', '20-byte hex address paid the fees and reward', `0x${'00'.repeat(20)}`)
  .option('--retention <r>', 'top-layer levels kept (r)', int('--retention'), defaultMinerOptions.retention)
  .option('--difficulty <n>', 'proof-of-work difficulty (0 = none)', String(defaultMinerOptions.difficulty))
  .option(
    '--block-interval <ms>',
    'seal a block this often',
    int('--block-interval'),
    defaultMinerNodeOptions.blockIntervalMs,
  )
  .option(
    '--max-block-txs <n>',
    'most transactions per block',
    int('--max-block-txs'),
    defaultMinerOptions.maxBlockTransactions,
  )
  .option(
    '--recovery-threads <n>',
    'worker threads recovering senders while submissions execute (0 = on the execution thread)',
    int('--recovery-threads'),
    0,
  )
  .option('--shard-count <n>', '16 or 256', int('--shard-count'), 16)
  .option('--log-level <level>', LOG_LEVELS.join(' | '), 'info')
  .showHelpAfterError();

program.parse(process.argv);
const o = program.opts<{
  genesis: string;
  listen: string;
  metrics?: string;
  storage: string[];
  peers: string[];
  coinbase: string;
  retention: number;
  difficulty: string;
  blockInterval: number;
  maxBlockTxs: number;
  recoveryThreads: number;
  shardCount: number;
  logLevel: string;
}>();

function fail(msg: string): never {
  process.stderr.write(`monsoon miner: ${msg}\n`);
  process.exit(2);
}

let metrics: HostPort | undefined;
try {
  parseHostPort(o.listen, '--listen');
  if (o.metrics !== undefined && o.metrics !== 'off') metrics = parseHostPort(o.metrics, '--metrics');
} catch (e) {
  fail((e as Error).message);
}
if (!(LOG_LEVELS as readonly string[]).includes(o.logLevel)) {
  fail(`--log-level: expected ${LOG_LEVELS.join(' | ')}, found "${o.logLevel}"`);
}
const pinoLog = createPino(o.logLevel as LogLevel, 'miner');
routeGrpcLogs(pinoLog);
const logger = pinoAdapter(pinoLog);

let genesisDoc: unknown;
try {
  genesisDoc = JSON.parse(await readFile(o.genesis, 'utf8'));
} catch (e) {
  fail(`genesis ${o.genesis}: ${(e as Error).message}`);
}
let miner: Miner;
try {
  const genesis = parseGenesis(genesisDoc);
  const coinbase = fromHex(o.coinbase);
  if (coinbase.length !== 20) fail(`--coinbase: expected 20 bytes, found ${coinbase.length}`);
  if (o.shardCount !== 16 && o.shardCount !== 256)
    fail(`--shard-count: expected 16 | 256, found ${o.shardCount}`);
  const started = Date.now();
  miner = await Miner.create(genesis, {
    rules: { ...defaultChainRules, chainId: genesis.chainId, gasLimit: genesis.gasLimit },
    coinbase,
    retention: o.retention,
    difficulty: BigInt(o.difficulty),
    maxBlockTransactions: o.maxBlockTxs,
    shardCount: o.shardCount,
    ...(o.recoveryThreads > 0
      ? { recovery: await SenderRecoveryPool.create({ threads: o.recoveryThreads }) }
      : {}),
  });
  logger.info('genesis loaded', {
    accounts: genesis.alloc.length,
    ms: Date.now() - started,
    root: toHex(miner.head.header.stateRoot),
  });
} catch (e) {
  fail((e as Error).message);
}
let node: MinerNode;
try {
  node = await MinerNode.start(
    miner,
    { listen: o.listen, metrics, storage: o.storage, peers: o.peers, blockIntervalMs: o.blockInterval },
    logger,
  );
} catch (e) {
  logger.error('startup failed', { error: (e as Error).message });
  process.stderr.write(`monsoon miner: ${(e as Error).message}\n`);
  process.exit(1);
}
logger.info('listening', { address: node.address, metrics: node.metricsAddress });

let stopping = false;
const stop = (signal: string) => {
  if (stopping) process.exit(1);
  stopping = true;
  logger.info('shutting down', {
    signal,
    head: Number(miner.head.header.number),
    counters: miner.counters,
    storage: node.storageCounters,
  });
  node.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
