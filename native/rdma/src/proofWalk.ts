/**
 * Self-verifying walks over nodes fetched by hash: from a state root the caller trusts (from the
 * chain) down a key's path, each node fetched by the hash its parent names (the fetch verifies
 * it), so the value and proof a walk returns are exactly what that root commits to. The proof is
 * the Ethereum one (eth_getProof, DsmTree.prove): every hashed node from the root down; embedded
 * nodes (< 32 bytes) are read inside their parent.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { RdmaError, RdmaErrorCode } from './rdmaError.js';

/** A verified node by hash, or undefined when it can't be had this way. */
export type NodeFetch = (hash: Uint8Array) => Uint8Array | undefined;

export interface TrieWalk {
  /** The leaf's value (RLP-decoded string bytes), undefined when the key is absent. */
  readonly value: Uint8Array | undefined;
  /** The hashed nodes from the root down the key's path. */
  readonly proof: Uint8Array[];
}

/** keccak256(rlp("")): the root of an empty trie. */
export const EMPTY_TRIE_ROOT = Uint8Array.from(
  Buffer.from('56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421', 'hex'),
);

interface Item {
  /** Start and end of the payload (for a list: its items). */
  start: number;
  end: number;
  /** Start of the whole item (header included). */
  at: number;
  list: boolean;
}

/** The item at `pos` of `b` (throws on malformed RLP: the node is what its parent committed to, so a chain's own bug). */
function item(b: Uint8Array, pos: number, limit: number): Item {
  if (pos >= limit) throw bad('item runs past its list');
  const p = b[pos]!;
  let start: number;
  let len: number;
  let list = false;
  if (p < 0x80) return { start: pos, end: pos + 1, at: pos, list: false };
  if (p <= 0xb7) {
    start = pos + 1;
    len = p - 0x80;
  } else if (p < 0xc0) {
    const n = p - 0xb7;
    len = readLen(b, pos + 1, n);
    start = pos + 1 + n;
  } else if (p <= 0xf7) {
    list = true;
    start = pos + 1;
    len = p - 0xc0;
  } else {
    list = true;
    const n = p - 0xf7;
    len = readLen(b, pos + 1, n);
    start = pos + 1 + n;
  }
  if (start + len > limit) throw bad('item longer than its container');
  return { start, end: start + len, at: pos, list };
}

function readLen(b: Uint8Array, pos: number, n: number): number {
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + b[pos + i]!;
  return len;
}

function bad(why: string): RdmaError {
  return new RdmaError(RdmaErrorCode.BadRegion, `a verified trie node is malformed: ${why}`);
}

/** The items of the list node `b` (at most 17). */
function items(b: Uint8Array, outer: Item): Item[] {
  if (!outer.list) throw bad('a trie node is not an RLP list');
  const out: Item[] = [];
  for (let pos = outer.start; pos < outer.end; ) {
    const it = item(b, pos, outer.end);
    out.push(it);
    pos = it.end;
    if (out.length > 17) throw bad('a list of more than 17 items');
  }
  return out;
}

/** The nibbles of a 32-byte key. */
function nibbles(key: Uint8Array): Uint8Array {
  const n = new Uint8Array(key.length * 2);
  for (let i = 0; i < key.length; i++) {
    n[2 * i] = key[i]! >> 4;
    n[2 * i + 1] = key[i]! & 15;
  }
  return n;
}

/**
 * Walks the trie at `root` to `key` (32 bytes, already hashed). Undefined when a node on the
 * path could not be fetched (the caller asks elsewhere); otherwise the value and proof.
 */
