/**
 * The client's cache of verified node encodings and code blobs, by the hash computed when each
 * arrived, packed outside the V8 heap: each entry (its 32-byte hash, its length, its bytes) is
 * written into a slab (a plain byte array whose memory V8 does not trace), found through an
 * open-addressing index of typed arrays. No JS object, string or Map entry is kept per node.
 *
 * Why: every node a BatchGet brought was kept as a view of its answer, under a latin1 string, in
 * a Map, for as long as its generation lived (tens of seconds under load): three heap objects a
 * node, each outliving two scavenges, so each was copied twice by scavenges, promoted, and then
 * traced and swept again by mark-compacts (a client's largest cost was garbage collection).
 *
 * Two generations, as before: the owner turns them (`turn`: the newer becomes the older, the
 * oldest is dropped) when the newer holds what it wants; an entry found in the older is copied
 * into the newer. A lookup hands
 * out a view of the slab (a short-lived object: it dies young); a slab is never written again
 * where an entry was written, nor reused once its generation is dropped (views still held keep
 * it alive, with the bytes they were handed), so a view's bytes never change.
 */
import type { Keccak } from '@monsoon/keccak';

/** Bytes of an entry's header: its 32-byte hash, then its length (u32, little-endian). */
const HEADER = 36;
/** Bytes of a slab; an entry larger than this (a contract's code) gets a slab of its own. */
const SLAB_BYTES = 1 << 20;
/** A location: slab number × SLAB_SPAN + offset (an offset stays below it: SLAB_BYTES). */
const SLAB_SPAN = SLAB_BYTES;

/** Four bytes of a hash (a 32-char latin1 string) from `at`, big-endian, as an int32. */
const word = (hash: string, at: number): number =>
  (hash.charCodeAt(at) << 24) |
  (hash.charCodeAt(at + 1) << 16) |
  (hash.charCodeAt(at + 2) << 8) |
  hash.charCodeAt(at + 3);

