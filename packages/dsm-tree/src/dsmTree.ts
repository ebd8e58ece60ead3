/**
 * The DSM-Tree: an Ethereum Merkle Patricia Trie held in memory as pointer-linked nodes, with
 * lazy batched hashing, O(1) copy-on-write snapshots, proofs, pruning to a top layer, filling
 * from node bags, witness revision, and a byte encoding for checkpoints. Keys are used as given
 * (no hashing); see StateTree for the Ethereum state view.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { BranchNode, VALUE_BIT } from './branchNode.js';
import { type Bin, binToHex, fromBin, toBin } from './bytes.js';
import { DsmError, DsmErrorCode } from './dsmError.js';
import { ExtensionNode } from './extensionNode.js';
import { HashNode } from './hashNode.js';
import { LeafNode } from './leafNode.js';
import { binNibble, commonWithPath, keyEqualsBin, keyHasPath, keyNibble, keyNibbles } from './nibbles.js';
import { NodeBag } from './nodeBag.js';
import {
  ByteWriter,
  branchChildRef,
  branchSpans,
  decodeHashBranchNode,
  decodeLeafOnPath,
  decodeNode,
  extensionChildRef,
  slotHash,
  writeLeaf,
} from './nodeCodec.js';
import { getPacked, type PackedSource, provePacked, reachPacked } from './readPacked.js';
import { TreeHasher } from './treeHasher.js';
import {
  BRANCH,
  EXTENSION,
  IN_BAG,
  type InnerNode,
  LEAF,
  nextGen,
  STUB,
  type TrieNode,
  UNUSED,
  USED,
} from './trieNode.js';

/** Supplies the RLP encoding of a node by its 32-byte hash (a bag, a store, a remote read). */
export type NodeResolver = (hash: Uint8Array) => Uint8Array | undefined;

/**
 * Nodes by hash, each already checked to hash to its key (a NodeBag is one, or a view over
 * bags): the tree uses what it returns without hashing it again.
 */
export interface VerifiedNodeSource {
  /**
   * The node whose keccak256 is `hash` (32 chars, one per byte: latin1), if there is one. `key`
   * and `depth`, where the tree knows them: the stub sits at nibble `depth` on `key`'s path (a
   * hint, e.g. for a store that fetches the rest of that path with it; never needed to answer).
   */
  getBin(hash: string, key?: Uint8Array, depth?: number): Uint8Array | undefined;
  /**
   * Nodes faulted in from this source replace their stubs inside the (possibly frozen) parent
   * instead of a copy of the path: the same content under the same hash, so every version
   * sharing the parent sees the node, and the source can evict it back to a stub
   * (`DsmTree.evictCold`). How a tiered store keeps one resident copy of each node.
   */
  readonly inPlace?: boolean;
  /**
   * Decoded nodes shared by every tree over this source, by hash (32 chars): a branch whose
   * children are all hashes is decoded once and the same frozen object handed to each tree that
   * faults it in. Such a branch depends on its encoding alone (not on where it sits) and no tree
   * changes it (a write changes a copy), so sharing it is safe; the source still hands out the
   * encoding first (`getBin`), so whatever it tracks per tree is unchanged. For many short-lived
   * trees at the same roots (a client's pre-executions), where every tree decoded the same top
   * levels again.
   */
  readonly decoded?: SharedNodes;
  /**
   * For a read that walks encodings in place (readPacked.ts) rather than faulting nodes into the
   * tree: the node whose hash is the 32 bytes at `at` of `hash` (a parent's encoding), at nibble
   * `depth` on `key`'s path. Returns the array its encoding starts in, at `readAt` (set by the
   * call; the encoding is the one RLP list there, its bytes as they are until the next call), or
   * undefined (nothing handed out before changed). Positions rather than strings or
   * views: a batch's reads look up thousands of nodes. When a source has it (and the tree has no
   * resolver), get, prove, proveMany and faultPath read on from a stub over these encodings and
   * leave the tree as it is; writes still fault nodes in.
   */
  readBin?(hash: Uint8Array, at: number, key: Uint8Array, depth: number): Uint8Array | undefined;
  readonly readAt?: number;
  /**
   * With readBin: faultPath still faults in (through getBin, one node at a time) the stubs it
   * meets above this nibble depth, and walks encodings from it (default 0): how a store keeps
   * the top levels it has room for as objects and the rest packed.
   */
  readonly packedFrom?: number;
}

/** Decoded nodes by hash (see VerifiedNodeSource.decoded); a Map is one. */
export interface SharedNodes {
  get(hash: string): InnerNode | undefined;
  set(hash: string, node: InnerNode): unknown;
}

/** Anything nodes can be faulted in from. */
export type NodeSource = NodeBag | NodeResolver;

/**
 * Told of every node a commit hashes: keccak256 (32 chars) and RLP encoding, both binary
 * strings (latin1, one char per byte). These are the nodes a tree created or changed since its
 * last root (each ≥ 32 bytes, plus the root whatever its size), children before their parent,
 * so a store that writes them in this order never holds a parent without its children. The same
 * node may be told more than once (content-addressed stores take it idempotently).
 */
export type NodeListener = (hash: string, enc: string) => void;

export interface DsmTreeOptions {
  /** Keccak implementation; default: the native addon when built, else @noble/hashes. */
  hash?: Keccak;
  /**
   * Called when an operation reaches a hash stub. Without one, a stub on the path raises
   * MissingNode. Whatever it returns is checked against the stub's hash before use.
   */
  resolver?: NodeResolver;
  /** Tried before `resolver` when a stub is reached; its nodes are used unhashed (see VerifiedNodeSource). */
  source?: VerifiedNodeSource;
  /** Told of every node a commit hashes (see NodeListener); passed on to snapshots. */
  onHashed?: NodeListener;
}

/** Defaults of DsmTreeOptions. */
export const defaultDsmTreeOptions: Required<Pick<DsmTreeOptions, 'hash'>> = { hash: defaultKeccak };

/** keccak256(rlp("")): the root of an empty trie. */
export const EMPTY_ROOT: Uint8Array = new Uint8Array(
  Buffer.from('56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421', 'hex'),
);
const EMPTY_ROOT_BIN: Bin = toBin(EMPTY_ROOT);

/** Outcome of checking a witness against the current tree (see reviseWitness). */
export type WitnessCheck =
  | { status: 'valid' }
  | {
      status: 'stale' /** hash of the stub the witness could not reach */;
      missing: Uint8Array;
      depth: number;
    };

const hashers = new WeakMap<Keccak, TreeHasher>();
function hasherFor(k: Keccak): TreeHasher {
  let h = hashers.get(k);
  if (h === undefined) {
    h = new TreeHasher(k);
    hashers.set(k, h);
  }
  return h;
}

const proofWriter = new ByteWriter(1 << 16);
const KIND_NAMES = ['a branch', 'an extension', 'a leaf', 'a stub'];

/** A byte key whose first `n` nibbles are `path`'s (for faulting nodes on a nibble path). */
function nibblesKey(path: readonly number[], n: number): Uint8Array {
  const key = new Uint8Array((n + 2) >> 1);
  for (let i = 0; i < n; i++) key[i >> 1]! |= i & 1 ? path[i]! : path[i]! << 4;
  return key;
}

