import { createRequire } from 'node:module';

/** The exports of the C++ addon (src/keccak.cc); see {@link Keccak} for the semantics. */
export interface KeccakBinding {
  keccak256(data: Uint8Array): Uint8Array;
  keccak256Batch(inputs: readonly Uint8Array[]): Uint8Array;
  keccak256Packed(data: Uint8Array, offsets: Uint32Array, count: number, out?: Uint8Array): Uint8Array;
  keccak256Tree(
    data: Uint8Array,
    offsets: Uint32Array,
    patch: Int32Array,
    count: number,
    out?: Uint8Array,
  ): Uint8Array;
  keccak256BatchAsync(inputs: readonly Uint8Array[]): Promise<Uint8Array>;
}

/** The addon as node-gyp builds it; src/ and dist/ are both one level below the package root. */
export const NATIVE_ADDON_PATH = '../build/Release/keccak.node';

/** The loaded addon, or why it could not be loaded. */
export type NativeLoad =
  | { binding: KeccakBinding; error?: undefined }
  | { binding?: undefined; error: unknown };

/** Loads the addon without throwing. */
export function loadNative(): NativeLoad {
  try {
    return { binding: createRequire(import.meta.url)(NATIVE_ADDON_PATH) as KeccakBinding };
  } catch (error) {
    return { error };
  }
}
