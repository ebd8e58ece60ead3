import { hexToBytes } from '@noble/hashes/utils.js';

/** keccak256 of the empty string: Ethereum's hash of empty code. Do not mutate. */
export const KECCAK256_EMPTY: Uint8Array = hexToBytes(
  'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470',
);

/** keccak256(0x80), the hash of RLP(""): the root of an empty Merkle Patricia Trie. Do not mutate. */
export const KECCAK256_RLP_EMPTY: Uint8Array = hexToBytes(
  '56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421',
);