/** A growable list of integers kept between calls (no array to regrow after each reset). */
class IntList {
  a = new Int32Array(256);
  n = 0;
  push(v: number): void {
    if (this.n === this.a.length) {
      const a = new Int32Array(this.a.length * 2);
      a.set(this.a);
      this.a = a;
    }
    this.a[this.n++] = v;
  }
}

/** Where each proof node written to proofWriter ends (see writeProof). */
const proofEnds = new IntList();
/** getProveMany's values, as written (see putValue), and where each ends (-1: no value). */
const valueWriter = new ByteWriter(1 << 12);
const valueEnds = new IntList();
/** The nodes a proveMany marked IN_BAG (the first `marked`), to clear when it ends. */
const inBag: (InnerNode | undefined)[] = [];
let marked = 0;
/** Hashes of the nodes a proveMany wrote from a packed source, and their ends (see readPacked.ts). */
let packedSeen: Set<unknown> | undefined;
const packedEnds: number[] = [];

/** Clears the marks of inBag from `from` on (see IN_BAG). */
function unmark(from: number): void {
  for (let i = from; i < marked; i++) {
    inBag[i]!.used = USED;
    inBag[i] = undefined;
  }
  marked = from;
}

function putBinValue(v: Bin | undefined): void {
  if (v === undefined) valueEnds.push(-1);
  else {
    valueWriter.bin(v);
    valueEnds.push(valueWriter.pos);
  }
}

function putValue(v: Uint8Array | undefined): void {
  if (v === undefined) valueEnds.push(-1);
  else {
    valueWriter.ensure(v.length);
    valueWriter.buf.set(v, valueWriter.pos);
    valueWriter.pos += v.length;
    valueEnds.push(valueWriter.pos);
  }
}

/**
 * The encodings written to `w`, ending at `ends`, as Uint8Arrays over one copy; with `values`,
 * valueWriter's values too (into `values`), over the same copy. From Node's buffer pool when
 * small: a fresh ArrayBuffer per proof is external memory, and in a big heap the GCs that
 * external memory triggers cost more than building the proof.
 */
function slices(w: ByteWriter, ends: IntList, values: (Uint8Array | undefined)[] | undefined): Uint8Array[] {
  const all = slab(w, values);
  const buffer = all.buffer;
  const base = all.byteOffset;
  const n = ends.n;
  const e = ends.a;
  const out: Uint8Array[] = new Array(n);
  let s = 0;
  for (let i = 0; i < n; i++) {
    out[i] = new Uint8Array(buffer, base + s, e[i]! - s);
    s = e[i]!;
  }
  return out;
}

/**
 * One copy of what `w` holds, and with `values` of valueWriter's values after it (into
 * `values`, as views of the copy): see slices.
 */
function slab(w: ByteWriter, values: (Uint8Array | undefined)[] | undefined): Uint8Array {
  const extra = values === undefined ? 0 : valueWriter.pos;
  const all = Buffer.allocUnsafe(w.pos + extra);
  w.buf.copy(all, 0, 0, w.pos);
  const buffer = all.buffer;
  const base = all.byteOffset;
  if (values !== undefined) {
    valueWriter.buf.copy(all, w.pos, 0, valueWriter.pos);
    const ve = valueEnds.a;
    let from = 0;
    for (let i = 0; i < valueEnds.n; i++) {
      const end = ve[i]!;
      if (end < 0) values[i] = undefined;
      else {
        values[i] = new Uint8Array(buffer, base + w.pos + from, end - from);
        from = end;
      }
    }
  }
  return new Uint8Array(buffer, base, all.length);
}

/** Scratch for reading a branch encoding's slots while pruning. */
const pruneSpans = new Int32Array(18);

/** How many children a branch has besides child `i` (-1: none excluded), and the last one's nibble. */
function otherChildren(b: BranchNode, i: number): { count: number; idx: number } {
  let count = 0;
  let idx = -1;
  for (let j = 0; j < 16; j++) {
    if (j !== i && b.child(j) !== undefined) {
      count++;
      idx = j;
    }
  }
  return { count, idx };
}

/** The nodes a get walked through, and the nibble taken at each (-1: an extension's child). */
const walked: InnerNode[] = [];
const walkedAt: number[] = [];
/** Gets begun so far: a fault that sees it move had a get run inside it (see faultOnPath). */
let walks = 0;
/** faultOnPath's answer when the path went in from the root: get reads it again from there. */
const AGAIN = Symbol('again');

/**
 * Decodes the node at nibble depth d on key's path (plus nibble `extra` when ≥ 0), in
 * generation `gen` (see decodeNode).
 */
function decodeAt(enc: Uint8Array, key: Uint8Array, d: number, extra: number, gen?: number): InnerNode {
  // The usual node needs no prefix: none is built for it.
  const node = decodeHashBranchNode(enc, gen) ?? decodeLeafOnPath(enc, key, d, extra, gen);
  if (node !== undefined) return node;
  const prefix: number[] = [];
  for (let i = 0; i < d; i++) prefix.push(keyNibble(key, i));
  let n = d;
  if (extra >= 0) prefix[n++] = extra;
  return decodeNode(enc, prefix, n, gen);
}

/** The node `enc` (verified to hash to `ref`) decodes to, from `shared` where it is a lazy branch kept there. */
function sharedNode(
  shared: SharedNodes,
  ref: Bin,
  enc: Uint8Array,
  key: Uint8Array,
  d: number,
  extra: number,
): InnerNode {
  const known = shared.get(ref);
  if (known !== undefined) return known;
  const n = decodeAt(enc, key, d, extra);
  if (n.kind === BRANCH && n.lazy) shared.set(ref, n);
  return n;
}

/**
 * Bytes a resident node costs in the heap besides what it shares: the object (its fields) and
 * its strings (V8 one-byte strings: a 16-byte header; objects: 24 bytes and 8 a field).
 * What a memory budget over the trees counts (checked against heap growth by bench/tiered.ts).
 */
export function residentNodeBytes(n: InnerNode): number {
  if (n.kind === BRANCH)
    return 232 + (n.enc?.length ?? 0) + (n.value === undefined ? 0 : 16 + n.value.length);
  if (n.kind === EXTENSION) return 104 + n.path.length + (n.enc?.length ?? 0);
  return 96 + n.key.length + 16 + n.value.length;
}

/**
 * Bytes an explicit stub costs its parent: a HashNode (32 bytes) and its 32-char string (48).
 * A lazy branch's stubs cost nothing until asked for (see BranchNode); an extension's child
 * and the children of branches decoded the general way are explicit.
 */
export const STUB_BYTES = 80;

/**
 * Which resident nodes an eviction pass (DsmTree.evictCold) turns into stubs: `false` the ones
 * no read used since the last pass (CLOCK), `true` all of them, or a function of the node's hash
 * and the node (read its `used` bit: the pass clears it after asking), true to evict.
 */
export type EvictRule = boolean | ((hash: Bin, node: InnerNode) => boolean);

function evicts(rule: EvictRule, hash: Bin, n: InnerNode): boolean {
  return typeof rule === 'function' ? rule(hash, n) : rule || !n.used;
}

/** Length of a node's encoding (a leaf's depends on its depth). */
function encodedLength(n: InnerNode, depth: number): number {
  if (n.kind !== LEAF) return n.enc!.length;
  proofWriter.pos = 0;
  return writeLeaf(proofWriter, n, depth);
}

