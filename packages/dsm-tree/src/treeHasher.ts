/**
 * Lazy hash resolution. Writes only clear `ref` on their path; `commit()` walks the dirty part
 * of a tree once, encodes every dirty node bottom-up into one buffer (a hashed child leaves a
 * 32-byte hole in its parent's encoding), and hashes them all in ONE call across the JS/C++
 * boundary (`keccak256Tree`, which fills each hole right after hashing the child). Clean
 * subtrees are never visited.
 */
import type { Keccak } from '@monsoon/keccak';
import type { Bin } from './bytes.js';
import { ByteWriter, encodeNode } from './nodeCodec.js';
import { BRANCH, EXTENSION, type InnerNode, LEAF } from './trieNode.js';

/**
 * Encodings pending hashing are flushed (hashed in one call) once they pass this size, so the
 * first root of a million-account tree needs a few MB of scratch, not the whole tree's bytes.
 */
const FLUSH_BYTES = 1 << 20;

export class TreeHasher {
  private readonly w = new ByteWriter(FLUSH_BYTES + (1 << 16));
  private offsets = new Uint32Array(1024);
  private patch = new Int32Array(1024);
  private out = Buffer.allocUnsafe(1024 * 32);
  /** Hashed (≥ 32-byte) nodes of this pass, in post-order; the root is always last. */
  private readonly jobs: InnerNode[] = [];
  /** Job indices of finished hashed nodes whose parent is not encoded yet. */
  private readonly stack: number[] = [];
  private readonly holes: number[] = [];
  private readonly onHole = (hole: number): void => {
    this.holes.push(hole);
  };

  constructor(private readonly keccak: Keccak) {}

  /**
   * Hashes the dirty nodes under `root` (which sits at nibble `depth`) and returns the root's
   * keccak256. A root is always hashed, even one whose encoding is under 32 bytes (that one keeps
   * its encoding as `ref`, as an embedded node would).
   */
  commit(root: InnerNode, depth = 0): Bin {
    const ref = root.ref;
    if (ref !== undefined) {
      if (ref.length === 32) return ref;
      return this.digestBin(Buffer.from(ref, 'latin1'));
    }
    this.w.pos = 0;
    this.jobs.length = 0;
    this.stack.length = 0;
    this.visit(root, depth);
    const rootStart = this.w.pos;
    const len = this.encode(root, depth);
    const n = this.addJob(root, rootStart);
    this.hashJobs(n);
    const digest = root.ref!;
    if (len < 32) root.ref = this.w.buf.toString('latin1', rootStart, rootStart + len);
    this.jobs.length = 0;
    return digest;
  }

  private digestBin(data: Uint8Array): Bin {
    const d = this.keccak.keccak256(data);
    return Buffer.from(d.buffer, d.byteOffset, 32).toString('latin1', 0, 32);
  }

  /** Post-order over the dirty children of `node` (not `node` itself). */
  private visit(node: InnerNode, depth: number): void {
    if (node.kind === BRANCH) {
      for (let i = 0; i < 16; i++) {
        const c = node.child(i);
        if (c !== undefined && c.ref === undefined) this.visitChild(c as InnerNode, depth + 1);
      }
    } else if (node.kind === EXTENSION) {
      const c = node.child;
      if (c.ref === undefined) this.visitChild(c as InnerNode, depth + node.path.length);
    }
  }

  private visitChild(node: InnerNode, depth: number): void {
    this.visit(node, depth);
    const start = this.w.pos;
    const len = this.encode(node, depth);
    if (len < 32) {
      node.ref = this.w.buf.toString('latin1', start, start + len);
      this.w.pos = start; // embedded: it lives inside its parent's encoding and is never hashed alone
      return;
    }
    this.stack.push(this.addJob(node, start) - 1);
    if (this.w.pos >= FLUSH_BYTES) this.flush();
  }

  /**
   * Hashes everything encoded so far. Every hole in these encodings is already wired (parents
   * come after children); nodes still on the stack get their ref now, so their parents, encoded
   * later, embed the hash directly instead of leaving a hole.
   */
  private flush(): void {
    this.hashJobs(this.jobs.length);
    this.jobs.length = 0;
    this.stack.length = 0;
    this.w.pos = 0;
  }

  /** Encodes `node` and wires the holes of its pending children to their jobs. */
  private encode(node: InnerNode, depth: number): number {
    const holes = this.holes;
    holes.length = 0;
    const len = encodeNode(node, depth, this.w, node.kind === LEAF ? undefined : this.onHole);
    // The pending (hashed) children were finished in child order: they are the top of the stack.
    const stack = this.stack;
    const k = holes.length;
    const base = stack.length - k;
    for (let i = 0; i < k; i++) this.patch[stack[base + i]!] = holes[i]!;
    stack.length = base;
    return len;
  }

  /** Records `node`'s encoding [start, w.pos) as the next job; returns the job count. */
  private addJob(node: InnerNode, start: number): number {
    const j = this.jobs.length;
    this.jobs.push(node);
    if (j + 2 > this.offsets.length) this.growJobs(j + 2);
    this.offsets[j] = start;
    this.offsets[j + 1] = this.w.pos;
    this.patch[j] = -1;
    return j + 1;
  }

  /** One call across the boundary for every job, then the refs. */
  private hashJobs(n: number): void {
    if (this.out.length < n * 32) this.out = Buffer.allocUnsafe(Math.max(n * 32, this.out.length * 2));
    const out = this.out;
    this.keccak.keccak256Tree(this.w.buf, this.offsets, this.patch, n, out);
    const jobs = this.jobs;
    for (let j = 0; j < n; j++) jobs[j]!.ref = out.toString('latin1', j * 32, j * 32 + 32);
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
