/**
 * The command-line scaffold every role process shares (`monsoon node <role> …`): flags parsed
 * with commander, then merged over `MONSOON_<OPTION>` environment variables and a `--config`
 * JSON file; `--log-level`; `--advertise`; structured logs on stdout; a clear one-line refusal
 * of a bad flag on stderr (exit 2); a startup failure (a port in use) on stderr (exit 1); the line
 * `{"msg":"listening",…}` once serving; SIGTERM/SIGINT stop it cleanly (exit 0), a second signal
 * or a stop that overruns its deadline exits at once (exit 1).
 */
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { CodedError } from '@monsoon/util';
import { Command, CommanderError } from 'commander';
import type { Logger as Pino } from 'pino';
import { EdgeError, EdgeErrorCode } from './edgeError.js';
import { formatHostPort, parseHostPort } from './hostPort.js';
import { LOG_LEVELS, type Logger, type LogLevel } from './logger.js';
import { createPino, pinoAdapter, routeGrpcLogs } from './pinoLogger.js';
import {
  flagOf,
  mergeOptions,
  optionsFromEnv,
  optionsFromFile,
  type RawOptions,
  type RoleOption,
  read,
} from './roleOptions.js';

/** Exit code of a usage error: bad flags, config or genesis. */
export const EXIT_USAGE = 2;
/** Exit code of a failure after the options were accepted (a port in use, a corrupt log). */
export const EXIT_FAILURE = 1;

/** What a started role hands back to the scaffold. */
export interface RunningRole {
  /** Fields of the `listening` line; `address` is the main bound `host:port`. */
  readonly listening: { readonly address: string } & Record<string, unknown>;
  /** Stops serving and releases everything. */
  close(): Promise<void>;
  /** Fields for the `shutting down` line (counters, head). */
  status?(): Record<string, unknown>;
}

/** What a role starts with besides its own options. */
export interface RoleContext {
  readonly logger: Required<Logger>;
  readonly pino: Pino;
  /** `--advertise`: the address peers should use, when given. */
  readonly advertise?: string;
}

/** A role as the scaffold runs it. */
export interface RoleSpec<C> {
  /** `storage`, `miner`, … (the log lines' `role`, the messages' `monsoon <role>:` prefix). */
  readonly role: string;
  readonly description: string;
  /** The role's own options; `config`, `logLevel` and `advertise` are added by the scaffold. */
  readonly options: readonly RoleOption[];
  /** Raw values (flags over env over config file) → the role's checked config; throws a CodedError to refuse. */
  load(raw: RawOptions): C | Promise<C>;
  start(config: C, ctx: RoleContext): Promise<RunningRole>;
  /** Errors of `start` that are the operator's (exit 2), e.g. a data directory of other shards. */
  isUsageError?(e: unknown): boolean;
}

/** How long a stop may take before the process exits anyway. */
export const STOP_DEADLINE_MS = 30_000;

/** The options every role has. */
export const COMMON_ROLE_OPTIONS: readonly RoleOption[] = [
  {
    name: 'config',
    arg: '<file>',
    description:
      'JSON file with any of these options, camelCase or kebab-case keys (flags and MONSOON_* env win)',
  },
  { name: 'logLevel', arg: '<level>', description: `${LOG_LEVELS.join(' | ')} (default: info)` },
  {
    name: 'advertise',
    arg: '<host:port>',
    description:
      'the address peers should use (default: the bound address, a wildcard host replaced by the hostname)',
  },
];

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The address peers should use: `--advertise`, else the bound one with a wildcard host named. */
export function advertisedAddress(bound: string, advertise?: string): string {
  if (advertise !== undefined) return advertise;
  const hp = parseHostPort(bound, 'address');
  const wildcard = hp.host === '0.0.0.0' || hp.host === '::' || hp.host === '[::]' || hp.host === '';
  return wildcard ? formatHostPort({ host: hostname(), port: hp.port }) : bound;
}

/** The role's commander program (parsing only: checks and defaults are the role's `load`). */
export function roleProgram(spec: Pick<RoleSpec<unknown>, 'role' | 'description' | 'options'>): Command {
  const program = new Command(`monsoon ${spec.role}`).description(spec.description);
  for (const o of [...COMMON_ROLE_OPTIONS, ...spec.options]) {
    program.option(o.arg === undefined ? flagOf(o.name) : `${flagOf(o.name)} ${o.arg}`, o.description);
  }
  return program.exitOverride().configureOutput({ outputError: () => {} });
}

/**
 * A JSON file's content; an unreadable or malformed file is refused with a message naming it
 * (`genesis g.json: cannot read it (ENOENT)`), as an EdgeError BAD_ARGUMENT or what `fail` makes.
 */