/** Trie nodes as one buffer: node i is `bytes[ends[i - 1] … ends[i])` (from 0 for the first). */
export interface PackedNodes {
  readonly bytes: Uint8Array;
  readonly ends: Int32Array;
}

/** A value made from the one a key holds (undefined when none): see DsmTree.putWith. */
export type ValueMaker = (old: Bin | undefined) => Bin;

/** The value `ins` writes where a key holds `old`: `v` itself, or what it makes from `old`. */
const valueFor = (v: Bin | ValueMaker, old: Bin | undefined): Bin => (typeof v === 'string' ? v : v(old));

export class DsmTree {
  private rootNode: TrieNode | undefined;
  /** keccak256 of the root, once computed; cleared by any change. */
  private rootHash: Bin | undefined;
  /** Set by the write paths when an operation changed anything. */
  private changed = false;
  /** Nodes whose `gen` equals this may be mutated in place; see trieNode.ts. */
  private gen: number;
  readonly keccak: Keccak;
  private readonly hasher: TreeHasher;
  resolver: NodeResolver | undefined;
  source: VerifiedNodeSource | undefined;
  onHashed: NodeListener | undefined;

  constructor(opts: DsmTreeOptions = {}) {
    this.keccak = opts.hash ?? defaultDsmTreeOptions.hash;
    this.hasher = hasherFor(this.keccak);
    this.resolver = opts.resolver;
    this.source = opts.source;
    this.onHashed = opts.onHashed;
    this.gen = nextGen();
    this.rootNode = undefined;
  }

  /** A tree known only by its root hash: every read faults nodes in through the resolver. */
  static fromRootHash(root: Uint8Array, opts: DsmTreeOptions = {}): DsmTree {
    if (root.length !== 32) throw new DsmError(DsmErrorCode.BadKey, `a root is 32 bytes, got ${root.length}`);
    const t = new DsmTree(opts);
    const r = toBin(root);
    t.rootNode = r === EMPTY_ROOT_BIN ? undefined : new HashNode(r);
    return t;
  }

  /** Internal: a tree over an existing node (shares it; both sides treat it as frozen). */
  static fromNode(node: TrieNode | undefined, opts: DsmTreeOptions = {}): DsmTree {
    const t = new DsmTree(opts);
    t.rootNode = node;
    return t;
  }

  /** The root node (internal use: codecs, shards, tests). */
  get rootNodeForInternalUse(): TrieNode | undefined {
    return this.rootNode;
  }

  // ---------------------------------------------------------------- reads

  /**
   * The value stored at `key`, or undefined. One walk: a stub on the path is faulted in from
   * where it sits (the rest of the path with it, as materialize would) and put in place through
   * the nodes above it, copied where this tree does not own them; the walk then goes on below.
   */
  get(key: Uint8Array): Uint8Array | undefined {
    const klen = key.length * 2;
    let node = this.rootNode;
    let d = 0;
    // The nodes walked through (branches and extensions), for putting a faulted stub in place.
    let n = 0;
    walks++;
    for (;;) {
      if (node === undefined) return undefined;
      switch (node.kind) {
        case LEAF:
          node.used = USED;
          return keyEqualsBin(key, node.key) ? fromBin(node.value) : undefined;
        case BRANCH: {
          node.used = USED;
          if (d === klen) return node.value === undefined ? undefined : fromBin(node.value);
          const i = keyNibble(key, d++);
          walked[n] = node;
          walkedAt[n++] = i;
          node = node.child(i);
          break;
        }
        case EXTENSION:
          node.used = USED;
          if (!keyHasPath(key, d, node.path)) return undefined;
          d += node.path.length;
          walked[n] = node;
          walkedAt[n++] = -1;
          node = node.child;
          break;
        case STUB: {
          if (this.source?.readBin !== undefined && this.resolver === undefined)
            return getPacked(this.source as PackedSource, node.ref, key, d);
          const sub = this.faultOnPath(node, key, d, n);
          if (sub !== AGAIN) node = sub;
          else {
            // The path is in memory now: read it from the root.
            node = this.rootNode;
            d = 0;
            n = 0;
          }
          break;
        }
      }
    }
  }

  /**
   * Faults in `stub` (at nibble depth `d` on key's path, below the first `n` nodes of `walked`)
   * and the rest of the path under it, puts it in place and returns it: what materialize does
   * from the root, without walking the nodes above the stub again.
   */
  private faultOnPath(
    stub: HashNode,
    key: Uint8Array,
    d: number,
    n: number,
  ): TrieNode | undefined | typeof AGAIN {
    const walk = ++walks;
    const sub = this.mat(stub, key, d, undefined);
    if (walks !== walk) {
      // A source read a tree while serving a node, and that walk wrote over `walked`: the
      // path is put in place from the root instead (its stubs fault in again, the same nodes).
      this.materialize(key, undefined);
      return AGAIN;
    }
    const inPlace = this.source?.inPlace === true;
    let c = sub;
    for (let j = n - 1; j >= 0; j--) {
      const p = walked[j]!;
      const o = inPlace ? p : this.own(p);
      const i = walkedAt[j]!;
      if (i >= 0) (o as BranchNode).setChild(i, c);
      else (o as ExtensionNode).child = c!;
      // The walk read the copy: it is marked as the node it replaces was.
      o.used = USED;
      if (o === p) return sub;
      c = o;
    }
    this.rootNode = c;
    return sub;
  }

  /** keccak256 root; the empty trie gives 56e81f17…b421. Hashes what writes left dirty. */
  root(): Uint8Array {
    return fromBin(this.rootBin());
  }

  /** The root as a binary string (internal form). */
  rootBin(): Bin {
    if (this.rootHash !== undefined) return this.rootHash;
    const r = this.rootNode;
    if (r === undefined) this.rootHash = EMPTY_ROOT_BIN;
    else if (r.kind === STUB) this.rootHash = r.ref;
    else this.rootHash = this.hasher.commit(r, 0, this.onHashed);
    return this.rootHash;
  }

  // ---------------------------------------------------------------- writes

  /** Stores `value` at `key`. An empty value deletes the key, as in Ethereum. */
  put(key: Uint8Array, value: Uint8Array): void {
    if (value.length === 0) {
      this.del(key);
      return;
    }
    this.changed = false;
    const r = this.ins(this.rootNode, key, 0, toBin(value));
    if (this.changed) this.setRoot(r);
  }

  /**
   * Stores at `key` the value `make` gives for the one stored there (undefined when none), in
   * one walk: `put(key, make(get(key)))` for a writer whose new value keeps parts of the old (a
   * state tree's account update keeps the code hash and storage root). `make` is called once,
   * before anything changes, and must return a non-empty value; if it throws, nothing changed.
   */
  putWith(key: Uint8Array, make: ValueMaker): void {
    this.changed = false;
    const r = this.ins(this.rootNode, key, 0, make);
    if (this.changed) this.setRoot(r);
  }

  /** Removes `key` (a no-op when absent), collapsing the tree back to canonical form. */
  del(key: Uint8Array): void {
    this.changed = false;
    const r = this.rem(this.rootNode, key, 0);
    if (this.changed) this.setRoot(r);
  }

  private setRoot(r: TrieNode | undefined): void {
    this.rootNode = r;
    this.rootHash = undefined;
  }

