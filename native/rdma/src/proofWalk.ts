/**
 * Self-verifying walks over nodes fetched by hash: from a state root the caller trusts (from the
 * chain) down a key's path, each node fetched by the hash its parent names (the fetch verifies
 * it), so the value and proof a walk returns are exactly what that root commits to. The proof is
 * the Ethereum one (eth_getProof, DsmTree.prove): every hashed node from the root down; embedded
 * nodes (< 32 bytes) are read inside their parent.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { RdmaError, RdmaErrorCode } from './rdmaError.js';

/**
 * A verified node by hash, or undefined when it can't be had this way. The bytes must be the
 * fetcher's own copy, never changed afterwards (answers keep views into them).
 */
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

/**
 * The RLP item at `pos` (not past `limit`): sets `it` to its payload [start, end), whether it is a
 * list, and where the next item starts (`next`). Throws on malformed RLP: a node that passed its
 * hash check is what its parent committed to, so that would be the chain's own bug. No allocation
 * (the walk runs per node read).
 */
interface Item {
  start: number;
  end: number;
  list: boolean;
}

function item(b: Uint8Array, pos: number, limit: number, it: Item): void {
  if (pos >= limit) throw bad('item runs past its list');
  const p = b[pos]!;
  let start: number;
  let len: number;
  let list = false;
  if (p < 0x80) {
    start = pos;
    len = 1;
  } else if (p <= 0xb7) {
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
  it.start = start;
  it.end = start + len;
  it.list = list;
}

function readLen(b: Uint8Array, pos: number, n: number): number {
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + b[pos + i]!;
  return len;
}

function bad(why: string): RdmaError {
  return new RdmaError(RdmaErrorCode.BadRegion, `a verified trie node is malformed: ${why}`);
}

/** How many items the list payload [start, end) of `b` holds (stops counting past 17). */
function countItems(b: Uint8Array, start: number, end: number, scratch: Item): number {
  let n = 0;
  for (let pos = start; pos < end && n <= 17; n++) {
    item(b, pos, end, scratch);
    pos = scratch.end;
  }
  return n;
}

/** Sets `it` to item `index` of the list payload [start, end) of `b`. */
function nth(b: Uint8Array, start: number, end: number, index: number, it: Item): void {
  let pos = start;
  for (let i = 0; ; i++) {
    item(b, pos, end, it);
    if (i === index) return;
    pos = it.end;
  }
}

/**
 * One key's walk down a trie, a node at a time: `need` is the hash of the node it waits for
 * (the root first); `give(node)` hands it that node (verified by the caller) and runs on through
 * nodes embedded in it until it needs another or is done (`need` undefined, `value` set).
 */
class TrieCursor {
  need: Uint8Array | undefined;
  value: Uint8Array | undefined = undefined;
  readonly proof: Uint8Array[] = [];
  private pos = 0;
  private readonly it: Item = { start: 0, end: 0, list: false };
  private readonly sub: Item = { start: 0, end: 0, list: false };

  constructor(
    root: Uint8Array,
    private readonly key: Uint8Array,
  ) {
    this.need = sameBytes(root, EMPTY_TRIE_ROOT) ? undefined : root;
  }

  give(node: Uint8Array): void {
    this.proof.push(node);
    const { it, sub, key } = this;
    item(node, 0, node.length, it);
    for (;;) {
      if (!it.list) throw bad('a trie node is not an RLP list');
      const ls = it.start;
      const le = it.end;
      const n = countItems(node, ls, le, sub);
      if (n === 17) {
        if (this.pos === 64) {
          nth(node, ls, le, 16, it);
          this.done(stringOf(node, it));
          return;
        }
        nth(node, ls, le, nibbleOf(key, this.pos++), it);
      } else if (n === 2) {
        item(node, ls, le, sub); // the hex-prefix path
        if (sub.list || sub.end === sub.start) throw bad('a leaf or extension path is not a string');
        const flag = node[sub.start]! >> 4;
        let match = true;
        let p = this.pos;
        if ((flag & 1) === 1) {
          if (nibbleOf(key, p) !== (node[sub.start]! & 15)) match = false;
          p++;
        }
        for (let i = sub.start + 1; match && i < sub.end; i++) {
          if (nibbleOf(key, p) !== node[i]! >> 4 || nibbleOf(key, p + 1) !== (node[i]! & 15)) match = false;
          p += 2;
        }
        item(node, sub.end, le, it); // the value or child
        if (flag >= 2 || !match) {
          this.done(flag >= 2 && match && p === 64 ? stringOf(node, it) : undefined);
          return;
        }
        this.pos = p;
      } else throw bad(`a node of ${n} items`);
      if (it.list) continue; // embedded in its parent: read in place, not part of the proof
      const len = it.end - it.start;
      if (len === 0) {
        this.done(undefined);
        return;
      }
      if (len !== 32) throw bad(`a child reference of ${len} bytes`);
      this.need = node.subarray(it.start, it.end);
      return;
    }
  }

  private done(value: Uint8Array | undefined): void {
    this.value = value;
    this.need = undefined;
  }
}

/**
 * Walks the trie at `root` to `key` (32 bytes, already hashed). Undefined when a node on the
 * path could not be fetched (the caller asks elsewhere); otherwise the value and proof.
 */
export function walkTrie(fetch: NodeFetch, root: Uint8Array, key: Uint8Array): TrieWalk | undefined {
  const c = new TrieCursor(root, key);
  while (c.need !== undefined) {
    const node = fetch(c.need);
    if (node === undefined) return undefined;
    c.give(node);
  }
  return { value: c.value, proof: c.proof };
}

/** Verified nodes by hash, many at once, in order (undefined where one can't be had). */
export type NodeFetchMany = (hashes: readonly Uint8Array[]) => (Uint8Array | undefined)[];

/**
 * Many walks level by level: every walk's next node is fetched in one call per level, each
 * distinct node once (the upper levels are shared by every key), as one RDMA doorbell would
 * post them. `walks[i]` is a trie root and a key; the answers are walkTrie's, in order.
 */
export function walkMany(fetch: NodeFetchMany, walks: readonly TrieWalkQuery[]): (TrieWalk | undefined)[] {
  const cursors = walks.map((w) => new TrieCursor(w.root, w.key));
  const failed = new Uint8Array(cursors.length);
  for (;;) {
    const want = new Map<string, { hash: Uint8Array; waiting: number[] }>();
    cursors.forEach((c, i) => {
      if (c.need === undefined || failed[i]) return;
      const k = Buffer.from(c.need.buffer, c.need.byteOffset, 32).toString('latin1');
      const w = want.get(k);
      if (w === undefined) want.set(k, { hash: c.need, waiting: [i] });
      else w.waiting.push(i);
    });
    if (want.size === 0) break;
    const level = [...want.values()];
    const nodes = fetch(level.map((w) => w.hash));
    level.forEach((w, j) => {
      const node = nodes[j];
      for (const i of w.waiting) {
        if (node === undefined) failed[i] = 1;
        else cursors[i]!.give(node);
      }
    });
  }
  return cursors.map((c, i) => (failed[i] ? undefined : { value: c.value, proof: c.proof }));
}

function nibbleOf(key: Uint8Array, i: number): number {
  if (i >= 64) return -1;
  return i & 1 ? key[i >> 1]! & 15 : key[i >> 1]! >> 4;
}

/**
 * A string item's payload, as a view: the nodes a walk is handed are its own verified copies
 * (see NodeFetch), never changed after, so their bytes can be shared with the answer.
 */
function stringOf(b: Uint8Array, it: Item): Uint8Array | undefined {
  if (it.list) throw bad('a value is a list');
  return it.end === it.start ? undefined : b.subarray(it.start, it.end);
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
  return walkAccounts((hs) => hs.map(fetch), stateRoot, [q], keccak)[0];
}

/** An account RLP's storage root and code hash. */
function accountRefs(a: Uint8Array): { storageRoot: Uint8Array; codeHash: Uint8Array } {
  const it: Item = { start: 0, end: 0, list: false };
  item(a, 0, a.length, it);
  if (!it.list) throw bad('an account is not an RLP list');
  const ls = it.start;
  const le = it.end;
  const fields = countItems(a, ls, le, it);
  if (fields !== 4) throw bad(`an account of ${fields} fields`);
  nth(a, ls, le, 2, it);
  const storageRoot = a.subarray(it.start, it.end);
  nth(a, ls, le, 3, it);
  return { storageRoot, codeHash: a.subarray(it.start, it.end) };
}

/** One key's walk down the trie at `root` (`key`: 32 bytes, already hashed). */
export interface TrieWalkQuery {
  readonly root: Uint8Array;
  readonly key: Uint8Array;
}

/** What an account walk asks its source for at one step: walks, and blobs (code) by hash. */
export interface WalkStep {
  readonly walks: readonly TrieWalkQuery[];
  readonly fetch: readonly Uint8Array[];
  /**
   * false: the caller keeps values and the step's node set, not each walk's own proof list, so a
   * source may answer every walk with an empty `proof` (it still reads and checks every node, and
   * still lists them all in its answer). Default true.
   */
  readonly proofs?: boolean;
}

/** How an account walk is answered. */
export interface AccountWalkOptions {
  /**
   * false: answers carry no per-account proof lists (accountProof and storageProofs empty); the
   * nodes of every proof are still read, checked and returned beside the answers
   * (walkAccountsFrom's `nodes`), which is all a client's bag needs. Default true.
   */
  readonly proofs?: boolean;
}

const NO_BYTES = new Uint8Array(0);

/** A source's answer to a step, in order: walkTrie's per walk, the verified blob (or undefined) per hash. */
export interface WalkStepAnswer {
  readonly walks: readonly (TrieWalk | undefined)[];
  readonly fetched: readonly (Uint8Array | undefined)[];
}

/**
 * The account walk as steps, whatever runs them (walkAccounts: this file's walk over fetched
 * nodes; NativeWalkSource: the addon's walk, over the mapping or over RDMA): first the accounts
 * at `stateRoot`, then their slots and code together; returns walkAccount's answers, undefined
 * where some node or code could not be had.
 */
export function* accountWalkSteps(
  stateRoot: Uint8Array,
  queries: readonly WalkQuery[],
  keccak: Keccak = defaultKeccak,
  opts: AccountWalkOptions = {},
): Generator<WalkStep, (WalkAnswer | undefined)[], WalkStepAnswer> {
  const proofs = opts.proofs ?? true;
  const keys = queries.length > 0 ? keccak.keccak256Batch(queries.map((q) => q.address)) : NO_BYTES;
  const accounts = (yield {
    walks: queries.map((_, i) => ({ root: stateRoot, key: keys.subarray(32 * i, 32 * i + 32) })),
    fetch: [],
    proofs,
  }).walks;
  // An account's storage root and code hash matter only to a query for its slots or code.
  const refs = accounts.map((a, i) =>
    a?.value === undefined || (queries[i]!.slots.length === 0 && !queries[i]!.code)
      ? undefined
      : accountRefs(a.value),
  );
  const slotWalks: TrieWalkQuery[] = [];
  const codeOf = new Map<string, number>();
  const codeHashes: Uint8Array[] = [];
  queries.forEach((q, i) => {
    const r = refs[i];
    if (r === undefined) return;
    for (const slot of q.slots) slotWalks.push({ root: r.storageRoot, key: keccak.keccak256(slot) });
    if (!q.code || sameBytes(r.codeHash, EMPTY_CODE_HASH)) return;
    const k = Buffer.from(r.codeHash).toString('latin1');
    if (!codeOf.has(k)) {
      codeOf.set(k, codeHashes.length);
      codeHashes.push(r.codeHash);
    }
  });
  const second: WalkStepAnswer =
    slotWalks.length > 0 || codeHashes.length > 0
      ? yield { walks: slotWalks, fetch: codeHashes, proofs }
      : { walks: [], fetched: [] };
  const slots = second.walks;
  let s = 0;
  return queries.map((q, i) => {
    const a = accounts[i];
    const r = refs[i];
    const slotValues: Uint8Array[] = [];
    const storageProofs: Uint8Array[][] = [];
    let complete = a !== undefined;
    let code: Uint8Array = NO_BYTES;
    if (r === undefined) {
      for (let j = 0; j < q.slots.length; j++) {
        slotValues.push(NO_BYTES);
        storageProofs.push([]);
      }
    } else {
      for (let j = 0; j < q.slots.length; j++, s++) {
        const w = slots[s];
        if (w === undefined) {
          complete = false;
          continue;
        }
        slotValues.push(w.value === undefined ? NO_BYTES : storageValue(w.value));
        storageProofs.push(w.proof);
      }
      if (q.code && !sameBytes(r.codeHash, EMPTY_CODE_HASH)) {
        const c = second.fetched[codeOf.get(Buffer.from(r.codeHash).toString('latin1'))!];
        if (c === undefined) complete = false;
        else code = c;
      }
    }
    if (!complete || a === undefined) return undefined;
    return {
      address: q.address,
      accountRlp: a.value,
      accountProof: a.proof,
      slotValues,
      storageProofs,
      code,
    };
  });
}

/**
 * Many accounts at `stateRoot` at once (walkMany: one fetch per trie level, shared nodes once),
 * then their slots and code; each answer as walkAccount's, undefined where some node or code
 * could not be fetched. The reference walk: the addon's (NativeWalkSource) is held to it.
 */
export function walkAccounts(
  fetch: NodeFetchMany,
  stateRoot: Uint8Array,
  queries: readonly WalkQuery[],
  keccak: Keccak = defaultKeccak,
): (WalkAnswer | undefined)[] {
  const steps = accountWalkSteps(stateRoot, queries, keccak);
  let next = steps.next();
  while (!next.done) {
    const { walks, fetch: hashes } = next.value;
    next = steps.next({
      walks: walks.length > 0 ? walkMany(fetch, walks) : [],
      fetched: hashes.length > 0 ? fetch(hashes) : [],
    });
  }
  return next.value;
}

/** A storage leaf's value: the RLP string inside it (the slot's value without leading zeros). */
function storageValue(v: Uint8Array): Uint8Array {
  const it: Item = { start: 0, end: 0, list: false };
  item(v, 0, v.length, it);
  if (it.list) throw bad('a storage value is a list');
  return v.subarray(it.start, it.end);
}
