import type { KeccakBinding } from './loadNative.js';
import { loadNative } from './loadNative.js';
import type { Keccak } from './types.js';

const loaded = loadNative();

/** Why the addon could not be loaded; undefined when it loaded. */
export const nativeLoadError: unknown = loaded.error;

/**
 * keccak256Batch as one keccak256Packed call: the inputs copied back to back here, in JS, where
 * the addon's Batch would check and read each element through N-API (~9% of a 1,000-account
 * walk's client CPU went to those per-element calls). Anything but an array of Uint8Arrays, and
 * batches past 4 GiB (32-bit offsets), go to the addon's Batch, which throws or copies as before.
 */
function packedBatch(binding: KeccakBinding): (inputs: readonly Uint8Array[]) => Uint8Array {
  return (inputs) => {
    if (!Array.isArray(inputs)) return binding.keccak256Batch(inputs);
    const n = inputs.length;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const x = inputs[i];
      if (!(x instanceof Uint8Array)) return binding.keccak256Batch(inputs);
      total += x.length;
    }
    if (total > 0xffffffff) return binding.keccak256Batch(inputs);
    const data = new Uint8Array(total);
    const offsets = new Uint32Array(n + 1);
    let at = 0;
    for (let i = 0; i < n; i++) {
      const x = inputs[i]!;
      data.set(x, at);
      at += x.length;
      offsets[i + 1] = at;
    }
    return binding.keccak256Packed(data, offsets, n);
  };
}

function fromBinding(binding: KeccakBinding): Keccak {
  // The addon's functions find their per-environment state through their own data
  // pointer, not `this`, so they can be handed out as they are.
  return Object.freeze({
    backend: 'native',
    keccak256: binding.keccak256,
    keccak256Batch: packedBatch(binding),
    keccak256Packed: binding.keccak256Packed,
    keccak256Tree: binding.keccak256Tree,
    keccak256BatchAsync: binding.keccak256BatchAsync,
  });
}

/**
 * Keccak-256 from the C++ addon (build/Release/keccak.node), or undefined when it is
 * not built or fails to load. Results are Node Buffers (which are Uint8Arrays).
 */
export const nativeKeccak: Keccak | undefined = loaded.binding && fromBinding(loaded.binding);
