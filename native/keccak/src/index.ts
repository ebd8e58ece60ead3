export { KECCAK256_EMPTY, KECCAK256_RLP_EMPTY } from './constants.js';
export { jsKeccak } from './jsKeccak.js';
export { keccak, keccakBackend } from './keccak.js';
export { nativeKeccak } from './nativeKeccak.js';
export type { Keccak, KeccakBackend } from './types.js';