/** Four bytes of `b` from `at`, big-endian, as an int32. */
const wordAt = (b: Uint8Array, at: number): number =>
  (b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!;

/** One generation: its slabs, and the index (location + 1, 0: empty, -1: deleted; the hash's first four bytes). */
class Generation {
  readonly slabs: Uint8Array[] = [];
  /** Where the next entry goes in the last slab. */
  private pos = SLAB_BYTES;
  count = 0;
  /** Slots used, deleted ones included (what the load factor counts). */
  private used = 0;
  /** Bytes of the entries' encodings. */
  bytes = 0;
  /** Where the entry `find` found (or `insert` wrote) starts in its slab. */
  foundAt = 0;

  constructor(
    private readonly locs: Int32Array,
    private readonly tags: Int32Array,
  ) {}

  get mask(): number {
    return this.locs.length - 1;
  }

  /** Whether one more entry keeps the index at most half full. */
  get hasRoom(): boolean {
    return (this.used + 1) * 2 <= this.locs.length;
  }

  /** The index slot of `hash` (32 chars, latin1), or -1; a hit sets foundAt. */
  find(hash: string): number {
    const tag = word(hash, 0);
    const m = this.mask;
    let i = word(hash, 4) & m;
    for (;;) {
      const l = this.locs[i]!;
      if (l === 0) return -1;
      if (l > 0 && this.tags[i] === tag) {
        const loc = l - 1;
        const s = this.slabs[(loc / SLAB_SPAN) | 0]!;
        const off = loc % SLAB_SPAN;
        let k = 4;
        while (k < 32 && s[off + k] === hash.charCodeAt(k)) k++;
        if (k === 32) {
          this.foundAt = off;
          return i;
        }
      }
      i = (i + 1) & m;
    }
  }

  /** The index slot of the 32-byte hash at `at` in `h`, or -1; a hit sets foundAt. */
  findBytes(h: Uint8Array, at: number): number {
    const tag = wordAt(h, at);
    const m = this.mask;
    let i = wordAt(h, at + 4) & m;
    for (;;) {
      const l = this.locs[i]!;
      if (l === 0) return -1;
      if (l > 0 && this.tags[i] === tag) {
        const loc = l - 1;
        const s = this.slabs[(loc / SLAB_SPAN) | 0]!;
        const off = loc % SLAB_SPAN;
        let k = 4;
        while (k < 32 && s[off + k] === h[at + k]) k++;
        if (k === 32) {
          this.foundAt = off;
          return i;
        }
      }
      i = (i + 1) & m;
    }
  }

  /** The slab of index slot `i`'s entry (its header at foundAt, as find set it). */
  slabOf(i: number): Uint8Array {
    return this.slabs[((this.locs[i]! - 1) / SLAB_SPAN) | 0]!;
  }

  /** A view of the encoding of the entry at `off` of `s`. */
  static view(s: Uint8Array, off: number): Uint8Array {
    const len = s[off + 32]! | (s[off + 33]! << 8) | (s[off + 34]! << 16) | (s[off + 35]! * 0x1000000);
    return s.subarray(off + HEADER, off + HEADER + len);
  }

  /**
   * Writes an entry: the 32-byte hash at `hAt` of `h`, and `len` bytes of `src` from `srcAt`;
   * the caller has checked it is not held and that there is room. Returns the entry's slab.
   */
  insert(h: Uint8Array, hAt: number, src: Uint8Array, srcAt: number, len: number): Uint8Array {
    const size = HEADER + len;
    let s = this.slabs[this.slabs.length - 1];
    if (s === undefined || this.pos + size > s.length) {
      s = new Uint8Array(Math.max(SLAB_BYTES, size));
      this.slabs.push(s);
      this.pos = 0;
    }
    const off = this.pos;
    this.pos += size;
    s.set(h.subarray(hAt, hAt + 32), off);
    s[off + 32] = len & 0xff;
    s[off + 33] = (len >>> 8) & 0xff;
    s[off + 34] = (len >>> 16) & 0xff;
    s[off + 35] = len >>> 24;
    s.set(srcAt === 0 && len === src.length ? src : src.subarray(srcAt, srcAt + len), off + HEADER);
    const loc = (this.slabs.length - 1) * SLAB_SPAN + off + 1;
    const m = this.mask;
    let i = wordAt(h, hAt + 4) & m;
    while (this.locs[i] !== 0) i = (i + 1) & m;
    this.locs[i] = loc;
    this.tags[i] = wordAt(h, hAt);
    this.count++;
    this.used++;
    this.bytes += len;
    this.foundAt = off;
    return s;
  }

  /** Marks index slot `i` deleted (its bytes stay in the slab, unreachable). */
  remove(i: number): void {
    const s = this.slabOf(i);
    const off = (this.locs[i]! - 1) % SLAB_SPAN;
    this.bytes -= Generation.view(s, off).length;
    this.locs[i] = -1;
    this.count--;
  }

  /** The index arrays, emptied, for the next generation (no view of them is ever handed out). */
  release(): [Int32Array, Int32Array] {
    this.locs.fill(0);
    return [this.locs, this.tags];
  }
}

export class VerifiedNodes {
  private newer: Generation;
  private older: Generation | undefined;
  /** The index size of a generation: a power of two at least twice `capacity`. */
  private readonly slots: number;

  /**
   * `capacity`: the entries a generation is meant to hold before `turn` (its index has room for
   * twice as many at half load; past that a generation turns by itself).
   */
  constructor(
    readonly capacity: number,
    private readonly keccak: Keccak,
  ) {
    let n = 1024;
    while (n < capacity * 4 + 2) n *= 2;
    this.slots = n;
    this.newer = new Generation(new Int32Array(n), new Int32Array(n));
  }

  /** Entries held, both generations. */
  get size(): number {
    return this.newer.count + (this.older?.count ?? 0);
  }

  /** Entries the newer generation holds. */
  get newerSize(): number {
    return this.newer.count;
  }

  /** Bytes of the encodings held, both generations. */
  get byteSize(): number {
    return this.newer.bytes + (this.older?.bytes ?? 0);
  }

  /** The encoding with hash `hash` (32 chars, latin1): a view of the arena, moved to the newer generation if it was in the older. */
  get(hash: string): Uint8Array | undefined {
    const g = this.newer;
    const i = g.find(hash);
    if (i >= 0) return Generation.view(g.slabOf(i), g.foundAt);
    const o = this.older;
    if (o === undefined) return undefined;
    const j = o.find(hash);
    if (j < 0) return undefined;
    const s = o.slabOf(j);
    const off = o.foundAt;
    const v = Generation.view(s, off);
    this.room();
    const n = this.newer;
    return Generation.view(n.insert(s, off, v, 0, v.length), n.foundAt);
  }

  /** Whether an encoding with this hash is held (neither generation changed). */
  has(hash: string): boolean {
    return this.newer.find(hash) >= 0 || (this.older !== undefined && this.older.find(hash) >= 0);
  }

  /**
   * Adds encodings, hashing them in one batch: each is held under the hash computed here.
   * Returns the hashes, nodes[i]'s at [32i, 32i + 32) (what deleteHashes takes).
   */
  addNodes(nodes: readonly Uint8Array[]): Uint8Array {
    if (nodes.length === 0) return new Uint8Array(0);
    const digests = this.keccak.keccak256Batch(nodes);
    this.addVerified(nodes, digests);
    return digests;
  }

  /**
   * Adds encodings whose hashes the caller computed and checked already: nodes[i]'s keccak-256
   * at [32i, 32i + 32) of `hashes` (a one-sided walk's nodes). A wrong hash here breaks the
   * cache's promise, so nothing else may call this.
   */
  addVerified(nodes: readonly Uint8Array[], hashes: Uint8Array): void {
    for (let i = 0; i < nodes.length; i++) {
      if (this.newer.findBytes(hashes, 32 * i) >= 0) continue;
      this.room();
      const n = nodes[i]!;
      this.newer.insert(hashes, 32 * i, n, 0, n.length);
    }
  }

  /** Adds one encoding (a code blob), hashing it. */
  add(bytes: Uint8Array): void {
    this.addVerified([bytes], this.keccak.keccak256(bytes));
  }

  /** Removes what the newer generation holds under the hashes of `hashes` (32 bytes each). */
  deleteHashes(hashes: Uint8Array): void {
    for (let at = 0; at + 32 <= hashes.length; at += 32) {
      const i = this.newer.findBytes(hashes, at);
      if (i >= 0) this.newer.remove(i);
    }
  }

  /** The newer generation becomes the older one, and the older one is dropped. */
  turn(): void {
    const [locs, tags] = this.older?.release() ?? [new Int32Array(this.slots), new Int32Array(this.slots)];
    this.older = this.newer;
    this.newer = new Generation(locs, tags);
  }

  /** Turns the generations when the newer one's index is full (the owner turns them before that). */
  private room(): void {
    if (!this.newer.hasRoom) this.turn();
  }
}
