/**
 * Readers for the kinds of JSON value in a geth genesis.json. Each accepts what geth's decoder
 * for that field accepts and nothing more: math.HexOrDecimal64 / HexOrDecimal256 (a string or a
 * number, hex with 0x or decimal, "" is 0), hexutil.Bytes and common.Address / common.Hash (a
 * string that must start with 0x), common.UnprefixedAddress (0x optional), the alloc's storage
 * words (0x optional, at most 32 bytes, left-padded), and the plain JSON numbers that geth's
 * ChainConfig decodes into *big.Int and *uint64. Anything else is refused with a BadGenesis
 * ProtocolError naming the field.
 *
 * Where JavaScript cannot do what Go does, the reader refuses rather than guesses: a JSON number
 * above 2^53 (JSON.parse has already rounded it; write it as a string), and a sign on a 256-bit
 * quantity (Go's big.Int reads "-5"; no balance or difficulty can be negative).
 */
import { ProtocolError, ProtocolErrorCode } from '../protocolError.js';

/** Throws the BadGenesis error for `field` (a path such as `alloc[0x12…].balance`). */
export function badGenesis(field: string, message: string, meta: Record<string, unknown> = {}): never {
  throw new ProtocolError(ProtocolErrorCode.BadGenesis, `genesis ${field}: ${message}`, { field, ...meta });
}

const show = (v: unknown): string => JSON.stringify(v) ?? String(v);

/** A JSON number that is a non-negative integer JSON.parse read exactly. */
function exactInteger(v: number, field: string): bigint {
  if (!Number.isInteger(v) || v < 0) badGenesis(field, `expected a non-negative integer, found ${v}`);
  if (!Number.isSafeInteger(v)) {
    badGenesis(
      field,
      `${v} is above 2^53 and cannot be read exactly from a JSON number; write it as a string`,
    );
  }
  return BigInt(v);
}

/**
 * geth's math.HexOrDecimal64 (`bits` 64) or HexOrDecimal256 (`bits` 256): a JSON number, or a
 * string that is empty (0), 0x/0X followed by hex digits, or decimal digits. Absent or null gives
 * `dflt`, or is refused when there is none (a field geth requires).
 */
export function hexOrDecimal(v: unknown, field: string, bits: 64 | 256, dflt?: bigint): bigint {
  if (v === undefined || v === null) {
    if (dflt !== undefined) return dflt;
    return badGenesis(field, 'missing (geth requires it)');
  }
  let n: bigint;
  if (typeof v === 'number') n = exactInteger(v, field);
  else if (typeof v !== 'string')
    return badGenesis(field, `expected a hex or decimal integer, found ${show(v)}`);
  else if (v === '') n = 0n;
  else if (/^0[xX][0-9a-fA-F]+$/.test(v)) n = BigInt(`0x${v.slice(2)}`);
  else if (/^[0-9]+$/.test(v)) n = BigInt(v);
  else {
    return badGenesis(field, `expected a hex (0x…) or decimal integer, found ${show(v)}`, { found: v });
  }
  if (n >= 1n << BigInt(bits)) badGenesis(field, `${show(v)} does not fit ${bits} bits`, { found: v });
  return n;
}

/**
 * A chain config number, which geth decodes as a *big.Int or *uint64 straight from JSON: a JSON
 * number only (a string is refused, as geth refuses it). Absent or null is undefined.
 */
export function jsonNumber(v: unknown, field: string, bits?: 64): bigint | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number') {
    return badGenesis(
      field,
      `expected a JSON number (geth reads chain config numbers as JSON numbers, not strings), found ${show(v)}`,
      { found: v },
    );
  }
  const n = exactInteger(v, field);
  if (bits !== undefined && n >= 1n << BigInt(bits)) badGenesis(field, `${v} does not fit ${bits} bits`);
  return n;
}

/** What {@link hexBytes} requires of the string. */
export interface HexBytesRules {
  /** The exact length in bytes (common.Address 20, common.Hash 32). */
  readonly length?: number;
  /** Whether 0x may be left out (common.UnprefixedAddress); default false, as hexutil requires it. */
  readonly unprefixed?: boolean;
}

/** hexutil.Bytes, common.Address, common.Hash or common.UnprefixedAddress; absent or null gives `dflt`. */
export function hexBytes(v: unknown, field: string, rules: HexBytesRules, dflt: Uint8Array): Uint8Array {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'string') return badGenesis(field, `expected a 0x-prefixed hex string, found ${show(v)}`);
  const prefixed = v.startsWith('0x') || v.startsWith('0X');
  if (!prefixed && rules.unprefixed !== true) {
    badGenesis(field, `hex string without 0x prefix: ${show(v)}`, { found: v });
  }
  const h = prefixed ? v.slice(2) : v;
  if (!/^[0-9a-fA-F]*$/.test(h)) badGenesis(field, `invalid hex string: ${show(v)}`, { found: v });
  if (h.length % 2 !== 0) badGenesis(field, `hex string of odd length: ${show(v)}`, { found: v });
  const b = new Uint8Array(Buffer.from(h, 'hex'));
  if (rules.length !== undefined && b.length !== rules.length) {
    badGenesis(field, `expected ${rules.length} bytes, found ${b.length}`, {
      expected: rules.length,
      found: b.length,
    });
  }
  return b;
}

/**
 * A storage key or value of an alloc entry (geth's storageJSON): a string with an optional
 * lowercase 0x, an even number of at most 64 hex digits, left-padded to 32 bytes.
 */
export function storageWord(v: unknown, field: string): Uint8Array {
  if (typeof v !== 'string') return badGenesis(field, `expected a hex string, found ${show(v)}`);
  const h = v.startsWith('0x') ? v.slice(2) : v;
  if (h.length > 64)
    badGenesis(field, `too many hex characters in storage key/value ${show(v)}`, { found: v });
  if (h.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(h)) {
    badGenesis(field, `invalid hex storage key/value ${show(v)}`, { found: v });
  }
  const out = new Uint8Array(32);
  out.set(Buffer.from(h, 'hex'), 32 - h.length / 2);
  return out;
}

/** A JSON object (not null, not an array), or undefined when absent; anything else is refused. */
export function jsonObject(v: unknown, field: string): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v))
    return badGenesis(field, `expected an object, found ${show(v)}`);
  return v as Record<string, unknown>;
}
