/**
 * The DSM-Tree: an Ethereum Merkle Patricia Trie held in memory as pointer-linked nodes, with
 * lazy batched hashing, O(1) copy-on-write snapshots, proofs, pruning to a top layer, filling
 * from node bags, witness revision, and a byte encoding for checkpoints. Keys are used as given
 * (no hashing); see StateTree for the Ethereum state view.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { BranchNode } from './branchNode.js';
import { type Bin, binToHex, fromBin, toBin } from './bytes.js';
import { DsmError, DsmErrorCode } from './dsmError.js';
import { ExtensionNode } from './extensionNode.js';
import { HashNode } from './hashNode.js';
import { LeafNode } from './leafNode.js';
import { binNibble, commonWithPath, keyEqualsBin, keyHasPath, keyNibble, keyNibbles } from './nibbles.js';
import { NodeBag } from './nodeBag.js';
import { ByteWriter, decodeNode, encodeNode } from './nodeCodec.js';
import { TreeHasher } from './treeHasher.js';
import { BRANCH, EXTENSION, type InnerNode, LEAF, nextGen, STUB, type TrieNode } from './trieNode.js';

/** Supplies the RLP encoding of a node by its 32-byte hash (a bag, a store, a remote read). */
export type NodeResolver = (hash: Uint8Array) => Uint8Array | undefined;

/** Anything nodes can be faulted in from. */
export type NodeSource = NodeBag | NodeResolver;

export interface DsmTreeOptions {
  /** Keccak implementation; default: the native addon when built, else @noble/hashes. */
  hash?: Keccak;
  /**
   * Called when an operation reaches a hash stub. Without one, a stub on the path raises
   * MissingNode. Whatever it returns is checked against the stub's hash before use.
   */
  resolver?: NodeResolver;
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
const encWriter = new ByteWriter(1 << 10);

/**
 * Branches shallower than this many nibbles cache their encoding for proofs: at most
 * 1 + 16 + 256 + 4096 nodes (~2.4 MB), and they are on every proof's path.
 */
const PROOF_CACHE_DEPTH = 4;

function encodeToBin(n: InnerNode, depth: number): Bin {
  encWriter.pos = 0;
  const len = encodeNode(n, depth, encWriter);
  return encWriter.buf.toString('latin1', 0, len);
}

export class DsmTree {
  private rootNode: TrieNode | undefined;
  /** Nodes whose `gen` equals this may be mutated in place; see trieNode.ts. */
  private gen: number;
  readonly keccak: Keccak;
  private readonly hasher: TreeHasher;
  resolver: NodeResolver | undefined;

