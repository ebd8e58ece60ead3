/**
 * The structured logger the durability layer reports to (pino-compatible in spirit:
 * a message plus a metadata object, no string building).
 */
export interface Logger {
  info(msg: string, meta?: Record<string, unknown>): void;
  warn(msg: string, meta?: Record<string, unknown>): void;
}

/** The default logger: says nothing. */
export const silentLogger: Logger = {
  info() {},
  warn() {},
};
