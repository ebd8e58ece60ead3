/**
 * `monsoon storage`: a storage node process. Opens the node on its data directory (replaying
 * its log), serves it over gRPC, optionally serves /metrics, and logs JSON lines to stdout; the
 * line `{"msg":"listening","address":"host:port",…}` says it is ready. SIGTERM or SIGINT stop
 * it cleanly (exit 0). A bad flag, config or genesis is one line on stderr and exit 2.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  createPino,
  EdgeErrorCode,
  isEdgeError,
  LOG_LEVELS,
  MetricsServer,
  pinoAdapter,
  routeGrpcLogs,
} from '@monsoon/edge';
import { type Genesis, isProtocolError, ProtocolErrorCode, parseGenesis } from '@monsoon/protocol';
import { Command, CommanderError } from 'commander';
import { StorageMetrics } from '../server/storageMetrics.js';
import { StorageServer } from '../server/storageServer.js';
import { isStorageError, StorageError, StorageErrorCode } from '../storageError.js';
import { StorageNode } from '../storageNode.js';
import {
  CONFIG_KEYS,
  configFromFile,
  defaultStorageCliOptions as d,
  type RawOptions,
  resolveStorageConfig,
  type StorageCliConfig,
} from './storageConfig.js';

/** Exit code of a usage error: bad flags, config or genesis. */
export const EXIT_USAGE = 2;
/** Exit code of a failure after the options were accepted (a port in use, a corrupt log). */
export const EXIT_FAILURE = 1;

/** The command's flags (parsing only; checking and defaults are in storageConfig.ts). */
export function storageProgram(): Command {
  return new Command('monsoon storage')
    .description('Run a storage node: its shards of the state, multi-versioned and durable, over gRPC.')
    .option(
      '--config <file>',
      'JSON file with any of these options, camelCase or kebab-case keys (flags win)',
    )
    .option('--genesis <file>', 'geth-style genesis.json (required)')
    .option('--shards <spec>', `shards held: all, 3, 0-7, 0-3,8 (default: ${d.shards})`)
    .option('--shard-count <n>', `16 or 256 (default: ${d.shardCount})`)
    .option('--listen <host:port>', `gRPC address, port 0 = any free port (default: ${d.listen})`)
    .option('--data-dir <dir>', 'write-ahead log and node.json (default: ./data/storage-<shards>)')
    .option('--fsync <policy>', `log fsync policy: always | group | none (default: ${d.fsync})`)
    .option(
      '--checkpoint-every <n>',
      `a checkpoint every n blocks, 0 = never (default: ${d.checkpointEvery})`,
    )
    .option('--window <n>', `blocks of history kept on the head's chain (default: ${d.window})`)
    .option('--fork-window <n>', `blocks a losing fork is kept below the head (default: ${d.forkWindow})`)
    .option('--metrics <host:port>', 'serve Prometheus text at http://<host:port>/metrics (default: off)')
    .option('--log-level <level>', `${LOG_LEVELS.join(' | ')} (default: ${d.logLevel})`)
    .option('--max-message-bytes <n>', `largest gRPC request accepted (default: ${d.maxMessageBytes})`)
    .option('--max-batch <n>', `most BatchGet queries or slots, or GetNodes hashes (default: ${d.maxBatch})`)
    .exitOverride()
    .configureOutput({ outputError: () => {} });
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A bad option value, from this package's checks or the edge's (an address that is not host:port). */
function isBadArgument(e: unknown): boolean {
  return isStorageError(e, StorageErrorCode.BadArgument) || isEdgeError(e, EdgeErrorCode.BadArgument);
}

/** A JSON file's content, or a StorageError saying which file and why not. */
async function readJson(file: string, what: string, code: StorageErrorCode): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new StorageError(
      code,
      `${what} ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? message(e)})`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new StorageError(code, `${what} ${file}: not JSON (${message(e)})`);
  }
}

/** The flags given, as raw options (undefined for those not given). */
function flagOptions(program: Command): RawOptions {
  const o = program.opts<Record<string, unknown>>();
  const raw: RawOptions = {};
  for (const k of CONFIG_KEYS) if (o[k] !== undefined) raw[k] = o[k];
  return raw;
}

/**
 * Parses `argv` (the arguments after the command), loads the config and genesis; undefined
 * when the process should exit now (help shown, or a usage error reported).
 */
async function load(
  argv: readonly string[],
): Promise<{ cfg: StorageCliConfig; genesis: Genesis } | undefined> {
  const program = storageProgram();
  try {
    program.parse(argv, { from: 'user' });
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    if (e.exitCode !== 0) usage(`${e.message.replace(/^error: /, '')} (see --help)`);
    return undefined;
  }
  try {
    const configFile = program.opts<{ config?: string }>().config;
    const fromFile =
      configFile === undefined
        ? {}
        : configFromFile(await readJson(configFile, 'config', StorageErrorCode.BadArgument), configFile);
    const cfg = resolveStorageConfig(flagOptions(program), fromFile);
    const genesis = parseGenesis(await readJson(cfg.genesis, 'genesis', StorageErrorCode.BadGenesis));
    return { cfg, genesis };
  } catch (e) {
    if (!isStorageError(e) && !isBadArgument(e) && !isProtocolError(e, ProtocolErrorCode.BadGenesis)) throw e;
    usage(message(e));
    return undefined;
  }
}

function usage(line: string): void {
  process.stderr.write(`monsoon storage: ${line}\n`);
  process.exitCode = EXIT_USAGE;
}

/** Runs the storage node until SIGTERM/SIGINT. `argv` excludes `node` and the script. */
export async function runStorage(argv: readonly string[]): Promise<void> {
  const loaded = await load(argv);
  if (loaded === undefined) return;
  const { cfg, genesis } = loaded;
  const pinoLog = createPino(cfg.logLevel, 'storage');
  const log = pinoAdapter(pinoLog);
  routeGrpcLogs(pinoLog);
  const failStartup = (e: unknown): never => {
    const exitCode = isBadArgument(e) ? EXIT_USAGE : EXIT_FAILURE;
    log.error('startup failed', { error: message(e) });
    process.stderr.write(`monsoon storage: ${message(e)}\n`);
    process.exit(exitCode);
  };

  let node: StorageNode;
  try {
    node = await StorageNode.open(
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
  } catch (e) {
    return failStartup(e);
  }
  const metrics = new StorageMetrics();
  metrics.watchNode(node, cfg.dataDir);
  let server: StorageServer;
  let metricsServer: MetricsServer | undefined;
  try {
    server = await StorageServer.create(
      { listen: cfg.listen, maxReceiveMessageBytes: cfg.maxMessageBytes, maxBatchQueries: cfg.maxBatch },
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
    return failStartup(e);
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log.warn('second signal: exiting without waiting', { signal });
      process.exit(EXIT_FAILURE);
    }
    stopping = true;
    log.info('shutting down', { signal });
    (async () => {
      await metricsServer?.close();
      await server.close();
      await node.close();
    })().then(
      () => {
        log.info('stopped', { signal, head: Number(node.head.header.number), hash: node.head.id });
        process.exit(0);
      },
      (e: unknown) => {
        log.error('shutdown failed', { error: message(e) });
        process.exit(EXIT_FAILURE);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  log.info('listening', {
    address: server.address(),
    metrics: metricsServer?.address(),
    shards: cfg.shardSpec,
    shardCount: cfg.shardCount,
    dataDir: resolve(cfg.dataDir),
    fsync: cfg.fsync,
    head: Number(node.head.header.number),
    hash: node.head.id,
  });
}