  /** O(1): a tree with the same contents; later writes to either never show in the other. */
  snapshot(): DsmTree {
    const t = new DsmTree(this.options());
    t.rootNode = this.rootNode;
    t.rootHash = this.rootHash;
    this.gen = nextGen(); // every node reachable now is frozen for both trees
    return t;
  }

  /** The options this tree was made with (what a snapshot or a sibling tree gets). */
  options(): DsmTreeOptions {
    return {
      hash: this.keccak,
      ...(this.resolver ? { resolver: this.resolver } : {}),
      ...(this.source ? { source: this.source } : {}),
      ...(this.onHashed ? { onHashed: this.onHashed } : {}),
    };
  }

  /**
   * The node itself when this tree may mutate it, else a copy it may (same content, same
   * encoding and change marks). Owning marks nothing: whoever then changes the node's content
   * marks the slot; replacing a stub by its node (same hash) marks nothing.
   */
  private own<T extends InnerNode>(n: T): T {
    if (n.gen === this.gen) return n;
    if (n.kind === LEAF) return new LeafNode(n.key, n.value, this.gen) as T;
    return n.copy(this.gen) as T;
  }

  /*
   * The write paths. Each returns the node to put where `node` was; `this.changed` says whether
   * anything changed at all (a no-op write must leave every encoding valid). A changed slot is
   * marked in its owner (replaceChild, VALUE_BIT, ExtensionNode.changed): that is all the commit
   * needs to know.
   */

  /** `v` is the value, or what makes it from the old one (putWith), called where the key ends. */
  private ins(node: TrieNode | undefined, key: Uint8Array, d: number, v: Bin | ValueMaker): TrieNode {
    if (node === undefined) {
      const nv = valueFor(v, undefined);
      this.changed = true;
      return new LeafNode(toBin(key), nv, this.gen);
    }
    switch (node.kind) {
      case LEAF: {
        if (keyEqualsBin(key, node.key)) {
          const nv = valueFor(v, node.value);
          if (node.value === nv) return node;
          this.changed = true;
          const l = this.own(node);
          l.value = nv;
          return l;
        }
        const nv = valueFor(v, undefined);
        this.changed = true;
        return this.splitLeaf(node, key, d, nv);
      }
      case BRANCH: {
        if (d === key.length * 2) {
          const nv = valueFor(v, node.value);
          if (node.value === nv) return node;
          this.changed = true;
          const b = this.own(node);
          b.value = nv;
          b.mask |= VALUE_BIT;
          return b;
        }
        const i = keyNibble(key, d);
        const nc = this.ins(node.child(i), key, d + 1, v);
        if (!this.changed) return node;
        const b = this.own(node);
        b.replaceChild(i, nc);
        return b;
      }
      case EXTENSION: {
        const path = node.path;
        const m = commonWithPath(key, d, path);
        if (m === path.length) {
          const nc = this.ins(node.child, key, d + m, v);
          if (!this.changed) return node;
          const e = this.own(node);
          e.child = nc;
          e.changed = true;
          return e;
        }
        const nv = valueFor(v, undefined);
        this.changed = true;
        const b = BranchNode.empty(this.gen);
        b.setChild(
          path.charCodeAt(m),
          m + 1 < path.length ? new ExtensionNode(path.slice(m + 1), node.child, this.gen) : node.child,
        );
        this.placeNew(b, key, d + m, nv);
        return m > 0 ? new ExtensionNode(path.slice(0, m), b, this.gen) : b;
      }
      case STUB: {
        const n = this.fault(node, key, d, -1);
        const r = this.ins(n, key, d, v);
        return this.changed ? r : node;
      }
    }
  }

  private splitLeaf(l: LeafNode, key: Uint8Array, d: number, v: Bin): TrieNode {
    const lk = l.key;
    const klen = key.length * 2;
    const llen = lk.length * 2;
    const max = Math.min(klen, llen);
    let at = d;
    while (at < max && keyNibble(key, at) === binNibble(lk, at)) at++;
    const b = BranchNode.empty(this.gen);
    if (llen === at) b.value = l.value;
    else b.setChild(binNibble(lk, at), l); // a leaf caches nothing, so it moves down as it is
    this.placeNew(b, key, at, v);
    return at > d ? new ExtensionNode(keyNibbles(key, d, at), b, this.gen) : b;
  }

  /** Puts a new key into a new branch (whose slots are all marked changed already). */
  private placeNew(b: BranchNode, key: Uint8Array, at: number, v: Bin): void {
    if (key.length * 2 === at) b.value = v;
    else b.setChild(keyNibble(key, at), new LeafNode(toBin(key), v, this.gen));
  }

  private rem(node: TrieNode | undefined, key: Uint8Array, d: number): TrieNode | undefined {
    if (node === undefined) return undefined;
    switch (node.kind) {
      case LEAF:
        if (!keyEqualsBin(key, node.key)) return node;
        this.changed = true;
        return undefined;
      case BRANCH: {
        let i = -1;
        if (d === key.length * 2) {
          if (node.value === undefined) return node;
          this.changed = true;
        } else {
          i = keyNibble(key, d);
          const c = node.child(i);
          if (c === undefined) return node;
          const nc = this.rem(c, key, d + 1);
          if (!this.changed) return node;
          if (nc !== undefined) {
            const b = this.own(node);
            b.replaceChild(i, nc);
            return b;
          }
        }
        return this.removeEntry(node, i, key, d);
      }
      case EXTENSION: {
        if (!keyHasPath(key, d, node.path)) return node;
        const nc = this.rem(node.child, key, d + node.path.length);
        if (!this.changed) return node;
        if (nc === undefined) return undefined;
        if (nc.kind === LEAF) return nc; // the leaf takes the extension's place, as it is
        if (nc.kind === EXTENSION) return new ExtensionNode(node.path + nc.path, nc.child, this.gen);
        const e = this.own(node);
        e.child = nc;
        e.changed = true;
        return e;
      }
      case STUB: {
        const n = this.fault(node, key, d, -1);
        const r = this.rem(n, key, d);
        return this.changed ? r : node;
      }
    }
  }

  /**
   * Removes child `i` (or the value, when i < 0) from a branch, restoring canonical form. Whatever
   * can fail (faulting in a stub sibling that must be merged up) happens before anything is
   * changed, so a failed delete leaves the tree exactly as it was.
   */
  private removeEntry(node: BranchNode, i: number, key: Uint8Array, d: number): TrieNode | undefined {
    const value = i < 0 ? undefined : node.value;
    const { count, idx } = otherChildren(node, i);
    if (count === 0) {
      // Only a value can be left: it becomes a leaf whose key is the path to here.
      return value === undefined ? undefined : new LeafNode(toBin(key.subarray(0, d >> 1)), value, this.gen);
    }
    if (count >= 2 || value !== undefined) {
      const b = this.own(node);
      if (i < 0) {
        b.value = undefined;
        b.mask |= VALUE_BIT;
      } else b.replaceChild(i, undefined);
      return b;
    }
    // One child left and no value: it merges up into this branch's place.
    let c = node.child(idx)!;
    if (c.kind === STUB) c = this.fault(c, key, d, idx);
    if (c.kind === LEAF) return c;
    if (c.kind === EXTENSION) return new ExtensionNode(String.fromCharCode(idx) + c.path, c.child, this.gen);
    return new ExtensionNode(String.fromCharCode(idx), c, this.gen);
  }

