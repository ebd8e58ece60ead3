/** Structured JSON logs on stdout (pino), behind the roles' Logger interface. */
import { format } from 'node:util';
import { setLogger } from '@grpc/grpc-js';
import { type Logger as Pino, pino } from 'pino';
import type { Logger, LogLevel } from './logger.js';

/**
 * A pino logger writing one JSON object per line to stdout, synchronously: a line (such as
 * `listening`) is out before the next thing happens, and nothing is lost on exit. Every line
 * carries the process id and `role` (`storage`, `miner`, …).
 */
export function createPino(level: LogLevel, role: string): Pino {
  return pino(
    { level, base: { pid: process.pid, role }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: 1, sync: true }),
  );
}

/** `log.info(msg, meta)` (the roles' convention) onto pino's `log.info(meta, msg)`. */
export function pinoAdapter(p: Pino): Required<Logger> {
  return {
    info: (msg, meta) => p.info(meta ?? {}, msg),
    warn: (msg, meta) => p.warn(meta ?? {}, msg),
    error: (msg, meta) => p.error(meta ?? {}, msg),
    debug: (msg, meta) => p.debug(meta ?? {}, msg),
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
