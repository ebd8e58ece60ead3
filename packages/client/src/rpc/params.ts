/**
 * Parameter decoders: JSON in, domain values out, refusing what geth refuses with geth's words
 * (its `hexutil` errors, and Go's `json: cannot unmarshal … into Go value of type …` where geth
 * lets the JSON decoder speak). Callers that compare messages with a geth node see the same.
 */
import { fromHex } from '@monsoon/dsm-tree';
import type { AccessListEntry, BlockTag, CallRequest, NamedBlockTag } from './backend.js';

/**
 * Why one parameter was refused (answered as `invalid argument N: <message>`). A JSON type
 * error also carries what Go would report, so a struct field can name itself.
 */
export class ArgError extends Error {
  constructor(
    message: string,
    readonly mismatch?: { readonly value: string; readonly goType: string },
  ) {
    super(message);
    this.name = 'ArgError';
  }
}

/** Decodes one JSON value that is present (the caller handles missing and null). */
export type Decoder<T> = (v: unknown) => T;

/** hexutil's errors. */
const HEX_ERR = {
  emptyString: 'empty hex string',
  syntax: 'invalid hex string',
  missingPrefix: 'hex string without 0x prefix',
  oddLength: 'hex string of odd length',
  emptyNumber: 'hex string "0x"',
  leadingZero: 'hex number with leading zero digits',
  uint64Range: 'hex number > 64 bits',
  big256Range: 'hex number > 256 bits',
} as const;

const HEX_DIGITS = /^[0-9a-fA-F]*$/;
const DECIMAL = /^[0-9]+$/;
const MAX_INT64 = (1n << 63n) - 1n;
const MAX_UINT64 = (1n << 64n) - 1n;

/** Go's name for the JSON type of `v`, as its type errors print it. */
export function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** Go's `*json.UnmarshalTypeError` for a top-level value. */
export function mismatch(value: string, goType: string): ArgError {
  return new ArgError(`json: cannot unmarshal ${value} into Go value of type ${goType}`, { value, goType });
}

/** Runs a hexutil check, turning its error into a type error for `goType` (as `wrapTypeError`). */
function typed<T>(goType: string, check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof HexError) throw mismatch(e.message, goType);
    throw e;
  }
}

/** A hexutil decoding error (its message is hexutil's). */
class HexError extends Error {}

function has0x(s: string): boolean {
  return s.length >= 2 && s[0] === '0' && (s[1] === 'x' || s[1] === 'X');
}

/** hexutil `checkText`: empty is allowed, else a 0x prefix and an even number of digits. */
function checkText(s: string): string {
  if (s === '') return '';
  if (!has0x(s)) throw new HexError(HEX_ERR.missingPrefix);
  const digits = s.slice(2);
  if (digits.length % 2 !== 0) throw new HexError(HEX_ERR.oddLength);
  return digits;
}

/** hexutil `checkNumberText`: empty is 0, else 0x and digits without a leading zero. */
function checkNumberText(s: string): string {
  if (s === '') return '';
  if (!has0x(s)) throw new HexError(HEX_ERR.missingPrefix);
  const digits = s.slice(2);
  if (digits === '') throw new HexError(HEX_ERR.emptyNumber);
  if (digits.length > 1 && digits[0] === '0') throw new HexError(HEX_ERR.leadingZero);
  return digits;
}

/** The number of checked digits, at most `maxDigits` of them. */
function hexNumber(digits: string, maxDigits: number, rangeError: string): bigint {
  if (digits.length > maxDigits) throw new HexError(rangeError);
  if (!HEX_DIGITS.test(digits)) throw new HexError(HEX_ERR.syntax);
  return digits === '' ? 0n : BigInt(`0x${digits}`);
}

/** hexutil `DecodeUint64` (block numbers): like a quantity, but the empty string is refused. */
function decodeUint64(s: string): bigint {
  if (s === '') throw new HexError(HEX_ERR.emptyString);
  return hexNumber(checkNumberText(s), 16, HEX_ERR.uint64Range);
}

function stringOr(goType: string, v: unknown): string {
  if (typeof v !== 'string') throw mismatch('non-string', goType);
  return v;
}

/**
 * hexutil.Decode (geth's own decoding of addresses and topics in filter criteria): `0x` and an
 * even number of hex digits, not empty; throws ArgError with hexutil's message (a bad digit
 * anywhere is reported before an odd length, as Go's encoding/hex does).
 */
export function hexutilDecode(s: string): Uint8Array {
  if (s === '') throw new ArgError(HEX_ERR.emptyString);
  if (!has0x(s)) throw new ArgError(HEX_ERR.missingPrefix);
  const digits = s.slice(2);
  if (!HEX_DIGITS.test(digits)) throw new ArgError(HEX_ERR.syntax);
  if (digits.length % 2 !== 0) throw new ArgError(HEX_ERR.oddLength);
  return fromHex(digits);
}