  // ---------------------------------------------------------------- stubs, bags, witnesses

  /**
   * Replaces a stub by the node it stands for, from `source` (default: this tree's resolver).
   * The stub sits at nibble depth d on key's path (plus nibble `extra` when ≥ 0).
   */
  private fault(stub: HashNode, key: Uint8Array, d: number, extra: number, source?: NodeSource): InnerNode {
    let enc: Uint8Array | undefined;
    // A bag (or verified source) keeps each node under the hash it computed: no need to hash again.
    let checked = false;
    if (source !== undefined) {
      if (source instanceof NodeBag) {
        enc = source.getBin(stub.ref);
        checked = true;
      } else enc = source(fromBin(stub.ref));
    } else {
      enc = extra < 0 ? this.source?.getBin(stub.ref, key, d) : this.source?.getBin(stub.ref);
      if (enc !== undefined) {
        const shared = this.source!.decoded;
        if (shared !== undefined) return sharedNode(shared, stub.ref, enc, key, d, extra);
        checked = true;
      } else if (this.resolver !== undefined) enc = this.resolver(fromBin(stub.ref));
    }
    if (enc === undefined) {
      // A miss is a client's common answer to a probe (RemoteState.lacking): the hash's hex once.
      const hash = binToHex(stub.ref);
      throw withoutStack(
        () =>
          new DsmError(DsmErrorCode.MissingNode, `node ${hash} is not in memory`, {
            hash,
            depth: extra >= 0 ? d + 1 : d,
          }),
      );
    }
    const h = checked ? undefined : this.keccak.keccak256(enc);
    if (h !== undefined && toBin(h) !== stub.ref) {
      throw new DsmError(
        DsmErrorCode.HashMismatch,
        `node for ${binToHex(stub.ref)} hashes to ${binToHex(toBin(h))}`,
        {
          expected: binToHex(stub.ref),
          found: binToHex(toBin(h)),
        },
      );
    }
    // Only this tree will hold the node (it goes into a path this tree owns, see mat), so it is
    // made in this tree's generation: putting its own children in place (the next stub down the
    // path) or writing it then needs no copy. Not from an in-place source: that node replaces
    // its stub in a parent other versions may share, so it stays frozen.
    const shared = source === undefined && this.source?.inPlace === true;
    return decodeAt(enc, key, d, extra, shared ? undefined : this.gen);
  }

  /** Replaces every stub on key's path by its node from `source`; no content (or encoding) changes. */
  private materialize(key: Uint8Array, source: NodeSource | undefined): void {
    this.rootNode = this.mat(this.rootNode, key, 0, source);
  }

  private mat(
    node: TrieNode | undefined,
    key: Uint8Array,
    d: number,
    src: NodeSource | undefined,
  ): TrieNode | undefined {
    if (node === undefined) return undefined;
    switch (node.kind) {
      case STUB:
        return this.mat(this.fault(node, key, d, -1, src), key, d, src);
      case LEAF:
        return node;
      case BRANCH: {
        if (d === key.length * 2) return node;
        const i = keyNibble(key, d);
        const c = node.child(i);
        const nc = this.mat(c, key, d + 1, src);
        if (nc === c) return node;
        // From an in-place source a stub is replaced where it is (same hash: see VerifiedNodeSource).
        const b = src === undefined && this.source?.inPlace === true ? node : this.own(node);
        b.setChild(i, nc);
        return b;
      }
      case EXTENSION: {
        if (!keyHasPath(key, d, node.path)) return node;
        const nc = this.mat(node.child, key, d + node.path.length, src)!;
        if (nc === node.child) return node;
        const e = src === undefined && this.source?.inPlace === true ? node : this.own(node);
        e.child = nc;
        return e;
      }
    }
  }

  /**
   * Faults in every node `del(key)` would need, changing no content: the key's path and, where
   * removing the key leaves a branch with a single child to merge up, that child. Throws
   * MissingNode (and changes nothing else) exactly where `del(key)` would, so a caller can
   * prepare a batch of deletions and only then apply them all, none of them failing half-way.
   */
  prepareDelete(key: Uint8Array): void {
    this.rootNode = this.prep(this.rootNode, key, 0).node;
  }

  /** prepareDelete below `node` (at nibble depth d); `gone`: deleting the key empties the subtree. */
  private prep(
    node: TrieNode | undefined,
    key: Uint8Array,
    d: number,
  ): { node: TrieNode | undefined; gone: boolean } {
    if (node === undefined) return { node, gone: false };
    switch (node.kind) {
      case STUB:
        return this.prep(this.fault(node, key, d, -1), key, d);
      case LEAF:
        return { node, gone: keyEqualsBin(key, node.key) };
      case EXTENSION: {
        if (!keyHasPath(key, d, node.path)) return { node, gone: false };
        const r = this.prep(node.child, key, d + node.path.length);
        if (r.node === node.child) return { node, gone: r.gone };
        const e = this.own(node);
        e.child = r.node!;
        return { node: e, gone: r.gone };
      }
      case BRANCH: {
        let b: BranchNode = node;
        let i = -1;
        if (d === key.length * 2) {
          if (node.value === undefined) return { node, gone: false };
        } else {
          i = keyNibble(key, d);
          const c = node.child(i);
          if (c === undefined) return { node, gone: false };
          const r = this.prep(c, key, d + 1);
          if (r.node !== c) {
            b = this.own(node);
            b.setChild(i, r.node);
          }
          if (!r.gone) return { node: b, gone: false };
        }
        // The entry goes: what is left decides (see removeEntry).
        const value = i < 0 ? undefined : b.value;
        const { count, idx } = otherChildren(b, i);
        if (count === 0) return { node: b, gone: value === undefined };
        if (count === 1 && value === undefined) {
          const c = b.child(idx)!;
          if (c.kind === STUB) {
            const n = this.fault(c, key, d, idx);
            b = b === node ? this.own(node) : b;
            b.setChild(idx, n);
          }
        }
        return { node: b, gone: false };
      }
    }
  }

  /**
   * Fills the stubs on each key's path from `bag` (every node checked against the stub's hash).
   * Throws MissingNode when the bag lacks a node a path needs.
   */
  fill(bag: NodeBag, keys: readonly Uint8Array[]): void {
    for (const k of keys) this.materialize(k, bag);
  }

  /**
   * Faults in, from this tree's in-place source, every node on key's path the source has, and
   * stops at the first stub it lacks (the source has seen that hash asked for): how a tiered
   * store learns, without an exception per key, which node each key of a batch needs next.
   * Marks the nodes it passes as used. Changes no content.
   */
  faultPath(key: Uint8Array): void {
    const src = this.source;
    if (src?.inPlace !== true) return;
    const klen = key.length * 2;
    let parent: BranchNode | ExtensionNode | undefined;
    let slot = -1;
    let node = this.rootNode;
    let d = 0;
    for (;;) {
      if (node === undefined) return;
      if (node.kind === STUB) {
        if (src.readBin !== undefined && this.resolver === undefined && d >= (src.packedFrom ?? 0)) {
          reachPacked(src as PackedSource, node.ref, key, d);
          return;
        }
        const enc = src.getBin(node.ref, key, d);
        if (enc === undefined) return;
        const n = decodeAt(enc, key, d, -1);
        if (parent === undefined) this.rootNode = n;
        else if (parent.kind === BRANCH) parent.setChild(slot, n);
        else parent.child = n;
        node = n;
      }
      node.used = USED;
      if (node.kind === LEAF) return;
      if (node.kind === BRANCH) {
        if (d === klen) return;
        parent = node;
        slot = keyNibble(key, d++);
        node = node.child(slot);
      } else {
        if (!keyHasPath(key, d, node.path)) return;
        d += node.path.length;
        parent = node;
        node = node.child;
      }
    }
  }

