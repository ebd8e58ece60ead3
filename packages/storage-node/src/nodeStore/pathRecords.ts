/**
 * Path records: beside `hash → node`, a tiered store's LevelDB holds for every account-trie node
 * a record under its nibble path, `PATH_TAG ‖ depth ‖ nibbles → hash ‖ node` (the node written
 * last at that path). A read that meets a cold node at depth d on a key's path asks, in the same
 * round trip as that node, for the records at the next depths of the key's path: a cold path
 * comes back in one round trip instead of one per trie level.
 *
 * A record is a hint, never an answer: its node is used only if it hashes to the hash stored
 * with it (else it is refused and reported: corrupt) and that hash is the child its parent
 * (fetched by hash, or accepted on the same path before it) names on the key's path (else it is
 * another version's node at that path: ignored). So versions, forks, the sweep and crash order
 * need nothing from them: the node under its hash stays the truth, and a record missing,
 * stale or lost in a crash only costs the round trips it would have saved.
 */
import { keyNibble } from '@monsoon/dsm-tree';
import { type RlpValue, rlpDecode } from '@monsoon/util';

/** The first byte of a path record's key (node keys are 32-byte hashes: no clash, see pathKey). */
export const PATH_TAG = 0x70;
/** A path record's key length: tag, depth, 32 bytes of nibbles zero-padded (never 32 like a node's key). */
export const PATH_KEY_BYTES = 34;
/**
 * The LevelDB key saying every node of the store's starting state has its record (see
 * TieredStore.start); blocks write the records of their nodes with the nodes.
 */
export const PATH_INDEX_KEY = Buffer.from('monsoon:path-records-v1', 'latin1');

/** The record key of the node at the first `depth` nibbles of `path` (packed two a byte, as a trie key). */
export function pathKey(path: Uint8Array, depth: number): Buffer {
  // From Node's buffer pool (Buffer.alloc makes an ArrayBuffer each: thousands a round trip).
  const k = Buffer.allocUnsafe(PATH_KEY_BYTES).fill(0);
  k[0] = PATH_TAG;
  k[1] = depth;
  const whole = depth >> 1;
  k.set(path.subarray(0, whole), 2);
  if (depth & 1) k[2 + whole] = path[whole]! & 0xf0;
  return k;
}

/** A record's value: the node's hash (32 bytes, latin1 string) then its encoding. */
export function pathValue(hash: string, enc: string | Uint8Array): Buffer {
  const v = Buffer.allocUnsafe(32 + enc.length);
  v.write(hash, 0, 32, 'latin1');
  if (typeof enc === 'string') v.write(enc, 32, enc.length, 'latin1');
  else v.set(enc, 32);
  return v;
}

/** A compact (hex-prefix) path's nibbles, and whether it is a leaf's. */
function compactPath(b: Uint8Array): { nibbles: number[]; leaf: boolean } {
  const flag = b.length > 0 ? b[0]! >> 4 : 0;
  const nibbles: number[] = [];
  if (flag & 1) nibbles.push(b[0]! & 15);
  for (let i = 1; i < b.length; i++) nibbles.push(b[i]! >> 4, b[i]! & 15);
  return { nibbles, leaf: flag >= 2 };
}

/** A child reference that is a hash (32 bytes; an inline child is part of its parent's encoding). */
const hashRef = (c: RlpValue | undefined): Uint8Array | undefined =>
  c !== undefined && !Array.isArray(c) && c.length === 32 ? c : undefined;

/** A byte string as a binary (latin1) string, the form hashes take as keys in the store. */
export const binOf = (b: Uint8Array): string =>
  Buffer.from(b.buffer, b.byteOffset, b.length).toString('latin1');

/** Where an RLP item starts (`at`) has its payload (`data`) and ends (`end`); list: whether it is a list. */
const item = { data: 0, end: 0, list: false };

/** Reads the RLP item header at `at` into `item` (no allocation: a scan of a node on every cold read's path). */
function readItem(b: Uint8Array, at: number): void {
  const p = b[at]!;
  item.list = p >= 0xc0;
  const short = item.list ? 0xc0 : 0x80;
  const long = item.list ? 0xf7 : 0xb7;
  if (!item.list && p < 0x80) {
    item.data = at;
    item.end = at + 1;
  } else if (p <= long) {
    item.data = at + 1;
    item.end = at + 1 + p - short;
  } else {
    const n = p - long;
    let len = 0;
    for (let k = 1; k <= n; k++) len = len * 256 + b[at + k]!;
    item.data = at + 1 + n;
    item.end = item.data + len;
  }
}

