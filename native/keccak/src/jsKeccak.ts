import { keccak_256 } from '@noble/hashes/sha3.js';
import type { Keccak } from './types.js';
import { parsePackedCall, requireBytes, requireInputs } from './validate.js';

function keccak256(data: Uint8Array): Uint8Array {
  return keccak_256(requireBytes(data, 'keccak256', 'data'));
}

function hashBatch(inputs: readonly Uint8Array[], fn: string): Uint8Array {
  const list = requireInputs(inputs, fn);
  const out = new Uint8Array(list.length * 32);
  for (let i = 0; i < list.length; i++)
    out.set(keccak_256(requireBytes(list[i], fn, `inputs[${i}]`)), 32 * i);
  return out;
}

function keccak256Packed(
  data: Uint8Array,
  offsets: Uint32Array,
  count: number,
  out?: Uint8Array,
): Uint8Array {
  const call = parsePackedCall('keccak256Packed', data, offsets, undefined, count, out, false);
  const off = call.offsets;
  for (let i = 0; i < call.count; i++)
    call.out.set(keccak_256(call.data.subarray(off[i], off[i + 1])), 32 * i);
  return out ?? call.out;
}

function keccak256Tree(
  data: Uint8Array,
  offsets: Uint32Array,
  patch: Int32Array,
  count: number,
  out?: Uint8Array,
): Uint8Array {
  const call = parsePackedCall('keccak256Tree', data, offsets, patch, count, out, true);
  const off = call.offsets;
  const holes = call.patch!;
  for (let i = 0; i < call.count; i++) {
    const digest = keccak_256(call.data.subarray(off[i], off[i + 1]));
    call.out.set(digest, 32 * i);
    if (holes[i]! >= 0) call.data.set(digest, holes[i]!);
  }
  return out ?? call.out;
}

/**
 * Keccak-256 in pure JS (`@noble/hashes`): the fallback when the addon is not built,
 * and the reference the addon is tested against. Same semantics and errors as the
 * native backend.
 */
export const jsKeccak: Keccak = Object.freeze({
  backend: 'js',
  keccak256,
  keccak256Batch: (inputs: readonly Uint8Array[]) => hashBatch(inputs, 'keccak256Batch'),
  keccak256Packed,
  keccak256Tree,
  keccak256BatchAsync: async (inputs: readonly Uint8Array[]) => hashBatch(inputs, 'keccak256BatchAsync'),
});