export function walkTrie(fetch: NodeFetch, root: Uint8Array, key: Uint8Array): TrieWalk | undefined {
  const proof: Uint8Array[] = [];
  if (sameBytes(root, EMPTY_TRIE_ROOT)) return { value: undefined, proof };
  const path = nibbles(key);
  let pos = 0;
  let node = fetch(root);
  if (node === undefined) return undefined;
  proof.push(node);
  let cur: Item = item(node, 0, node.length);
  for (;;) {
    const its = items(node, cur);
    let child: Item;
    if (its.length === 17) {
      if (pos === path.length) return { value: stringOf(node, its[16]!), proof };
      child = its[path[pos++]!]!;
    } else if (its.length === 2) {
      const hp = its[0]!;
      if (hp.list || hp.end === hp.start) throw bad('a leaf or extension path is not a string');
      const flag = node[hp.start]! >> 4;
      const leaf = flag >= 2;
      const odd = (flag & 1) === 1;
      const seg: number[] = [];
      if (odd) seg.push(node[hp.start]! & 15);
      for (let i = hp.start + 1; i < hp.end; i++) seg.push(node[i]! >> 4, node[i]! & 15);
      let match = pos + seg.length <= path.length;
      for (let i = 0; match && i < seg.length; i++) if (path[pos + i] !== seg[i]) match = false;
      if (leaf)
        return {
          value: match && pos + seg.length === path.length ? stringOf(node, its[1]!) : undefined,
          proof,
        };
      if (!match) return { value: undefined, proof };
      pos += seg.length;
      child = its[1]!;
    } else throw bad(`a node of ${its.length} items`);
    if (child.list) {
      // Embedded in its parent: read in place, not part of the proof.
      cur = child;
      continue;
    }
    const len = child.end - child.start;
    if (len === 0) return { value: undefined, proof };
    if (len !== 32) throw bad(`a child reference of ${len} bytes`);
    const next = fetch(node.subarray(child.start, child.end));
    if (next === undefined) return undefined;
    proof.push(next);
    node = next;
    cur = item(node, 0, node.length);
  }
}

function stringOf(b: Uint8Array, it: Item): Uint8Array | undefined {
  if (it.list) throw bad('a value is a list');
  return it.end === it.start ? undefined : b.slice(it.start, it.end);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** An account as a query asks for it, and what a walk answers. */
export interface WalkQuery {
  readonly address: Uint8Array;
  readonly slots: readonly Uint8Array[];
  readonly code: boolean;
}

export interface WalkAnswer {
  readonly address: Uint8Array;
  /** The account's RLP, undefined when it does not exist. */
  readonly accountRlp: Uint8Array | undefined;
  readonly accountProof: Uint8Array[];
  /** Each slot's value without leading zeros (empty when unset), in query order. */
  readonly slotValues: Uint8Array[];
  readonly storageProofs: Uint8Array[][];
  /** The code when asked and the account has some, else empty. */
  readonly code: Uint8Array;
}

const EMPTY_CODE_HASH = Uint8Array.from(
  Buffer.from('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470', 'hex'),
);

/**
 * An account (with its slots and code) at `stateRoot`, every node fetched through `fetch`;
 * undefined when some node or the code could not be fetched.
 */
export function walkAccount(
  fetch: NodeFetch,
  stateRoot: Uint8Array,
  q: WalkQuery,
  keccak: Keccak = defaultKeccak,
): WalkAnswer | undefined {
  const acct = walkTrie(fetch, stateRoot, keccak.keccak256(q.address));
  if (acct === undefined) return undefined;
  const slotValues: Uint8Array[] = [];
  const storageProofs: Uint8Array[][] = [];
  let code: Uint8Array = new Uint8Array(0);
  if (acct.value !== undefined) {
    const fields = items(acct.value, item(acct.value, 0, acct.value.length));
    if (fields.length !== 4) throw bad(`an account of ${fields.length} fields`);
    const storageRoot = acct.value.subarray(fields[2]!.start, fields[2]!.end);
    const codeHash = acct.value.subarray(fields[3]!.start, fields[3]!.end);
    for (const slot of q.slots) {
      const s = walkTrie(fetch, storageRoot, keccak.keccak256(slot));
      if (s === undefined) return undefined;
      let v = new Uint8Array(0);
      if (s.value !== undefined) {
        const it = item(s.value, 0, s.value.length);
        if (it.list) throw bad('a storage value is a list');
        v = s.value.slice(it.start, it.end);
      }
      slotValues.push(v);
      storageProofs.push(s.proof);
    }
    if (q.code && !sameBytes(codeHash, EMPTY_CODE_HASH)) {
      const c = fetch(codeHash);
      if (c === undefined) return undefined;
      code = c;
    }
  } else {
    for (let i = 0; i < q.slots.length; i++) {
      slotValues.push(new Uint8Array(0));
      storageProofs.push([]);
    }
  }
  return {
    address: q.address,
    accountRlp: acct.value,
    accountProof: acct.proof,
    slotValues,
    storageProofs,
    code,
  };
}