  /**
   * One CLOCK pass over the resident nodes at level `keep` and below (the root is level 0),
   * for trees whose source is in place (the nodes are in it, so a stub loses nothing): a node
   * used since the last pass stays and loses its bit; one that was not (or any, with `rule`
   * true, or those `rule` picks: see EvictRule) becomes a hash stub in its parent, in place
   * (its hash is in the parent's encoding). Nodes
   * shared with other trees are visited once per `seen`. Returns the bytes of the nodes left
   * resident that `seen` had not counted yet (residentNodeBytes, and STUB_BYTES for each explicit
   * stub they hold). Only clean trees (committed:
   * every version a storage node holds).
   */
  evictCold(keep: number, seen: Set<object>, rule: EvictRule): number {
    const r = this.rootNode;
    if (r === undefined || r.kind === STUB) return 0;
    if (keep === 0 && !seen.has(r) && this.rootHash !== undefined && encodedLength(r, 0) >= 32) {
      if (evicts(rule, this.rootHash, r)) {
        this.rootNode = new HashNode(this.rootHash);
        return 0;
      }
    }
    return this.evictBelow(r, 0, Math.max(keep, 1), seen, rule);
  }

  /**
   * evictCold over one part of the tree, for an eviction done a part at a time (yielding the
   * event loop between parts): the subtree at branch path `part` (nibbles, fewer than `keep`).
   * The branches above the parts are kept, and counted once per `seen`; a node above the parts'
   * depth that is not a branch belongs whole to the first part through it (its remaining
   * nibbles zero). So the 16^k parts of one `seen` visit every resident node once, as one
   * evictCold does, whatever versions they are asked of.
   */
  evictColdPart(part: readonly number[], keep: number, seen: Set<object>, rule: EvictRule): number {
    if (part.length === 0) return this.evictCold(keep, seen, rule);
    if (part.length >= keep) {
      throw new DsmError(
        DsmErrorCode.BadPath,
        `an eviction part must lie above the kept levels: expected a path shorter than ${keep} nibbles, found ${part.length}`,
        { path: part, depth: keep },
      );
    }
    let n = this.rootNode;
    let bytes = 0;
    for (let level = 0; ; level++) {
      if (n === undefined || n.kind === STUB) return bytes;
      if (level === part.length || n.kind !== BRANCH) {
        for (let i = level; i < part.length; i++) if (part[i] !== 0) return bytes;
        return bytes + this.evictBelow(n, level, keep, seen, rule);
      }
      if (!seen.has(n)) {
        seen.add(n);
        n.used = UNUSED;
        bytes += residentNodeBytes(n);
        for (let i = 0; i < 16; i++) if (n.loaded(i)?.kind === STUB) bytes += STUB_BYTES;
      }
      n = n.loaded(part[level]!);
    }
  }

  private evictBelow(n: InnerNode, level: number, keep: number, seen: Set<object>, rule: EvictRule): number {
    if (seen.has(n)) return 0;
    seen.add(n);
    let bytes = residentNodeBytes(n);
    n.used = UNUSED;
    if (n.kind === LEAF) return bytes;
    const below = level + 1 >= keep;
    if (n.kind === EXTENSION) {
      const c = n.child;
      if (c.kind === STUB) return bytes + STUB_BYTES;
      if (below && !seen.has(c) && n.enc !== undefined && !n.changed) {
        const ref = extensionChildRef(n.enc);
        if (ref.length === 32 && evicts(rule, ref, c)) {
          n.child = new HashNode(ref);
          return bytes + STUB_BYTES;
        }
      }
      return bytes + this.evictBelow(c, level + 1, keep, seen, rule);
    }
    const clean = n.enc !== undefined && n.mask === 0;
    let spans = false;
    for (let i = 0; i < 16; i++) {
      const c = n.loaded(i);
      if (c === undefined) continue;
      if (c.kind === STUB) {
        bytes += STUB_BYTES;
        continue;
      }
      if (below && clean && !seen.has(c)) {
        if (!spans) {
          branchSpans(n.enc!, pruneSpans);
          spans = true;
        }
        const hash = slotHash(n.enc!, pruneSpans, i);
        if (hash !== undefined && evicts(rule, hash, c)) {
          n.evictChild(i); // a lazy slot: no stub object (see BranchNode)
          continue;
        }
      }
      bytes += this.evictBelow(c, level + 1, keep, seen, rule);
      spans = false; // the child's pass used the same scratch
    }
    return bytes;
  }

  /**
   * Witness revision (DESIGN §3.7). A witness (a proof or a bag) built against an older root is
   * still good for `key` if, walking the CURRENT tree down key's path, every stub met is a node
   * the witness holds — i.e. the part of the tree the key depends on has not changed. Then the
   * witness's nodes are filled in and the key can be read and written. Otherwise the answer is
   * `stale` (with the stub that could not be matched): the top layer cannot tell whether the key
   * changed, and nothing is guessed.
   */
  reviseWitness(key: Uint8Array, witness: NodeBag | readonly Uint8Array[]): WitnessCheck {
    const bag = witness instanceof NodeBag ? witness : NodeBag.fromProofs([witness], { hash: this.keccak });
    try {
      this.materialize(key, bag);
      return { status: 'valid' };
    } catch (e) {
      if (e instanceof DsmError && e.code === DsmErrorCode.MissingNode) {
        return {
          status: 'stale',
          missing: new Uint8Array(Buffer.from(String(e.meta.hash), 'hex')),
          depth: Number(e.meta.depth),
        };
      }
      throw e;
    }
  }

  /**
   * Prunes to retention level r: nodes at level ≥ r (the root is level 0) become hash stubs.
   * Embedded nodes (under 32 bytes) have no hash of their own and stay with their parent; so
   * does a root under 32 bytes.
   */
  prune(r: number): void {
    if (!Number.isInteger(r) || r < 0)
      throw new RangeError(`retention level must be an integer ≥ 0, got ${r}`);
    const root = this.rootNode;
    if (root === undefined || root.kind === STUB) return;
    const h = this.rootBin();
    if (r === 0) {
      if (encodedLength(root, 0) >= 32) this.rootNode = new HashNode(h);
      return;
    }
    this.rootNode = this.pruneBelow(root, 0, r);
  }