/**
 * The node that follows `enc` (at nibble `depth`) on `key`'s path, if it is a node of its own:
 * its hash (latin1) and depth. Undefined at a leaf, a key that leaves the path, an inline child.
 * Scans the encoding in place (no decoded node): it runs for each node a round trip brings
 * along a key's path.
 */
export function nextOnPath(
  enc: Uint8Array,
  key: Uint8Array,
  depth: number,
): { hash: string; depth: number } | undefined {
  if (enc.length === 0) return undefined;
  readItem(enc, 0);
  if (!item.list || item.end > enc.length) return undefined;
  const end = item.end;
  // The first two items, then whether more follow (a branch) or not (a leaf or an extension).
  readItem(enc, item.data);
  const firstData = item.data;
  const firstEnd = item.end;
  const firstList = item.list;
  if (firstEnd >= end) return undefined;
  readItem(enc, firstEnd);
  if (item.end < end) {
    if (depth >= key.length * 2) return undefined;
    let at = firstEnd;
    let target = keyNibble(key, depth);
    if (target === 0) {
      if (firstList || firstEnd - firstData !== 32) return undefined;
      return { hash: binOf(enc.subarray(firstData, firstEnd)), depth: depth + 1 };
    }
    while (--target > 0) {
      at = item.end;
      if (at >= end) return undefined;
      readItem(enc, at);
    }
    if (item.list || item.end - item.data !== 32) return undefined;
    return { hash: binOf(enc.subarray(item.data, item.end)), depth: depth + 1 };
  }
  if (item.end !== end || firstList || firstEnd === firstData) return undefined;
  // A leaf or an extension: its compact path (flag nibble: 0/1 extension, 2/3 leaf; 1/3 odd).
  const flag = enc[firstData]! >> 4;
  if (flag >= 2) return undefined;
  const nibbles = (firstEnd - firstData - 1) * 2 + (flag & 1);
  if (depth + nibbles > key.length * 2) return undefined;
  let d = depth;
  if (flag & 1 && keyNibble(key, d++) !== (enc[firstData]! & 15)) return undefined;
  for (let i = firstData + 1; i < firstEnd; i++) {
    if (keyNibble(key, d++) !== enc[i]! >> 4 || keyNibble(key, d++) !== (enc[i]! & 15)) return undefined;
  }
  if (item.list || item.end - item.data !== 32) return undefined;
  return { hash: binOf(enc.subarray(item.data, item.end)), depth: d };
}

/**
 * Each child of `enc` (at nibble `depth`, on the nibbles of `path` before it) that is a node of
 * its own, with its depth: `path` holds the child's nibbles when `visit` is called (the
 * deeper ones are the caller's to overwrite). An account leaf's storage root is not a child here.
 */
export function forEachChildOnPath(
  enc: Uint8Array,
  depth: number,
  path: Uint8Array,
  visit: (hash: string, depth: number) => void,
): void {
  const node = rlpDecode(enc);
  if (!Array.isArray(node)) return;
  const set = (i: number, n: number): void => {
    path[i >> 1] = i & 1 ? (path[i >> 1]! & 0xf0) | n : (path[i >> 1]! & 0x0f) | (n << 4);
  };
  if (node.length === 17) {
    if (depth >= 64) return;
    for (let i = 0; i < 16; i++) {
      const ref = hashRef(node[i]);
      if (ref === undefined) continue;
      set(depth, i);
      visit(binOf(ref), depth + 1);
    }
    return;
  }
  if (node.length !== 2 || Array.isArray(node[0])) return;
  const { nibbles, leaf } = compactPath(node[0]!);
  const ref = hashRef(node[1]);
  if (leaf || ref === undefined || depth + nibbles.length > 64) return;
  for (let i = 0; i < nibbles.length; i++) set(depth + i, nibbles[i]!);
  visit(binOf(ref), depth + nibbles.length);
}

/**
 * Places the nodes `encs` holds (hash → encoding) that hang from `hash` (at nibble `depth`)
 * through each other: `at` is called for each with its depth while `path` holds its first
 * `depth` nibbles (the deeper ones are overwritten as the walk goes on). What a block's new
 * nodes and a streamed genesis bucket's nodes need to get their path records.
 */
export function placeNodes(
  encs: ReadonlyMap<string, string>,
  hash: string,
  depth: number,
  path: Uint8Array,
  at: (hash: string, enc: string, depth: number) => void,
): void {
  const walk = (h: string, d: number): void => {
    const enc = encs.get(h);
    if (enc === undefined) return;
    at(h, enc, d);
    forEachChildOnPath(Buffer.from(enc, 'latin1'), d, path, walk);
  };
  walk(hash, depth);
}
