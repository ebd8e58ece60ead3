/**
 * The reference: @ethereumjs/mpt, always built FRESH by inserts only. Its incremental delete is
 * wrong when a key is a prefix of another (a branch holding a value), so no reference trie here
 * ever sees a delete: a model Map is kept instead and a new trie built from it when needed.
 */
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { keccak_256 } from '@noble/hashes/sha3.js';

/** keccak256 from @noble/hashes: independent of the native addon the tree may use. */
export function refKeccak(data: Uint8Array): Uint8Array {
  return keccak_256(data);
}

export function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');
}

export function unhex(h: string): Uint8Array {
  return new Uint8Array(Buffer.from(h, 'hex'));
}

/** A model of a tree's contents: hex key → value. */
export type Model = Map<string, Uint8Array>;

/** A fresh ethereumjs trie holding exactly `model`. */
export async function ethTrie(model: Model): Promise<MerklePatriciaTrie> {
  const trie = new MerklePatriciaTrie();
  for (const [k, v] of model) await trie.put(unhex(k), v);
  return trie;
}

/** The root (hex) a fresh ethereumjs trie of `model` has. */
export async function ethRoot(model: Model): Promise<string> {
  return hex((await ethTrie(model)).root());
}

export const EMPTY_ROOT_HEX = '56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