  constructor(opts: DsmTreeOptions = {}) {
    this.keccak = opts.hash ?? defaultDsmTreeOptions.hash;
    this.hasher = hasherFor(this.keccak);
    this.resolver = opts.resolver;
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

  /** The value stored at `key`, or undefined. */
  get(key: Uint8Array): Uint8Array | undefined {
    const klen = key.length * 2;
    let node = this.rootNode;
    let d = 0;
    for (;;) {
      if (node === undefined) return undefined;
      switch (node.kind) {
        case LEAF:
          return keyEqualsBin(key, node.key) ? fromBin(node.value) : undefined;
        case BRANCH:
          if (d === klen) return node.value === undefined ? undefined : fromBin(node.value);
          node = node.child(keyNibble(key, d++));
          break;
        case EXTENSION:
          if (!keyHasPath(key, d, node.path)) return undefined;
          d += node.path.length;
          node = node.child;
          break;
        case STUB:
          this.materialize(key, undefined);
          return this.get(key);
      }
    }
  }

  /** keccak256 root; the empty trie gives 56e81f17…b421. Hashes what writes left dirty. */
  root(): Uint8Array {
    return fromBin(this.rootBin());
  }

  /** The root as a binary string (internal form). */
  rootBin(): Bin {
    const r = this.rootNode;
    if (r === undefined) return EMPTY_ROOT_BIN;
    if (r.kind === STUB) return r.ref;
    return this.hasher.commit(r);
  }

  // ---------------------------------------------------------------- writes

  /** Stores `value` at `key`. An empty value deletes the key, as in Ethereum. */
  put(key: Uint8Array, value: Uint8Array): void {
    if (value.length === 0) {
      this.del(key);
      return;
    }
    this.rootNode = this.ins(this.rootNode, key, 0, toBin(value));
  }

  /** Removes `key` (a no-op when absent), collapsing the tree back to canonical form. */
  del(key: Uint8Array): void {
    this.rootNode = this.rem(this.rootNode, key, 0);
  }

  /** O(1): a tree with the same contents; later writes to either never show in the other. */
  snapshot(): DsmTree {
    const t = new DsmTree({ hash: this.keccak, ...(this.resolver ? { resolver: this.resolver } : {}) });
    t.rootNode = this.rootNode;
    this.gen = nextGen(); // every node reachable now is frozen for both trees
    return t;
  }

  private own<T extends InnerNode>(n: T): T {
    if (n.gen === this.gen) {
      n.ref = undefined;
      if (n.kind === BRANCH) n.enc = undefined;
      return n;
    }
    return this.clone(n, undefined) as T;
  }

  /** Like own(), but for changes that keep the node's content (and so its ref). */
  private adopt<T extends InnerNode>(n: T): T {
    return n.gen === this.gen ? n : (this.clone(n, n.ref) as T);
  }

  private clone(n: InnerNode, ref: Bin | undefined): InnerNode {
    switch (n.kind) {
      case LEAF:
        return new LeafNode(n.key, n.value, this.gen, ref);
      case EXTENSION:
        return new ExtensionNode(n.path, n.child, this.gen, ref);
      case BRANCH:
        return n.copy(this.gen, ref);
    }
  }

  /** A leaf that now hangs at another depth: its encoding changes, so its ref must go. */
  private relocate(l: LeafNode): LeafNode {
    if (l.gen === this.gen) {
      l.ref = undefined;
      return l;
    }
    return new LeafNode(l.key, l.value, this.gen);
  }

  private ins(node: TrieNode | undefined, key: Uint8Array, d: number, v: Bin): TrieNode {
    if (node === undefined) return new LeafNode(toBin(key), v, this.gen);
    switch (node.kind) {
      case LEAF: {
        if (keyEqualsBin(key, node.key)) {
          if (node.value === v) return node;
          const l = this.own(node);
          l.value = v;
          return l;
        }
        return this.splitLeaf(node, key, d, v);
      }
      case BRANCH: {
        if (d === key.length * 2) {
          if (node.value === v) return node;
          const b = this.own(node);
          b.value = v;
          return b;
        }
        const i = keyNibble(key, d);
        const c = node.child(i);
        const nc = this.ins(c, key, d + 1, v);
        if (nc === c && nc.ref !== undefined) return node;
        const b = this.own(node);
        b.setChild(i, nc);
        return b;
      }
      case EXTENSION: {
        const path = node.path;
        const m = commonWithPath(key, d, path);
        if (m === path.length) {
          const c = node.child;
          const nc = this.ins(c, key, d + m, v);
          if (nc === c && nc.ref !== undefined) return node;
          const e = this.own(node);
          e.child = nc;
          return e;
        }
        const b = BranchNode.empty(this.gen);
        b.setChild(
          path.charCodeAt(m),
          m + 1 < path.length ? new ExtensionNode(path.slice(m + 1), node.child, this.gen) : node.child,
        );
        this.placeNew(b, key, d + m, v);
        return m > 0 ? new ExtensionNode(path.slice(0, m), b, this.gen) : b;
      }
      case STUB:
        return this.ins(this.fault(node, key, d, -1), key, d, v);
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
    else b.setChild(binNibble(lk, at), this.relocate(l));
    this.placeNew(b, key, at, v);
    return at > d ? new ExtensionNode(keyNibbles(key, d, at), b, this.gen) : b;
  }

  private placeNew(b: BranchNode, key: Uint8Array, at: number, v: Bin): void {
    if (key.length * 2 === at) b.value = v;
    else b.setChild(keyNibble(key, at), new LeafNode(toBin(key), v, this.gen));
  }

  private rem(node: TrieNode | undefined, key: Uint8Array, d: number): TrieNode | undefined {
    if (node === undefined) return undefined;
    switch (node.kind) {
      case LEAF:
        return keyEqualsBin(key, node.key) ? undefined : node;
      case BRANCH: {
        let i = -1;
        if (d === key.length * 2) {
          if (node.value === undefined) return node;
        } else {
          i = keyNibble(key, d);
          const c = node.child(i);
          if (c === undefined) return node;
          const nc = this.rem(c, key, d + 1);
          if (nc === c && nc.ref !== undefined) return node;
          if (nc !== undefined) {
            const b = this.own(node);
            b.setChild(i, nc);
            return b;
          }
        }
        return this.removeEntry(node, i, key, d);
      }
      case EXTENSION: {
        if (!keyHasPath(key, d, node.path)) return node;
        const c = node.child;
        const nc = this.rem(c, key, d + node.path.length);
        if (nc === c && nc.ref !== undefined) return node;
        if (nc === undefined) return undefined;
        if (nc.kind === LEAF) return this.relocate(nc);
        if (nc.kind === EXTENSION) return new ExtensionNode(node.path + nc.path, nc.child, this.gen);
        const e = this.own(node);
        e.child = nc;
        return e;
      }
      case STUB:
        return this.rem(this.fault(node, key, d, -1), key, d);
    }
  }

  /**
   * Removes child `i` (or the value, when i < 0) from a branch, restoring canonical form. Whatever
   * can fail (faulting in a stub sibling that must be merged up) happens before anything is
   * changed, so a failed delete leaves the tree exactly as it was.
   */
  private removeEntry(node: BranchNode, i: number, key: Uint8Array, d: number): TrieNode | undefined {
    const value = i < 0 ? undefined : node.value;
    let count = 0;
    let idx = -1;
    for (let j = 0; j < 16; j++) {
      if (j !== i && node.child(j) !== undefined) {
        count++;
        idx = j;
      }
    }
    if (count === 0) {
      // Only a value can be left: it becomes a leaf whose key is the path to here.
      return value === undefined ? undefined : new LeafNode(toBin(key.subarray(0, d >> 1)), value, this.gen);
    }
    if (count >= 2 || value !== undefined) {
      const b = this.own(node);
      if (i < 0) b.value = undefined;
      else b.setChild(i, undefined);
      return b;
    }
    // One child left and no value: it merges up into this branch's place.
    let c = node.child(idx)!;
    if (c.kind === STUB) c = this.fault(c, key, d, idx);
    if (c.kind === LEAF) return this.relocate(c);
    if (c.kind === EXTENSION) return new ExtensionNode(String.fromCharCode(idx) + c.path, c.child, this.gen);
    return new ExtensionNode(String.fromCharCode(idx), c, this.gen);
  }

  // ---------------------------------------------------------------- stubs, bags, witnesses

  /**
   * Replaces a stub by the node it stands for, from `source` (default: this tree's resolver).
   * The stub sits at nibble depth d on key's path (plus nibble `extra` when ≥ 0).
   */
  private fault(stub: HashNode, key: Uint8Array, d: number, extra: number, source?: NodeSource): InnerNode {
    const src = source ?? this.resolver;
    let enc: Uint8Array | undefined;
    if (src instanceof NodeBag) enc = src.getBin(stub.ref);
    else if (src !== undefined) enc = src(fromBin(stub.ref));
    if (enc === undefined) {
      throw new DsmError(DsmErrorCode.MissingNode, `node ${binToHex(stub.ref)} is not in memory`, {
        hash: binToHex(stub.ref),
        depth: extra >= 0 ? d + 1 : d,
      });
    }
    const h = this.keccak.keccak256(enc);
    if (toBin(h) !== stub.ref) {
      throw new DsmError(
        DsmErrorCode.HashMismatch,
        `node for ${binToHex(stub.ref)} hashes to ${binToHex(toBin(h))}`,
        {
          expected: binToHex(stub.ref),
          found: binToHex(toBin(h)),
        },
      );
    }
    const prefix: number[] = [];
    for (let i = 0; i < d; i++) prefix.push(keyNibble(key, i));
    let n = d;
    if (extra >= 0) prefix[n++] = extra;
    return decodeNode(enc, prefix, n, stub.ref);
  }

  /** Replaces every stub on key's path by its node from `source`; content (and refs) unchanged. */
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
        const b = this.adopt(node);
        b.setChild(i, nc);
        return b;
      }
      case EXTENSION: {
        if (!keyHasPath(key, d, node.path)) return node;
        const nc = this.mat(node.child, key, d + node.path.length, src)!;
        if (nc === node.child) return node;
        const e = this.adopt(node);
        e.child = nc;
        return e;
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
   * Embedded nodes (under 32 bytes) have no hash and stay with their parent.
   */
  prune(r: number): void {
    if (!Number.isInteger(r) || r < 0)
      throw new RangeError(`retention level must be an integer ≥ 0, got ${r}`);
    if (this.rootNode === undefined) return;
    this.rootBin();
    this.rootNode = this.pruneNode(this.rootNode, 0, r);
  }

  private pruneNode(node: TrieNode, level: number, r: number): TrieNode {
    if (node.kind === STUB) return node;
    if (level >= r) return node.ref!.length === 32 ? new HashNode(node.ref!) : node;
    if (node.kind === LEAF) return node;
    if (node.kind === EXTENSION) {
      const nc = this.pruneNode(node.child, level + 1, r);
      if (nc === node.child) return node;
      const e = this.adopt(node);
      e.child = nc;
      return e;
    }
    let b: BranchNode | undefined;
    for (let i = 0; i < 16; i++) {
      const c = node.child(i);
      if (c === undefined) continue;
      const nc = this.pruneNode(c, level + 1, r);
      if (nc !== c) {
        b ??= this.adopt(node);
        b.setChild(i, nc);
      }
    }
    return b ?? node;
  }

  // ---------------------------------------------------------------- proofs

  /**
   * The Ethereum proof for `key` (as eth_getProof): the RLP of each hashed node from the root
   * down the key's path — a proof of absence when the key is not there. Embedded nodes are
   * inside their parents. `omitLevels` = c gives a compact proof without the top c levels.
   */
  prove(key: Uint8Array, omitLevels = 0): Uint8Array[] {
    if (this.rootNode === undefined) return [];
    if (this.hasStubOnPath(key)) this.materialize(key, undefined);
    this.rootBin();
    const w = proofWriter;
    w.pos = 0;
    const ends: number[] = [];
    const klen = key.length * 2;
    let node: TrieNode | undefined = this.rootNode;
    let d = 0;
    let level = 0;
    while (node !== undefined) {
      const n = node as InnerNode;
      if (level >= omitLevels && (level === 0 || n.ref!.length === 32)) {
        if (n.kind === BRANCH && d < PROOF_CACHE_DEPTH) {
          // Encoding a branch loads all its children (to read their refs): 16 cache misses
          // in a big tree. The few branches near the root are in every proof: keep theirs.
          n.enc ??= encodeToBin(n, d);
          w.ensure(n.enc.length);
          w.pos += w.buf.write(n.enc, w.pos, 'latin1');
        } else encodeNode(n, d, w);
        ends.push(w.pos);
      }
      level++;
      if (n.kind === LEAF) break;
      if (n.kind === BRANCH) {
        if (d === klen) break;
        node = n.child(keyNibble(key, d++));
      } else {
        if (!keyHasPath(key, d, n.path)) break;
        d += n.path.length;
        node = n.child;
      }
    }
    const all = new Uint8Array(w.pos);
    all.set(w.buf.subarray(0, w.pos));
    const out: Uint8Array[] = new Array(ends.length);
    let s = 0;
    for (let i = 0; i < ends.length; i++) {
      out[i] = all.subarray(s, ends[i]);
      s = ends[i]!;
    }
    return out;
  }

  private hasStubOnPath(key: Uint8Array): boolean {
    const klen = key.length * 2;
    let node = this.rootNode;
    let d = 0;
    while (node !== undefined) {
      switch (node.kind) {
        case STUB:
          return true;
        case LEAF:
          return false;
        case BRANCH:
          if (d === klen) return false;
          node = node.child(keyNibble(key, d++));
          break;
        case EXTENSION:
          if (!keyHasPath(key, d, node.path)) return false;
          d += node.path.length;
          node = node.child;
          break;
      }
    }
    return false;
  }
}