/** rpc.ID (filter and subscription ids): any JSON string. */
export const idArg: Decoder<string> = (v) => {
  if (typeof v !== 'string') throw mismatch(jsonKind(v), 'rpc.ID');
  return v;
};

/** hexutil.Bytes: `0x`-prefixed, even length; `""` and `"0x"` are empty. */
export const bytesArg: Decoder<Uint8Array> = (v) => {
  const digits = typed('hexutil.Bytes', () => checkText(stringOr('hexutil.Bytes', v)));
  if (!HEX_DIGITS.test(digits)) throw mismatch(HEX_ERR.syntax, 'hexutil.Bytes');
  return fromHex(digits);
};

/** A fixed-length byte string (common.Address, common.Hash). */
function fixedArg(goType: string, bytes: number): Decoder<Uint8Array> {
  return (v) => {
    const digits = typed(goType, () => checkText(stringOr(goType, v)));
    if (digits.length !== 2 * bytes) {
      throw new ArgError(`hex string has length ${digits.length}, want ${2 * bytes} for ${goType}`);
    }
    if (!HEX_DIGITS.test(digits)) throw mismatch(HEX_ERR.syntax, goType);
    return fromHex(digits);
  };
}

/** 20 bytes. */
export const addressArg = fixedArg('common.Address', 20);
/** 32 bytes. */
export const hashArg = fixedArg('common.Hash', 32);

/** A QUANTITY of at most `bits` bits, refused as Go type `goType` (*hexutil.Big, hexutil.Uint64, …). */
function quantityArg(goType: string, bits: 64 | 256): Decoder<bigint> {
  const rangeError = bits === 64 ? HEX_ERR.uint64Range : HEX_ERR.big256Range;
  return (v) => typed(goType, () => hexNumber(checkNumberText(stringOr(goType, v)), bits / 4, rangeError));
}

/** *hexutil.Big: a QUANTITY of at most 256 bits. */
export const bigArg = quantityArg('*hexutil.Big', 256);
/** hexutil.Uint64. */
export const uint64Arg = quantityArg('hexutil.Uint64', 64);
/** hexutil.Uint (64 bits, as on geth's platforms): transaction indexes. */
export const uintArg = quantityArg('hexutil.Uint', 64);

export const boolArg: Decoder<boolean> = (v) => {
  if (typeof v !== 'boolean') throw mismatch(jsonKind(v), 'bool');
  return v;
};

export const stringArg: Decoder<string> = (v) => {
  if (typeof v !== 'string') throw mismatch(jsonKind(v), 'string');
  return v;
};

/** A JSON array of `goType` elements. */
function listArg<T>(goType: string, element: Decoder<T>): Decoder<T[]> {
  return (v) => {
    if (!Array.isArray(v)) throw mismatch(jsonKind(v), `[]${goType}`);
    return v.map(element);
  };
}

/** []string. */
export const stringsArg = listArg('string', stringArg);

/** []float64. */
export const floatsArg = listArg('float64', (v) => {
  if (typeof v !== 'number') throw mismatch(jsonKind(v), 'float64');
  return v;
});

/** math.HexOrDecimal64: a decimal or 0x-hex integer, as a JSON string or number. */
export const hexOrDecimal64Arg: Decoder<bigint> = (v) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  let n: bigint | undefined;
  if (s === '') n = 0n;
  else if (has0x(s)) n = s.length > 2 && HEX_DIGITS.test(s.slice(2)) ? BigInt(s) : undefined;
  else n = DECIMAL.test(s) ? BigInt(s) : undefined;
  if (n === undefined || n > MAX_UINT64)
    throw new ArgError(`invalid hex or decimal integer ${JSON.stringify(s)}`);
  return n;
};

const NAMED_TAGS: ReadonlySet<string> = new Set<NamedBlockTag>([
  'latest',
  'pending',
  'earliest',
  'safe',
  'finalized',
]);

/** A tag or a block number, from the text of a JSON string (or of any other JSON value). */
function blockNumberText(s: string, tooHigh: string): BlockTag {
  if (NAMED_TAGS.has(s)) return { kind: s as NamedBlockTag };
  let number: bigint;
  try {
    number = decodeUint64(s);
  } catch (e) {
    if (e instanceof HexError) throw new ArgError(e.message);
    throw e;
  }
  if (number > MAX_INT64) throw new ArgError(tooHigh);
  return { kind: 'number', number };
}

/** rpc.BlockNumber (eth_getBlockByNumber, eth_feeHistory): a tag or a QUANTITY, no hash. */
export const blockNumberArg: Decoder<BlockTag> = (v) =>
  blockNumberText(typeof v === 'string' ? v : JSON.stringify(v), 'block number larger than int64');

/**
 * rpc.BlockNumberOrHash (state queries): a tag, a QUANTITY, a 32-byte hash, or EIP-1898's
 * `{blockNumber}` / `{blockHash, requireCanonical?}`.
 */