  /** Stubs the children at level r of `node` (at `level` < r); refs come from its encoding. */
  private pruneBelow(node: InnerNode, level: number, r: number): InnerNode {
    if (node.kind === LEAF) return node;
    if (node.kind === EXTENSION) {
      const c = node.child;
      if (c.kind === STUB) return node;
      let nc: TrieNode;
      if (level + 1 >= r) {
        const ref = extensionChildRef(node.enc!);
        if (ref.length !== 32) return node;
        nc = new HashNode(ref);
      } else nc = this.pruneBelow(c, level + 1, r);
      if (nc === c) return node;
      const e = this.own(node);
      e.child = nc;
      return e;
    }
    let b: BranchNode | undefined;
    const stubHere = level + 1 >= r;
    if (stubHere) branchSpans(node.enc!, pruneSpans); // once per branch, not per child
    for (let i = 0; i < 16; i++) {
      const c = node.child(i);
      if (c === undefined || c.kind === STUB) continue;
      let nc: TrieNode;
      if (stubHere) {
        const hash = slotHash(node.enc!, pruneSpans, i);
        if (hash === undefined) continue; // embedded: stays with its parent
        nc = new HashNode(hash);
      } else nc = this.pruneBelow(c, level + 1, r);
      if (nc !== c) {
        b ??= this.own(node);
        b.setChild(i, nc);
      }
    }
    return b ?? node;
  }

  // ---------------------------------------------------------------- subtrees (shards)

  /**
   * The reference the tree holds for the subtree at nibble path `path` (every node above it a
   * branch): its 32-byte hash, its encoding when under 32 bytes, or undefined when empty.
   * A shard's root is this, for the shard's nibble path.
   */
  refAt(path: readonly number[]): Uint8Array | undefined {
    this.rootBin();
    let node = this.rootNode;
    for (let k = 0; k < path.length - 1; k++) node = this.branchOnPath(node, path, k).child(path[k]!);
    const b = this.branchOnPath(node, path, path.length - 1);
    const ref = branchChildRef(b.enc!, path[path.length - 1]!, pruneSpans);
    return ref === undefined ? undefined : fromBin(ref);
  }

  /**
   * Replaces the subtree at nibble path `path` by the one with reference `ref` (a 32-byte hash
   * becomes a stub; a shorter ref is an embedded node and is decoded; undefined empties it).
   * How a storage node keeps the shards it does not own: as their roots only. Every node
   * above the path must be a branch; where there is nothing yet, an empty branch is made, so
   * a node can lay the skeleton by grafting every foreign shard into an empty tree before it
   * inserts its own keys. The caller must end with a canonical tree (every branch with two
   * entries or more); comparing the root with the block's state root shows if it did not.
   */
  graft(path: readonly number[], ref: Uint8Array | undefined): void {
    if (path.length === 0) throw new DsmError(DsmErrorCode.BadPath, 'graft needs a non-empty nibble path');
    this.changed = false;
    const r = this.graftAt(this.rootNode, path, 0, ref === undefined ? undefined : toBin(ref));
    if (this.changed) this.setRoot(r);
  }

  private branchOnPath(node: TrieNode | undefined, path: readonly number[], k: number): BranchNode {
    if (
      node !== undefined &&
      node.kind === STUB &&
      (this.resolver !== undefined || this.source !== undefined)
    ) {
      node = this.fault(node, nibblesKey(path, k), k, -1);
    }
    if (node === undefined || node.kind !== BRANCH) {
      throw new DsmError(
        DsmErrorCode.BadPath,
        `nibble path ${path.join('.')} needs a branch at depth ${k}, found ${node === undefined ? 'nothing' : KIND_NAMES[node.kind]}`,
        { path: [...path], depth: k },
      );
    }
    return node;
  }

  private graftAt(
    node: TrieNode | undefined,
    path: readonly number[],
    k: number,
    ref: Bin | undefined,
  ): TrieNode {
    const b = node === undefined ? BranchNode.empty(this.gen) : this.branchOnPath(node, path, k);
    const i = path[k]!;
    let nc: TrieNode | undefined;
    if (k < path.length - 1) {
      nc = this.graftAt(b.child(i), path, k + 1, ref);
      if (!this.changed) return b === node ? node : b;
    } else {
      if (b.enc !== undefined && (b.mask & (1 << i)) === 0 && branchChildRef(b.enc, i, pruneSpans) === ref) {
        return b === node ? node : b; // already that subtree
      }
      if (ref === undefined) nc = undefined;
      else if (ref.length === 32) nc = new HashNode(ref);
      else nc = decodeNode(fromBin(ref), [...path], path.length);
    }
    this.changed = true;
    const o = this.own(b);
    o.replaceChild(i, nc);
    return o;
  }

  // ---------------------------------------------------------------- proofs

  /**
   * Tells `visit` of every hashed node held in memory (≥ 32 bytes, and the root whatever its
   * size), children before their parent, each once per call; stubs are skipped (their nodes live
   * elsewhere). This is the whole resident tree, where `onHashed` is only what commits create: a
   * node store fills itself from it once (genesis, a restored checkpoint) and follows `onHashed`
   * after. One keccak per node. `seen` (nodes already told) can be shared by the calls of a
   * sweep over many versions, which share most nodes (a leaf may then be told again: see below).
   */
  forEachNode(visit: NodeListener, seen: Set<object> = new Set()): void {
    const r = this.rootNode;
    if (r === undefined || r.kind === STUB) return;
    this.rootBin();
    this.walkNodes(r, 0, true, visit, seen);
  }

  /**
   * forEachNode for the subtree at nibble path `path` (every node above it a branch) alone: its
   * hashed nodes, children first, the subtree's top included when it is 32 bytes or more. How a
   * genesis built subtree by subtree hands each one's nodes to a store.
   */
  forEachNodeAt(path: readonly number[], visit: NodeListener): void {
    this.rootBin();
    let node = this.rootNode;
    for (let k = 0; k < path.length; k++) {
      if (node === undefined || node.kind !== BRANCH) return;
      node = node.child(path[k]!);
    }
    if (node === undefined || node.kind === STUB) return;
    this.walkNodes(node, path.length, path.length === 0, visit, new Set());
  }

  private walkNodes(
    top: InnerNode,
    topDepth: number,
    topIsRoot: boolean,
    visit: NodeListener,
    seen: Set<object>,
  ): void {
    const walk = (n: InnerNode, depth: number, isRoot: boolean): void => {
      // A leaf encodes its key from its depth, and one leaf object can sit at different depths
      // in two versions (a delete collapsed the branch above it): it is a different node in
      // each, so leaves are not deduplicated by object (their parent, which is, bounds the cost).
      if (n.kind !== LEAF) {
        if (seen.has(n)) return;
        seen.add(n);
      }
      if (n.kind === BRANCH) {
        for (let i = 0; i < 16; i++) {
          const c = n.loaded(i);
          if (c !== undefined && c.kind !== STUB) walk(c, depth + 1, false);
        }
      } else if (n.kind === EXTENSION) {
        if (n.child.kind !== STUB) walk(n.child, depth + n.path.length, false);
      }
      let enc: Bin;
      if (n.kind === LEAF) {
        proofWriter.pos = 0;
        const len = writeLeaf(proofWriter, n, depth);
        enc = proofWriter.buf.toString('latin1', 0, len);
      } else enc = n.enc!;
      if (enc.length >= 32 || isRoot) visit(toBin(this.keccak.keccak256(Buffer.from(enc, 'latin1'))), enc);
    };
    walk(top, topDepth, topIsRoot);
  }

  /** How many nodes this tree holds in memory (stubs not counted), each once per `seen`. */
  residentNodes(seen: Set<object> = new Set()): number {
    return this.countResident(seen, () => 1);
  }

  /** The bytes of the nodes this tree holds in memory (residentNodeBytes), each once per `seen`. */
  residentBytes(seen: Set<object> = new Set()): number {
    return this.countResident(seen, residentNodeBytes);
  }

