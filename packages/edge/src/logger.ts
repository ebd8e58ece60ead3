/**
 * The structured logger every role reports to: a message plus a metadata object, no string
 * building (pino's fields, in `log.info(msg, meta)` order). `pinoAdapter` gives one over pino.
 */
export interface Logger {
  info(msg: string, meta?: Record<string, unknown>): void;
  warn(msg: string, meta?: Record<string, unknown>): void;
  error(msg: string, meta?: Record<string, unknown>): void;
  /** Per-request detail; most loggers leave it out. */
  debug?(msg: string, meta?: Record<string, unknown>): void;
}

/** The default logger: says nothing. */
export const silentLogger: Logger = {
  info() {},
  warn() {},
  error() {},
};

/** pino's levels, as the roles' `--log-level` flags accept them. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
