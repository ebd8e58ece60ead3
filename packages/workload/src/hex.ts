/** 0x-hex conversions for the JSON edges (genesis documents, logs). */
import { WorkloadError, WorkloadErrorCode } from './workloadError.js';

/** `0x` followed by two lowercase hex digits per byte. */
export function bytesToHex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
}

/** The bytes of a 0x-prefixed hex string with an even number of digits; `length` checks the size. */
export function hexToBytes(hex: string, length?: number): Uint8Array {
  if (!/^0x([0-9a-fA-F]{2})*$/.test(hex)) {
    throw new WorkloadError(
      WorkloadErrorCode.BadHex,
      `expected 0x-hex with an even number of digits, found ${JSON.stringify(hex.slice(0, 80))}`,
      { hex: hex.slice(0, 80) },
    );
  }
  const bytes = new Uint8Array(Buffer.from(hex.slice(2), 'hex'));
  if (length !== undefined && bytes.length !== length) {
    throw new WorkloadError(WorkloadErrorCode.BadHex, `expected ${length} bytes, found ${bytes.length}`, {
      expected: length,
      found: bytes.length,
    });
  }
  return bytes;
}

/** A JSON-RPC style quantity: `0x` and the shortest hex of `n` (`0x0` for zero). */
export function quantityToHex(n: bigint): string {
  return `0x${n.toString(16)}`;
}

/** `n` as a 32-byte big-endian word (`n` must be below 2^256). */
export function bigintToWord(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let v = n;
  for (let i = 31; i >= 0 && v > 0n; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}
