/** A random write applied to a tree and its model alike. */
import type { DsmTree } from '@monsoon/dsm-tree';
import type { Prng } from '@monsoon/test-utils';
import { hex, type Model, unhex } from './reference.js';

export interface WriteGen {
  /** A key to write: usually new, sometimes one already there. */
  newKey: () => Uint8Array;
  value: () => Uint8Array;
  /** Probability that a write deletes an existing key. */
  pDelete: number;
}

/**
 * One of: delete an existing key (by del, or by putting an empty value), overwrite one
 * (sometimes with the same value), delete a key that is usually absent, or put a new key.
 * Returns the key written.
 */
export function randomWrite(r: Prng, tree: DsmTree, model: Model, gen: WriteGen): Uint8Array {
  const keys = [...model.keys()];
  const x = r.next();
  if (keys.length > 0 && x < gen.pDelete) {
    const k = unhex(r.pick(keys));
    if (r.chance(0.2)) tree.put(k, new Uint8Array(0));
    else tree.del(k);
    model.delete(hex(k));
    return k;
  }
  if (keys.length > 0 && x < gen.pDelete + 0.2) {
    const h = r.pick(keys);
    const v = r.chance(0.1) ? model.get(h)!.slice() : gen.value();
    tree.put(unhex(h), v);
    model.set(h, v);
    return unhex(h);
  }
  const k = gen.newKey();
  if (x < gen.pDelete + 0.25) {
    tree.del(k);
    model.delete(hex(k));
  } else {
    const v = gen.value();
    tree.put(k, v);
    model.set(hex(k), v);
  }
  return k;
}
