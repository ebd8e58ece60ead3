import { nativeKeccak, nativeLoadError } from './nativeKeccak.js';
import { selectKeccak } from './selectKeccak.js';
import type { Keccak, KeccakBackend } from './types.js';

/**
 * The Keccak-256 to use: the native addon when it loaded, else `@noble/hashes`.
 * `MONSOON_KECCAK=js` forces the JS backend; `MONSOON_KECCAK=native` makes importing
 * this package throw if the addon is missing.
 */
export const keccak: Keccak = selectKeccak(process.env.MONSOON_KECCAK, nativeKeccak, nativeLoadError);

/** Which backend {@link keccak} is, for logs and benchmarks. */
export function keccakBackend(): KeccakBackend {
  return keccak.backend;
}
