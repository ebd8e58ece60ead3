/**
 * Lazy hash resolution. Writes only mark the changed slots on their path (trieNode.ts);
 * `commit()` re-encodes exactly the marked nodes, children first, into one buffer — copying
 * each branch's unchanged slots from its previous encoding, so an unchanged child is never
 * even loaded — and hashes them in one call across the JS/C++ boundary (`keccak256Tree`,
 * which writes each child's hash into the hole its parent left for it). The new encodings
 * become the nodes' `enc`.
 */
import type { Keccak } from '@monsoon/keccak';
import { writeHeader } from '@monsoon/util';
import { ALL_SLOTS, type BranchNode, VALUE_BIT } from './branchNode.js';
import type { Bin } from './bytes.js';
import type { NodeListener } from './dsmTree.js';
import {
  ByteWriter,
  binStringSize,
  branchSpans,
  listHeaderSize,
  refSize,
  writeExtension,
  writeHole,
  writeLeaf,
  writeRef,
} from './nodeCodec.js';
import { BRANCH, EXTENSION, type InnerNode, LEAF, STUB, type TrieNode } from './trieNode.js';

/**
 * Encodings pending hashing are flushed (hashed in one call) once they pass this size, so the
 * first root of a million-account tree needs about a megabyte of scratch, not the tree's size.
 */
const FLUSH_BYTES = 1 << 20;

/** A child's reference while committing: known bytes, or the global index of a pending job. */
type Ref = Bin | number;

export class TreeHasher {
  private readonly w = new ByteWriter(FLUSH_BYTES + (1 << 16));
  private offsets = new Uint32Array(1024);
  private patch = new Int32Array(1024);
  private out = Buffer.allocUnsafe(1024 * 32);
  /** Hashed (≥ 32-byte) nodes encoded since the last flush, in post-order. */
  private readonly jobs: InnerNode[] = [];
  /** Global index of jobs[0] within this commit. */
  private base = 0;
  /** Hashes of flushed jobs whose parent was not encoded yet (and of the root). */
  private readonly flushed = new Map<number, Bin>();
  private readonly spans = new Int32Array(18);
  /** encodeBranch's children refs, one array per nibble depth (only the changed slots are read). */
  private readonly refsAt: (Ref | undefined)[][] = [];
  /** The listener of the commit in progress. */
  private onHashed: NodeListener | undefined = undefined;

  constructor(private readonly keccak: Keccak) {}

  /** True when `node` must be re-encoded (a leaf, having no cache, always is). */
  static dirty(node: InnerNode): boolean {
    if (node.kind === BRANCH) return node.mask !== 0 || node.enc === undefined;
    if (node.kind === EXTENSION) return node.changed || node.enc === undefined;
    return true;
  }

  /**
   * Re-encodes and hashes what changed under `root` (which sits at nibble `depth`) and returns
   * the root's keccak256. A root is always hashed, even one under 32 bytes.
   */
  commit(root: InnerNode, depth = 0, onHashed?: NodeListener): Bin {
    if (root.kind !== LEAF && !TreeHasher.dirty(root)) return this.digest(root.enc!);
    this.onHashed = onHashed;
    this.w.pos = 0;
    this.jobs.length = 0;
    this.base = 0;
    this.flushed.clear();
    const j = this.encode(root, depth, true) as number;
    this.flush();
    const h = this.flushed.get(j)!;
    this.flushed.clear();
    this.onHashed = undefined;
    return h;
  }

  private digest(data: Bin): Bin {
    const d = this.keccak.keccak256(Buffer.from(data, 'latin1'));
    return Buffer.from(d.buffer, d.byteOffset, 32).toString('latin1', 0, 32);
  }

  /** The reference of a child whose slot changed: re-encoded if it changed too. */
  private childRef(c: TrieNode, depth: number): Ref {
    switch (c.kind) {
      case STUB:
        return c.ref;
      case LEAF:
        return this.encode(c, depth, false);
      default:
        if (TreeHasher.dirty(c)) return this.encode(c, depth, false);
        // A clean node moved here (a split or a collapse): its encoding gives its hash.
        return c.enc!.length < 32 ? c.enc! : this.digest(c.enc!);
    }
  }

