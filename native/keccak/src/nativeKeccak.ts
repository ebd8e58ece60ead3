import type { KeccakBinding } from './loadNative.js';
import { loadNative } from './loadNative.js';
import type { Keccak } from './types.js';

const loaded = loadNative();

/** Why the addon could not be loaded; undefined when it loaded. */
export const nativeLoadError: unknown = loaded.error;

function fromBinding(binding: KeccakBinding): Keccak {
  // The addon's functions find their per-environment state through their own data
  // pointer, not `this`, so they can be handed out as they are.
  return Object.freeze({
    backend: 'native',
    keccak256: binding.keccak256,
    keccak256Batch: binding.keccak256Batch,
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
