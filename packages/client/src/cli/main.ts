#!/usr/bin/env node
/**
 * `monsoon client` (`npm run client -- --genesis g.json --miners 127.0.0.1:7100 --storage 127.0.0.1:7001,…`):
 * follows the chain from the miners, reads proven state from the storage nodes and serves
 * Ethereum JSON-RPC over HTTP; transactions sent to it are pre-executed and submitted with
 * their witnesses. Logs are JSON lines on stdout; the first that matters is
 * `{"msg":"listening","rpc":"http://…","metrics":…}`. A bad flag or genesis is one line on
 * stderr and exit 2.
 */
import { readFile } from 'node:fs/promises';
import {
  createPino,
  type HostPort,
  LOG_LEVELS,
  type LogLevel,
  parseHostPort,
  pinoAdapter,
  routeGrpcLogs,
} from '@monsoon/edge';
import { defaultChainRules } from '@monsoon/execution';
import { parseGenesis } from '@monsoon/protocol';
import { Command, InvalidArgumentError } from 'commander';
import { Client, defaultClientOptions } from '../client.js';
import { ClientMetrics } from '../clientMetrics.js';
import { ClientServer } from '../clientServer.js';
import { defaultRpcServerOptions, RpcServer } from '../rpc/rpcServer.js';

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

const program = new Command('monsoon client')
  .requiredOption('--genesis <file>', 'geth-style genesis.json (the chain id and gas limit come from it)')
  .requiredOption('--miners <list>', 'miners, host:port,… (the first reachable is used)', list)
  .requiredOption('--storage <list>', 'storage nodes, host:port,… (every shard held by one at least)', list)
  .option('--rpc <host:port>', 'JSON-RPC over HTTP address', defaultRpcServerOptions.listen)
  .option('--grpc <host:port>', 'ClientService (bulk SendTransactions) address', '127.0.0.1:0')
  .option('--metrics <host:port>', 'serve Prometheus text at http://<host:port>/metrics (default: off)')
  .option(
    '--compact-levels <c>',
    "account-trie levels left out of bags (= the miners' retention r)",
    int('--compact-levels'),
    defaultClientOptions.compactLevels,
  )
  .option(
    '--max-batch <n>',
    'most transactions in one submission',
    int('--max-batch'),
    defaultClientOptions.maxBatch,
  )
  .option('--log-level <level>', LOG_LEVELS.join(' | '), 'info')
  .showHelpAfterError();

program.parse(process.argv);
const o = program.opts<{
  genesis: string;
  miners: string[];
  storage: string[];
  rpc: string;
  grpc: string;
  metrics?: string;
  compactLevels: number;
  maxBatch: number;
  logLevel: string;
}>();

function fail(msg: string): never {
  process.stderr.write(`monsoon client: ${msg}\n`);
  process.exit(2);
}

let metricsAt: HostPort | undefined;
try {
  parseHostPort(o.rpc, '--rpc');
  parseHostPort(o.grpc, '--grpc');
  for (const a of [...o.miners, ...o.storage]) parseHostPort(a, 'address');
  if (o.metrics !== undefined && o.metrics !== 'off') metricsAt = parseHostPort(o.metrics, '--metrics');
} catch (e) {
  fail((e as Error).message);
}
if (o.miners.length === 0) fail('--miners: expected at least one host:port');
if (o.storage.length === 0) fail('--storage: expected at least one host:port');
if (!(LOG_LEVELS as readonly string[]).includes(o.logLevel))
  fail(`--log-level: expected ${LOG_LEVELS.join(' | ')}, found "${o.logLevel}"`);
const pinoLog = createPino(o.logLevel as LogLevel, 'client');
routeGrpcLogs(pinoLog);
const logger = pinoAdapter(pinoLog);

let rules = defaultChainRules;
try {
  const genesis = parseGenesis(JSON.parse(await readFile(o.genesis, 'utf8')));
  rules = { ...defaultChainRules, chainId: genesis.chainId, gasLimit: genesis.gasLimit };
} catch (e) {
  fail(`genesis ${o.genesis}: ${(e as Error).message}`);
}

let client: Client;
let rpc: RpcServer;
let metrics: ClientMetrics | undefined;
let grpc: ClientServer;
try {
  client = await Client.start({
    miners: o.miners,
    storage: o.storage,
    rules,
    compactLevels: o.compactLevels,
    maxBatch: o.maxBatch,
    logger,
  });
  await client.ready();
  rpc = await RpcServer.create({ listen: o.rpc }, { backend: client, logger });
  grpc = await ClientServer.start(client, o.grpc, logger);
  if (metricsAt !== undefined) metrics = await ClientMetrics.serve(client, metricsAt, logger);
} catch (e) {
  logger.error('startup failed', { error: (e as Error).message });
  process.stderr.write(`monsoon client: ${(e as Error).message}\n`);
  process.exit(1);
}
logger.info('listening', {
  rpc: rpc.url,
  grpc: grpc.address,
  metrics: metrics?.address,
  head: Number(client.chain.requireHead().header.number),
  storage: client.remote.storage.describe(),
});

let stopping = false;
const stop = (signal: string) => {
  if (stopping) process.exit(1);
  stopping = true;
  logger.info('shutting down', { signal, counters: client.counters, fetched: client.remote.counters });
  Promise.all([rpc.close(), grpc.close(), metrics?.close(), client.close()]).then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