export const blockTagArg: Decoder<BlockTag> = (v) => {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const struct = 'BlockNumberOrHash';
    const number = field(o, struct, 'blockNumber', blockNumberArg);
    const hash = field(o, struct, 'blockHash', hashArg);
    const requireCanonical = field(o, struct, 'requireCanonical', boolArg);
    if (number !== undefined && hash !== undefined) {
      throw new ArgError('cannot specify both BlockHash and BlockNumber, choose one or the other');
    }
    if (hash !== undefined) return { kind: 'hash', hash, requireCanonical: requireCanonical ?? false };
    if (number !== undefined) return number;
    throw new ArgError('invalid arguments; neither block nor hash specified');
  }
  if (typeof v !== 'string') throw mismatch(jsonKind(v), 'string');
  if (v.length === 66) {
    // common.Hash's UnmarshalText: its errors are plain, not JSON type errors.
    if (!has0x(v)) throw new ArgError(HEX_ERR.missingPrefix);
    if (!HEX_DIGITS.test(v.slice(2))) throw new ArgError(HEX_ERR.syntax);
    return { kind: 'hash', hash: fromHex(v) };
  }
  return blockNumberText(v, 'blocknumber too high');
};

/**
 * A field of a JSON object, undefined when absent or null. A type error names the field as
 * Go does: `… into Go struct field TransactionArgs.from of type common.Address`.
 */
export function field<T>(
  o: Record<string, unknown>,
  struct: string,
  name: string,
  decode: Decoder<T>,
): T | undefined {
  const v = o[name];
  if (v === undefined || v === null) return undefined;
  try {
    return decode(v);
  } catch (e) {
    if (e instanceof ArgError && e.mismatch !== undefined) {
      const { value, goType } = e.mismatch;
      throw new ArgError(
        `json: cannot unmarshal ${value} into Go struct field ${struct}.${name} of type ${goType}`,
      );
    }
    throw e;
  }
}

/** A JSON object, refused as Go type `goType` otherwise. */
export function objectArg(v: unknown, goType: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw mismatch(jsonKind(v), goType);
  return v as Record<string, unknown>;
}

/** types.AccessList: `[{address, storageKeys}]`. */
const accessListArg: Decoder<AccessListEntry[]> = listArg('types.AccessTuple', (v) => {
  const o = objectArg(v, 'types.AccessTuple');
  return {
    address: field(o, 'AccessTuple', 'address', addressArg) ?? new Uint8Array(20),
    storageKeys: field(o, 'AccessTuple', 'storageKeys', listArg('common.Hash', hashArg)) ?? [],
  };
});

/** The request's fields in geth's TransactionArgs, before the checks geth makes of them. */
export interface CallArgs extends CallRequest {
  /** `input`, when given. */
  readonly input?: Uint8Array;
  readonly chainId?: bigint;
}

/** TransactionArgs' fields (JSON names are the CallArgs names) and their Go types. */
const CALL_FIELDS: { readonly [K in keyof CallArgs]-?: Decoder<NonNullable<CallArgs[K]>> } = {
  from: addressArg,
  to: addressArg,
  gas: uint64Arg,
  gasPrice: bigArg,
  maxFeePerGas: bigArg,
  maxPriorityFeePerGas: bigArg,
  value: bigArg,
  nonce: uint64Arg,
  data: bytesArg,
  input: bytesArg,
  accessList: accessListArg,
  chainId: bigArg,
};

/** ethapi.TransactionArgs (eth_call, eth_estimateGas): unknown fields are ignored. */
export const callArg: Decoder<CallArgs> = (v) => {
  const o = objectArg(v, 'ethapi.TransactionArgs');
  const args: Record<string, unknown> = {};
  for (const [name, decode] of Object.entries(CALL_FIELDS)) {
    const value = field(o, 'TransactionArgs', name, decode as Decoder<unknown>);
    if (value !== undefined) args[name] = value;
  }
  return args as CallArgs;
};

/**
 * A storage slot as geth's `decodeHash` reads it: 0x optional, an odd digit count padded, at
 * most 32 bytes, left-padded to 32. `inputLength` is how many bytes were given (eth_getProof
 * echoes 32-byte keys as they are, others as QUANTITY). Throws ArgError with geth's message,
 * which geth answers as a method error (-32000), not as an invalid argument.
 */
export function storageKey(s: string): { slot: Uint8Array; inputLength: number } {
  let digits = has0x(s) ? s.slice(2) : s;
  if (digits.length % 2 !== 0) digits = `0${digits}`;
  if (!HEX_DIGITS.test(digits)) throw new ArgError('hex string invalid');
  const inputLength = digits.length / 2;
  if (inputLength > 32) throw new ArgError('hex string too long, want at most 32 bytes');
  return { slot: fromHex(digits.padStart(64, '0')), inputLength };
}