export async function readJsonFile(
  file: string,
  what: string,
  fail: (message: string) => Error = (m) => new EdgeError(EdgeErrorCode.BadArgument, m, { file }),
): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw fail(`${what} ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? message(e)})`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw fail(`${what} ${file}: not JSON (${message(e)})`);
  }
}

/**
 * Parses `argv` (the arguments after the role's name) and the environment, loads the role's
 * config; undefined when the process should end now (help shown, or a usage error reported).
 */
export async function loadRoleOptions<C>(
  spec: RoleSpec<C>,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ config: C; logLevel: LogLevel; advertise?: string } | undefined> {
  const program = roleProgram(spec);
  const usage = (line: string): undefined => {
    process.stderr.write(`monsoon ${spec.role}: ${line}\n`);
    process.exitCode = EXIT_USAGE;
    return undefined;
  };
  try {
    program.parse(argv, { from: 'user' });
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    return e.exitCode === 0 ? undefined : usage(`${e.message.replace(/^error: /, '')} (see --help)`);
  }
  if (program.args.length > 0) return usage(`unexpected argument "${program.args[0]}" (see --help)`);
  const all = [...COMMON_ROLE_OPTIONS, ...spec.options];
  try {
    const flags = program.opts<RawOptions>();
    const configFile = flags.config ?? env.MONSOON_CONFIG;
    const fromFile =
      configFile === undefined
        ? {}
        : optionsFromFile(await readJsonFile(String(configFile), 'config'), String(configFile), all);
    const raw = mergeOptions(flags, optionsFromEnv(env, all), fromFile);
    const logLevel = read.oneOf(raw.logLevel ?? 'info', 'logLevel', LOG_LEVELS);
    const advertise = raw.advertise === undefined ? undefined : read.hostPort(raw.advertise, 'advertise');
    const config = await spec.load(raw);
    return { config, logLevel, ...(advertise === undefined ? {} : { advertise }) };
  } catch (e) {
    if (!(e instanceof CodedError)) throw e;
    return usage(message(e));
  }
}

/**
 * Set to `stdin` by a parent that gives the role a pipe as stdin and writes nothing to it (the
 * cluster): the role stops, as on SIGTERM, when the pipe closes, which the kernel does when the
 * parent dies, even by SIGKILL. So a cluster's roles never outlive it.
 */
export const PARENT_PIPE_ENV = 'MONSOON_PARENT_PIPE';

/** Calls `gone` once stdin (a pipe from the parent) ends or closes. */
function watchParent(gone: () => void): void {
  process.stdin.on('end', gone);
  process.stdin.on('close', gone);
  process.stdin.on('error', gone);
  process.stdin.on('data', () => undefined);
  process.stdin.resume();
}

/** Runs a role until SIGTERM/SIGINT. `argv` excludes `node`, the script and the role's name. */
export async function runRole<C>(
  spec: RoleSpec<C>,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const loaded = await loadRoleOptions(spec, argv, env);
  if (loaded === undefined) return;
  const pino = createPino(loaded.logLevel, spec.role);
  routeGrpcLogs(pino);
  const logger = pinoAdapter(pino);
  let running: RunningRole;
  try {
    running = await spec.start(loaded.config, {
      logger,
      pino,
      ...(loaded.advertise === undefined ? {} : { advertise: loaded.advertise }),
    });
  } catch (e) {
    logger.error('startup failed', { error: message(e) });
    process.stderr.write(`monsoon ${spec.role}: ${message(e)}\n`);
    process.exit(spec.isUsageError?.(e) ? EXIT_USAGE : EXIT_FAILURE);
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals | 'parent exited'): void => {
    if (stopping) {
      logger.warn('second signal: exiting without waiting', { signal });
      process.exit(EXIT_FAILURE);
    }
    stopping = true;
    logger.info('shutting down', { signal, ...running.status?.() });
    const deadline = setTimeout(() => {
      logger.error('stop overran its deadline: exiting', { ms: STOP_DEADLINE_MS });
      process.exit(EXIT_FAILURE);
    }, STOP_DEADLINE_MS);
    deadline.unref();
    running.close().then(
      () => {
        logger.info('stopped', { signal, ...running.status?.() });
        process.exit(0);
      },
      (e: unknown) => {
        logger.error('shutdown failed', { error: message(e) });
        process.exit(EXIT_FAILURE);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (env[PARENT_PIPE_ENV] === 'stdin') {
    // Not for this process's own children: their stdin is no pipe from here.
    delete env[PARENT_PIPE_ENV];
    watchParent(() => {
      if (!stopping) stop('parent exited');
    });
  }
  logger.info('listening', {
    ...running.listening,
    advertise: advertisedAddress(running.listening.address, loaded.advertise),
  });
}