  private countResident(seen: Set<object>, size: (n: InnerNode) => number): number {
    let count = 0;
    const stack: TrieNode[] = [];
    if (this.rootNode !== undefined) stack.push(this.rootNode);
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n.kind === STUB || seen.has(n)) continue;
      seen.add(n);
      count += size(n);
      if (n.kind === BRANCH) {
        for (let i = 0; i < 16; i++) {
          const c = n.loaded(i);
          if (c !== undefined) stack.push(c);
        }
      } else if (n.kind === EXTENSION) stack.push(n.child);
    }
    return count;
  }

  /**
   * The Ethereum proof for `key` (as eth_getProof): the RLP of each hashed node from the root
   * down the key's path — a proof of absence when the key is not there. Embedded nodes are
   * inside their parents. `omitLevels` = c gives a compact proof without the top c levels.
   * Branches and extensions hold their encodings, so a proof is mostly copying.
   */
  prove(key: Uint8Array, omitLevels = 0): Uint8Array[] {
    if (this.rootNode === undefined) return [];
    proofWriter.pos = 0;
    proofEnds.n = 0;
    this.writeProof(key, omitLevels, false, false);
    return slices(proofWriter, proofEnds, undefined);
  }

  /**
   * The union of the proofs of `keys`, each node once (a node bag's contents), with the top
   * `omitLevels` levels left out. Shared nodes are recognised as the same objects, so nothing
   * is hashed or compared to build it. (A path that had to be faulted in through the resolver
   * may repeat an upper node an earlier key's proof already holds: it is a copy.)
   */
  proveMany(keys: readonly Uint8Array[], omitLevels = 0): Uint8Array[] {
    return this.bagOf(keys, omitLevels, undefined);
  }

  /**
   * get() of every key and proveMany(keys, omitLevels) in one walk per key: `values[i]` is set to
   * get(keys[i]), and the nodes returned are proveMany's, in its order. A key's value lies at the
   * end of its proof's path, so a reader that wants both (a storage node's BatchGet) walks once.
   * The values and the nodes are views of one buffer (a value kept keeps the answer's memory).
   */
  getProveMany(
    keys: readonly Uint8Array[],
    omitLevels: number,
    values: (Uint8Array | undefined)[],
  ): Uint8Array[] {
    if (this.rootNode === undefined) {
      for (let i = 0; i < keys.length; i++) values[i] = undefined;
      return [];
    }
    return this.bagOf(keys, omitLevels, values);
  }

  /**
   * getProveMany with the nodes as one buffer and where each ends (PackedNodes) instead of a view
   * per node, for a reader that writes them out again (a storage node's BatchGet answer): the
   * same nodes, in the same order, as getProveMany's. The values are views of the same buffer.
   */
  getProvePacked(
    keys: readonly Uint8Array[],
    omitLevels: number,
    values: (Uint8Array | undefined)[],
  ): PackedNodes {
    if (this.rootNode === undefined) {
      for (let i = 0; i < keys.length; i++) values[i] = undefined;
      return { bytes: new Uint8Array(0), ends: new Int32Array(0) };
    }
    this.writeBag(keys, omitLevels, true);
    const bytes = slab(proofWriter, values);
    return { bytes: bytes.subarray(0, proofWriter.pos), ends: proofEnds.a.slice(0, proofEnds.n) };
  }

  /** proveMany, and with `values` getProveMany. */
  private bagOf(
    keys: readonly Uint8Array[],
    omitLevels: number,
    values: (Uint8Array | undefined)[] | undefined,
  ): Uint8Array[] {
    if (this.rootNode === undefined) return [];
    this.writeBag(keys, omitLevels, values !== undefined);
    return slices(proofWriter, proofEnds, values);
  }

  /** Writes the proofs of `keys` to proofWriter (and with `want` their values to valueWriter). */
  private writeBag(keys: readonly Uint8Array[], omitLevels: number, want: boolean): void {
    proofWriter.pos = 0;
    proofEnds.n = 0;
    valueWriter.pos = 0;
    valueEnds.n = 0;
    packedSeen = undefined;
    try {
      for (let i = 0; i < keys.length; i++) this.writeProof(keys[i]!, omitLevels, true, want);
    } finally {
      // No node keeps the mark past the call (see IN_BAG).
      unmark(0);
      packedSeen = undefined;
    }
  }

  /**
   * Appends key's proof nodes to proofWriter (their ends to proofEnds); with `dedup`, only those
   * not in the bag yet (IN_BAG), marking the ones it writes. With `wantValue`, appends what
   * get(key) would return to valueWriter (its end to valueEnds; -1 for none): the value is where
   * the path ends.
   */
  private writeProof(key: Uint8Array, omitLevels: number, dedup: boolean, wantValue: boolean): void {
    this.rootBin();
    const w = proofWriter;
    const startPos = w.pos;
    const startEnds = proofEnds.n;
    const startBag = marked;
    const klen = key.length * 2;
    let node: TrieNode | undefined = this.rootNode;
    let d = 0;
    let level = 0;
    while (node !== undefined) {
      if (node.kind === STUB) {
        if (this.source?.readBin !== undefined && this.resolver === undefined) {
          const src = this.source as PackedSource;
          if (dedup) packedSeen ??= new Set();
          packedEnds.length = 0;
          provePacked(src, node.ref, key, d, level, omitLevels, w, packedEnds, packedSeen);
          for (const e of packedEnds) proofEnds.push(e);
          if (wantValue) putValue(getPacked(src, node.ref, key, d));
          return;
        }
        // Fault the path in (or throw MissingNode), then write this key's proof again.
        w.pos = startPos;
        proofEnds.n = startEnds;
        unmark(startBag);
        this.materialize(key, undefined);
        this.writeProof(key, omitLevels, dedup, wantValue);
        return;
      }
      const n = node;
      if (n.used !== IN_BAG) {
        n.used = USED;
        if (level >= omitLevels) {
          const start = w.pos;
          if (n.kind === LEAF) writeLeaf(w, n, d);
          else w.bin(n.enc!);
          // Level 0 (the root) is always hashed; below it, only encodings of 32 bytes or more.
          if (level === 0 || w.pos - start >= 32) {
            proofEnds.push(w.pos);
            if (dedup) {
              n.used = IN_BAG;
              inBag[marked++] = n;
            }
          } else w.pos = start;
        }
      }
      level++;
      if (n.kind === LEAF) {
        if (wantValue) putBinValue(keyEqualsBin(key, n.key) ? n.value : undefined);
        return;
      }
      if (n.kind === BRANCH) {
        if (d === klen) {
          if (wantValue) putBinValue(n.value);
          return;
        }
        node = n.child(keyNibble(key, d++));
      } else {
        if (!keyHasPath(key, d, n.path)) break;
        d += n.path.length;
        node = n.child;
      }
    }
    if (wantValue) putBinValue(undefined);
  }
}

/**
 * `make()` with no stack trace captured: for an error that is an expected answer on a hot path
 * (a MissingNode: a client probing what it lacks, a miner's run ahead reading a key a witness
 * does not cover, and the executor's MISSING wrapping it), thrown and caught thousands of times
 * a second. Capturing the stack was most
 * of such a throw's cost (~14 vs ~1.5 µs a throw 30 frames deep, loaded box).
 */
export function withoutStack<E>(make: () => E): E {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
