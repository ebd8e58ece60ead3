/** Structured JSON logs on stdout (pino), behind the node's and the server's logger interface. */
import { format } from 'node:util';
import { setLogger } from '@grpc/grpc-js';
import { type Logger as Pino, pino } from 'pino';
import type { ServerLogger } from '../server/storageServer.js';
import type { LogLevel } from './storageConfig.js';

/**
 * A pino logger writing one JSON object per line to stdout, synchronously: a line (such as
 * `listening`) is out before the next thing happens, and nothing is lost on exit.
 */
export function createPino(level: LogLevel): Pino {
  return pino(
    { level, base: { pid: process.pid, role: 'storage' }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: 1, sync: true }),
  );
}

/** `log.info(msg, meta)` (the node's convention) onto pino's `log.info(meta, msg)`. */
export function pinoAdapter(p: Pino): Required<ServerLogger> {
  return {
    info: (msg, meta) => p.info(meta ?? {}, msg),
    warn: (msg, meta) => p.warn(meta ?? {}, msg),
    debug: (msg, meta) => p.debug(meta ?? {}, msg),
    error: (msg, meta) => p.error(meta ?? {}, msg),
  };
}

/** grpc-js's own messages (it writes them to stderr by default) as log lines. */
export function routeGrpcLogs(p: Pino): void {
  const to =
    (level: 'error' | 'info' | 'debug') =>
    (...args: unknown[]): void =>
      p[level]({ source: 'grpc-js' }, format(...args));
  setLogger({ error: to('error'), info: to('info'), debug: to('debug') });
}
