/** The official ethereum/tests TrieTests vectors, plain and secure trie. */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { DsmTree, fromHex, toHex, verifyProof } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';

const dir = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/ethereum-tests');

function bytesOf(s: string | null): Uint8Array {
  if (s === null) return new Uint8Array(0);
  return s.startsWith('0x') ? fromHex(s) : new TextEncoder().encode(s);
}

type Op = [string, string | null];
const plain = JSON.parse(readFileSync(join(dir, 'trietest.json'), 'utf8')) as Record<
  string,
  { in: Op[]; root: string }
>;
const secure = JSON.parse(readFileSync(join(dir, 'hex_encoded_securetrie_test.json'), 'utf8')) as Record<
  string,
  { data: Op[]; result: string }
>;

describe('trietest.json (plain trie)', () => {
  it.each(Object.entries(plain))('%s', (_name, t) => {
    const tree = new DsmTree();
    const final = new Map<string, Uint8Array>();
    for (const [k, v] of t.in) {
      const key = bytesOf(k);
      const value = bytesOf(v);
      tree.put(key, value); // an empty value deletes, as in Ethereum
      if (value.length === 0) final.delete(toHex(key));
      else final.set(toHex(key), value);
    }
    expect(`0x${toHex(tree.root())}`).toBe(t.root);
    for (const [k, v] of final) {
      const key = fromHex(k);
      expect(tree.get(key)).toEqual(new Uint8Array(v));
      expect(verifyProof(tree.root(), key, tree.prove(key))).toEqual(new Uint8Array(v));
    }
  });
});

describe('hex_encoded_securetrie_test.json (secure trie)', () => {
  it.each(Object.entries(secure))('%s', (_name, t) => {
    const tree = new DsmTree();
    for (const [k, v] of t.data) tree.put(keccak.keccak256(bytesOf(k)), bytesOf(v));
    expect(`0x${toHex(tree.root())}`).toBe(t.result);
  });
});
