/**
 * Field checks shared by the converters. Each takes the field's path for the error, so a
 * refusal reads `BAD_LENGTH: shards[1].accounts[0].address: expected 20 bytes, found 19`.
 */
import { bigintToBytes } from '@monsoon/util';
import { type FieldFault, ProtocolError, ProtocolErrorCode } from '../protocolError.js';

export const ADDRESS_LENGTH = 20;
export const HASH_LENGTH = 32;
export const SLOT_LENGTH = 32;
/** Largest 64-bit unsigned value, the range of proto uint64 (block numbers, nonces). */
export const MAX_UINT64 = (1n << 64n) - 1n;
/** Largest 32-bit unsigned value, the range of proto uint32. */
export const MAX_UINT32 = 0xffff_ffff;
/** A trie path is at most 64 nibbles deep, so omitting more levels than that means nothing. */
export const MAX_OMIT_LEVELS = 64;

export function fail(code: ProtocolErrorCode, field: string, expected: string, found: string): never {
  throw new ProtocolError(code, `${field}: expected ${expected}, found ${found}`, { field, expected, found });
}

/**
 * The bytes as a plain Uint8Array. Decoded fields are views into the received message (a Node
 * Buffer under grpc-js); re-viewing them, without a copy, gives callers Uint8Array semantics
 * (`slice()` copies) as STYLE.md asks of APIs.
 */
export function plain(b: Uint8Array): Uint8Array {
  return b.constructor === Uint8Array ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** `b`, which must be exactly `length` bytes. */
export function fixed(b: Uint8Array, length: number, field: string): Uint8Array {
  if (b.length !== length) fail(ProtocolErrorCode.BadLength, field, `${length} bytes`, `${b.length}`);
  return plain(b);
}

/** `bs`, each exactly `length` bytes. */
export function fixedList(bs: readonly Uint8Array[], length: number, field: string): Uint8Array[] {
  return eachIn(bs, field, (b) => fixed(b, length, ''));
}

/** `b`, which must not be empty. */
export function nonEmpty(b: Uint8Array, field: string): Uint8Array {
  if (b.length === 0) fail(ProtocolErrorCode.MissingField, field, 'non-empty bytes', 'empty');
  return plain(b);
}

/** `bs`, each non-empty (trie nodes, transactions: none is ever zero bytes long). */
export function nonEmptyList(bs: readonly Uint8Array[], field: string): Uint8Array[] {
  return eachIn(bs, field, (b) => nonEmpty(b, ''));
}

/**
 * `xs` converted by `f`, whose checks name fields relative to the element (`address`, or '' for
 * the element itself): a refusal is renamed `field[i].address` on its way out. Converters see
 * thousands of elements a message (a block's accounts, a bag's nodes, a batch's results), and
 * building each one's path up front cost more than checking it; only a refusal needs its path.
 */
export function eachIn<T, R>(xs: readonly T[], field: string, f: (x: T, i: number) => R): R[] {
  const out = new Array<R>(xs.length);
  let i = 0;
  try {
    for (; i < xs.length; i++) out[i] = f(xs[i]!, i);
  } catch (e) {
    throw under(e, `${field}[${i}]`);
  }
  return out;
}

/** `e` with the field it names put under `prefix` (a ProtocolError's; anything else is returned as it is). */
export function under(e: unknown, prefix: string): unknown {
  if (!(e instanceof ProtocolError) || e.code === ProtocolErrorCode.BadGenesis) return e;
  const { field, expected, found } = e.meta as FieldFault;
  const named = field === '' ? prefix : field.startsWith('[') ? `${prefix}${field}` : `${prefix}.${field}`;
  return new ProtocolError(e.code, `${named}: expected ${expected}, found ${found}`, {
    field: named,
    expected,
    found,
  });
}

/** `n`, which must be an integer in [0, max]. */
export function uintInRange<T extends number | bigint>(n: T, max: T, field: string, what: string): T {
  const ok = typeof n === 'bigint' ? n >= 0n && n <= max : Number.isInteger(n) && n >= 0 && n <= max;
  if (!ok) fail(ProtocolErrorCode.BadQuantity, field, what, String(n));
  return n;
}

export function uint64(n: bigint, field: string): bigint {
  return uintInRange(n, MAX_UINT64, field, 'an unsigned 64-bit integer');
}

export function uint32(n: number, field: string): number {
  return uintInRange(n, MAX_UINT32, field, 'an unsigned 32-bit integer');
}

export function omitLevels(n: number, field: string): number {
  return uintInRange(n, MAX_OMIT_LEVELS, field, `0 to ${MAX_OMIT_LEVELS} levels`);
}

/**
 * A quantity as big-endian bytes that are minimal: no leading zero byte, empty for zero, at
 * most `maxBytes` long (what Ethereum's RLP stores for balances and slot values).
 */
export function minimalBytes(b: Uint8Array, maxBytes: number, field: string): Uint8Array {
  if (b.length > maxBytes)
    fail(ProtocolErrorCode.BadQuantity, field, `at most ${maxBytes} bytes`, `${b.length} bytes`);
  if (b.length > 0 && b[0] === 0)
    fail(
      ProtocolErrorCode.BadQuantity,
      field,
      'minimal big-endian bytes (no leading zero byte)',
      'a leading zero byte',
    );
  return plain(b);
}

/** Big-endian bytes of at most `maxBytes`, leading zeros allowed; returns them without the leading zeros. */
export function trimmedBytes(b: Uint8Array, maxBytes: number, field: string): Uint8Array {
  if (b.length > maxBytes)
    fail(ProtocolErrorCode.BadQuantity, field, `at most ${maxBytes} bytes`, `${b.length} bytes`);
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return plain(b).subarray(i);
}

/** A bigint in [0, 2^(8·maxBytes)) → minimal big-endian bytes (empty for 0). */
export function quantityBytes(n: bigint, maxBytes: number, field: string): Uint8Array {
  uintInRange(n, (1n << BigInt(8 * maxBytes)) - 1n, field, `an unsigned ${8 * maxBytes}-bit integer`);
  return bigintToBytes(n);
}

/** Fails with `Inconsistent` unless `ok`. */
export function consistent(ok: boolean, field: string, expected: string, found: string): void {
  if (!ok) fail(ProtocolErrorCode.Inconsistent, field, expected, found);
}

/** Fails with `MissingField` for an absent required value. */
export function missing(field: string, expected: string): never {
  return fail(ProtocolErrorCode.MissingField, field, expected, 'nothing');
}

/** Fails with `BadEnum`. */
export function badEnum(field: string, expected: string, found: string): never {
  return fail(ProtocolErrorCode.BadEnum, field, expected, found);
}

/** Fails with `BadShard`. */
export function badShard(field: string, expected: string, found: string): never {
  return fail(ProtocolErrorCode.BadShard, field, expected, found);
}