  /** A pending job's hash if it was flushed meanwhile. */
  private settled(r: Ref): Ref {
    return typeof r === 'number' && r < this.base ? this.flushed.get(r)! : r;
  }

  /** Encodes `node` after its changed children; returns its ref if embedded, else its job. */
  private encode(node: InnerNode, depth: number, isRoot: boolean): Ref {
    let start: number;
    if (node.kind === LEAF) {
      start = this.w.pos;
      writeLeaf(this.w, node, depth);
    } else if (node.kind === EXTENSION) {
      const r = this.settled(this.childRef(node.child, depth + node.path.length));
      start = this.w.pos;
      const { hole } = writeExtension(this.w, node.path, typeof r === 'string' ? r : undefined);
      if (hole >= 0) this.patch[(r as number) - this.base] = hole;
    } else {
      start = this.encodeBranch(node, depth);
    }
    return this.finish(node, start, isRoot);
  }

  private encodeBranch(b: BranchNode, depth: number): number {
    const tpl = b.enc;
    const mask = tpl === undefined ? ALL_SLOTS : b.mask;
    // Children first (post-order): nothing of this node is written until they are. Their refs go
    // in scratch kept per depth (a child is deeper, so no two branches encoding at once share it).
    let refs = this.refsAt[depth];
    if (refs === undefined) {
      refs = new Array<Ref | undefined>(16);
      this.refsAt[depth] = refs;
    }
    for (let i = 0; i < 16; i++) {
      if (mask & (1 << i)) {
        const c = b.child(i);
        refs[i] = c === undefined ? undefined : this.childRef(c, depth + 1);
      }
    }
    for (let i = 0; i < 16; i++) if (mask & (1 << i)) refs[i] = this.settled(refs[i]!);
    const spans = this.spans;
    if (tpl !== undefined) branchSpans(tpl, spans);
    let payload = 0;
    let sameLayout = tpl !== undefined;
    for (let i = 0; i < 16; i++) {
      let size: number;
      if (mask & (1 << i)) {
        const r = refs[i];
        size = r === undefined ? 1 : typeof r === 'number' ? 33 : refSize(r);
        if (sameLayout && size !== spans[i + 1]! - spans[i]!) sameLayout = false;
      } else size = spans[i + 1]! - spans[i]!;
      payload += size;
    }
    let valueSize: number;
    if (mask & VALUE_BIT) {
      valueSize = b.value === undefined ? 1 : binStringSize(b.value);
      if (sameLayout && valueSize !== spans[17]! - spans[16]!) sameLayout = false;
    } else valueSize = spans[17]! - spans[16]!;
    payload += valueSize;
    const w = this.w;
    w.ensure(payload + 9);
    const start = w.pos;
    if (sameLayout) {
      // The usual case (a child's hash changed): the old encoding with those slots rewritten.
      w.pos += w.buf.write(tpl!, w.pos, 'latin1');
      const end = w.pos;
      for (let i = 0; i < 16; i++) {
        if (mask & (1 << i)) {
          w.pos = start + spans[i]!;
          this.writeSlot(refs[i]);
        }
      }
      if (mask & VALUE_BIT) {
        w.pos = start + spans[16]!;
        this.writeValue(b.value);
      }
      w.pos = end;
      return start;
    }
    w.pos = writeHeader(w.buf, w.pos, payload, 0xc0);
    let runFrom = -1; // first of a run of unchanged slots, copied in one write
    for (let i = 0; i <= 16; i++) {
      const changed = i === 16 ? (mask & VALUE_BIT) !== 0 : (mask & (1 << i)) !== 0;
      if (!changed) {
        if (runFrom < 0) runFrom = i;
        continue;
      }
      if (runFrom >= 0) {
        w.pos += w.buf.write(tpl!.slice(spans[runFrom]!, spans[i]!), w.pos, 'latin1');
        runFrom = -1;
      }
      if (i === 16) this.writeValue(b.value);
      else this.writeSlot(refs[i]);
    }
    if (runFrom >= 0) w.pos += w.buf.write(tpl!.slice(spans[runFrom]!, spans[17]!), w.pos, 'latin1');
    if (w.pos - start !== payload + listHeaderSize(payload)) {
      throw new Error(`TreeHasher: branch encoding is ${w.pos - start} bytes, expected ${payload}`);
    }
    return start;
  }

