/**
 * The shape every Monsoon error shares: a domain code, a message that starts with it, and
 * structured metadata whose shape is declared per code. Each domain subclasses it with its own
 * code enum and metadata map (DsmError, ProtocolError, StorageError, …); edges map codes to
 * statuses.
 */

/** Metadata of a code whose shape is not declared: any plain fields. */
export type ErrorMeta = Readonly<Record<string, unknown>>;

/** The metadata of a code that carries none. */
export type NoMeta = Readonly<Record<string, never>>;

/** The metadata shape of each code of `Code`: what a domain declares for its errors. */
export type ErrorMetaMap<Code extends string> = { readonly [K in Code]: object };

/** Every code's metadata left open ({@link ErrorMeta}): a domain that does not declare shapes. */
export type OpenErrorMeta<Code extends string> = { readonly [K in Code]: ErrorMeta };

/**
 * The constructor arguments, one tuple per code: the metadata must have that code's shape, and
 * may be left out only when every field of that shape is optional.
 */
export type CodedErrorArgs<Code extends string, Meta extends ErrorMetaMap<Code>> = {
  // biome-ignore lint/complexity/noBannedTypes: `{} extends X` asks whether every field of X is optional.
  [K in Code]: {} extends Meta[K]
    ? [code: K, message: string, meta?: Meta[K], cause?: unknown]
    : [code: K, message: string, meta: Meta[K], cause?: unknown];
}[Code];

/**
 * An error narrowed to one of its codes: `meta` has that code's shape. What a domain's
 * `isXError(e, code)` guard narrows to.
 */
export interface WithCode<K extends string, M> {
  readonly code: K;
  readonly meta: Readonly<M> & ErrorMeta;
}

/**
 * A domain error: `code` from the domain's enum, a message that says what was expected and what
 * was found (prefixed with the code), and `meta` of the shape the domain declares for that code,
 * so `new DsmError(DsmErrorCode.HashMismatch, message, { expected, found })` is type-checked.
 * `meta` also reads as a plain record (a logger spreads it; a reader of an unknown code gets
 * `unknown` fields).
 */
export class CodedError<
  Code extends string = string,
  Meta extends ErrorMetaMap<Code> = OpenErrorMeta<Code>,
> extends Error {
  readonly code: Code;
  readonly meta: Readonly<Meta[Code]> & ErrorMeta;

  constructor(...args: CodedErrorArgs<Code, Meta>) {
    const [code, message, meta, cause] = args as [Code, string, Meta[Code] | undefined, unknown];
    super(`${code}: ${message}`, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.code = code;
    this.meta = (meta ?? {}) as Readonly<Meta[Code]> & ErrorMeta;
  }

  /** The message without its `CODE: ` prefix (to carry it into another domain's error). */
  get detail(): string {
    return this.message.slice(this.code.length + 2);
  }
}

/**
 * The `isXError(e, code?)` guard of a domain's error class: true when `e` is one of its errors
 * (of `code`, when given), narrowing `code` and `meta` to that code's. Give the metadata map when
 * the domain declares one: `codedErrorGuard<DsmError, DsmErrorMeta>(DsmError)`.
 */
export function codedErrorGuard<
  E extends Error & { readonly code: string },
  Meta extends ErrorMetaMap<E['code']> = OpenErrorMeta<E['code']>,
>(
  cls: abstract new (...args: never) => E,
): <K extends E['code'] = E['code']>(e: unknown, code?: K) => e is E & WithCode<K, Meta[K]> {
  return <K extends E['code'] = E['code']>(e: unknown, code?: K): e is E & WithCode<K, Meta[K]> =>
    e instanceof cls && (code === undefined || e.code === code);
}
