import { DsmTree } from '@monsoon/dsm-tree';
import type { Prng } from '@monsoon/test-utils';
import { key32, value } from './keys.js';
import { hex, type Model, unhex } from './reference.js';

/**
 * A trie of `n` random keys (some next to an earlier one: long shared paths, extensions, small
 * leaves embedded deep in their parents) with values of 1 to `maxValue` bytes: the model, the
 * root, and every node's encoding by hash (a binary string).
 */
export function randomTrie(
  r: Prng,
  n: number,
  maxValue: number,
): { model: Model; root: Uint8Array; nodes: Map<string, Uint8Array> } {
  const model: Model = new Map();
  while (model.size < n) {
    const ks = [...model.keys()];
    model.set(
      hex(key32(r, ks.length > 0 && r.int(3) === 0 ? unhex(r.pick(ks)) : undefined)),
      value(r, 1, maxValue),
    );
  }
  const tree = new DsmTree();
  for (const [k, v] of model) tree.put(unhex(k), v);
  const nodes = new Map<string, Uint8Array>();
  tree.forEachNode((h, enc) => nodes.set(h, Buffer.from(enc, 'latin1')));
  return { model, root: tree.root(), nodes };
}
