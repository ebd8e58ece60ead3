/**
 * Hex: bare lower-case hex for keys and logs (`toHex`/`fromHex`), and `0x`-hex as JSON edges write
 * it (`bytesToHex`/`hexToBytes`, strict about the prefix and an even digit count;
 * `quantityToHex` for numbers).
 */
import { BytesError, BytesErrorCode } from './bytesError.js';

const HEX_DIGITS = /^[0-9a-fA-F]*$/;

/** Lower-case hex without prefix. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex');
}

/** `0x` followed by two lower-case hex digits per byte. */
export function bytesToHex(bytes: Uint8Array): `0x${string}` {
  return `0x${toHex(bytes)}`;
}

/** A JSON-RPC quantity: `0x` and the shortest hex of `n` (`0x0` for zero). */
export function quantityToHex(n: bigint | number): `0x${string}` {
  return `0x${n.toString(16)}`;
}

/** Hex with or without `0x` → bytes. Throws a BadHex BytesError on an odd length or a non-hex digit. */
export function fromHex(hex: string): Uint8Array {
  const h = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (h.length % 2 !== 0 || !HEX_DIGITS.test(h)) badHex(hex, 'hex digits, an even number of them');
  return new Uint8Array(Buffer.from(h, 'hex'));
}

/**
 * The bytes of a `0x`-prefixed hex string with an even number of digits; `length`, when given,
 * is the number of bytes it must hold. Throws a BadHex BytesError otherwise.
 */
export function hexToBytes(hex: string, length?: number): Uint8Array {
  if (!hex.startsWith('0x') || hex.length % 2 !== 0 || !HEX_DIGITS.test(hex.slice(2))) {
    badHex(hex, '0x-hex with an even number of digits', length);
  }
  const bytes = new Uint8Array(Buffer.from(hex.slice(2), 'hex'));
  if (length !== undefined && bytes.length !== length) {
    throw new BytesError(BytesErrorCode.BadHex, `expected ${length} bytes, found ${bytes.length}`, {
      found: hex.slice(0, 80),
      expectedBytes: length,
    });
  }
  return bytes;
}

function badHex(hex: string, expected: string, expectedBytes?: number): never {
  const found = hex.slice(0, 80);
  throw new BytesError(BytesErrorCode.BadHex, `expected ${expected}, found ${JSON.stringify(found)}`, {
    found,
    ...(expectedBytes === undefined ? {} : { expectedBytes }),
  });
}
