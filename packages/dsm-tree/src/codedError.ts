/**
 * The shape every Monsoon error shares: a domain code, a message that starts with it, and
 * structured metadata. Each domain subclasses it with its own code enum (DsmError,
 * ProtocolError, StorageError); edges map codes to statuses.
 */
export class CodedError<C extends string> extends Error {
  readonly code: C;
  readonly meta: Readonly<Record<string, unknown>>;

  constructor(code: C, message: string, meta: Record<string, unknown> = {}, cause?: unknown) {
    super(`${code}: ${message}`, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.code = code;
    this.meta = meta;
  }
}