  private writeSlot(r: Ref | undefined): void {
    const w = this.w;
    if (r === undefined) w.buf[w.pos++] = 0x80;
    else if (typeof r === 'string') writeRef(w, r);
    else this.patch[r - this.base] = writeHole(w);
  }

  private writeValue(v: Bin | undefined): void {
    const w = this.w;
    if (v === undefined) {
      w.buf[w.pos++] = 0x80;
      return;
    }
    if (!(v.length === 1 && v.charCodeAt(0) < 0x80)) w.pos = writeHeader(w.buf, w.pos, v.length, 0x80);
    w.pos += w.buf.write(v, w.pos, 'latin1');
  }

  /** An encoding under 32 bytes is embedded in its parent; anything else becomes a job. */
  private finish(node: InnerNode, start: number, isRoot: boolean): Ref {
    const w = this.w;
    if (w.pos - start < 32 && !isRoot) {
      const s = w.buf.toString('latin1', start, w.pos);
      w.pos = start; // it lives inside its parent's encoding and is never hashed alone
      settle(node, s);
      return s;
    }
    const k = this.jobs.length;
    this.jobs.push(node);
    if (k + 2 > this.offsets.length) this.growJobs(k + 2);
    this.offsets[k] = start;
    this.offsets[k + 1] = w.pos;
    this.patch[k] = -1;
    const j = this.base + k;
    if (!isRoot && w.pos >= FLUSH_BYTES) this.flush();
    return j;
  }

  /**
   * Hashes every job in one call. Their encodings are complete (each hole was filled as its
   * child was hashed) and become the nodes' `enc`; a job whose parent is not encoded yet keeps
   * its hash in `flushed` for when it is.
   */
  private flush(): void {
    const n = this.jobs.length;
    if (n === 0) return;
    if (this.out.length < n * 32) this.out = Buffer.allocUnsafe(Math.max(n * 32, this.out.length * 2));
    const out = this.out;
    const w = this.w;
    this.keccak.keccak256Tree(w.buf, this.offsets, this.patch, n, out);
    const jobs = this.jobs;
    const tell = this.onHashed;
    for (let k = 0; k < n; k++) {
      const node = jobs[k]!;
      const enc =
        node.kind !== LEAF || tell !== undefined
          ? w.buf.toString('latin1', this.offsets[k]!, this.offsets[k + 1]!)
          : undefined;
      if (node.kind !== LEAF) settle(node, enc!);
      if (this.patch[k] === -1) this.flushed.set(this.base + k, out.toString('latin1', k * 32, k * 32 + 32));
      if (tell !== undefined) tell(out.toString('latin1', k * 32, k * 32 + 32), enc!);
    }
    this.base += n;
    jobs.length = 0;
    w.pos = 0;
  }

  private growJobs(n: number): void {
    const size = Math.max(n, this.offsets.length * 2);
    const offsets = new Uint32Array(size);
    offsets.set(this.offsets);
    this.offsets = offsets;
    const patch = new Int32Array(size);
    patch.set(this.patch);
    this.patch = patch;
  }
}

/** Stores a node's fresh encoding and marks it clean. */
function settle(node: InnerNode, enc: Bin): void {
  if (node.kind === BRANCH) {
    node.enc = enc;
    node.mask = 0;
  } else if (node.kind === EXTENSION) {
    node.enc = enc;
    node.changed = false;
  }
}
