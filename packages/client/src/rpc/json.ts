/** JSON values and the two hex encodings of the Ethereum JSON-RPC spec. */
import { toHex } from '@monsoon/dsm-tree';

/** A value JSON.stringify writes as it is. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** QUANTITY: `0x` and the shortest hex digits (`0x0` for zero). */
export function quantity(n: bigint | number): string {
  return `0x${n.toString(16)}`;
}

/** DATA: `0x` and two hex digits per byte. */
export function hexData(bytes: Uint8Array): string {
  return `0x${toHex(bytes)}`;
}
