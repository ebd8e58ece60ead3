/**
 * The resident node cache of a tiered node: verified node encodings by hash, packed in an arena
 * (a log of slabs outside the V8 heap, lent by a SlabPool of 33 MiB chunks so that malloc's
 * heap never holds them, each entry its hash, length, CLOCK bits and encoding) found through an
 * open-addressing index of typed arrays: no JS object, string or Map entry per node. An entry
 * costs its encoding + ENTRY_HEADER + about 16-32 bytes of index, where a Map of latin1 strings
 * cost its encoding + ~160 (so a budget caches ~1.6x the nodes of the hot set's mix) and every
 * node was one more object for the garbage collector to trace.
 *
 * Eviction goes over the log from its oldest end: an entry that stays is copied to the newest
 * end, the others are dropped, and a slab whose every entry was dropped or moved goes back to
 * the pool. What stays: with a frequency estimate (evictTo's `wants`: TieredStore's sketch), the
 * entries wanted at least `keepWants` times lately, the bar rising when a trim has to (it went
 * over every entry without freeing enough) and falling by one after each trim that did not;
 * without one, CLOCK: those used since the last visit (their bit set by a hit; it is cleared as
 * they move). Why frequency: at a budget below the hot set CLOCK keeps whatever came last, the
 * one-off reads of cold accounts as long as the hot nodes (measured: as many nodes fetched a
 * batch with 2.4x the cache). Pinned entries (a request in progress fetched them and has not
 * re-run yet) always stay, so a request always makes progress however small the budget.
 */
import { StorageError, StorageErrorCode } from '../storageError.js';
import { SLAB_BYTES, SlabPool } from './slabPool.js';

/** Bytes of an entry's header in the arena: its 32-byte hash, its length (u32) and its bits. */
export const ENTRY_HEADER = 37;

/**
 * Bytes an entry costs besides its encoding at the index's fullest (3/4): the header and two
 * index slots of 12 bytes. `bytes` counts the index as allocated, so it is at most this.
 */
export const CACHE_ENTRY_OVERHEAD = ENTRY_HEADER + 16;

/** A location in the arena: slab id × SLAB_SPAN + offset (an entry's offset stays below it). */
const SLAB_SPAN = 2 ** 24;
const MIN_INDEX = 1024;
/** The fewest entries a trim by frequency moves before it raises its bar (see evictTo). */
const MOVE_LIMIT_MIN = 64;
/** Entries a trim by frequency moves, for each it has to drop, before it raises its bar (see evictTo). */
const MOVES_PER_DROP = 4;

/** A string hash's bytes, for find. */
const HASH_SCRATCH = Buffer.allocUnsafe(32);

const REF = 1;
const USED = 2;

/** Four bytes of a hash (32 chars, latin1) from `at`, big-endian, as an int32 (readInt32BE's). */
const word = (hash: string, at: number): number =>
  (hash.charCodeAt(at) << 24) |
  (hash.charCodeAt(at + 1) << 16) |
  (hash.charCodeAt(at + 2) << 8) |
  hash.charCodeAt(at + 3);

export class NodeCache {
  /** Slabs by id (ids reused once a slab is freed), and the ids in log order, oldest first. */
  private readonly slabs: (Buffer | undefined)[] = [];
  private readonly freeIds: number[] = [];
  /** Where slabs come from (an entry larger than a slab gets a Buffer of its own), and each id's number there (-1: its own). */
  private readonly pool = new SlabPool();
  private readonly poolSlabs: number[] = [];
  private order: number[] = [];
  /** Where the next entry goes in the newest slab, where the oldest live part starts in the oldest. */
  private headPos = 0;
  private tailPos = 0;
  /** The end of the entries written in each slab (by id). */
  private readonly ends: number[] = [];
  /** Index: location + 1 (0: empty) and the hash's first four bytes, by slot (linear probing). */
  private locs = new Float64Array(MIN_INDEX);
  private tags = new Int32Array(MIN_INDEX);
  private mask = MIN_INDEX - 1;
  private count = 0;
  /** Header + encoding bytes of the live entries. */
  private payload = 0;
  private readonly pins = new Map<string, number>();
  /** Wants an entry needs to stay (evictTo with `wants`). */
  keepWants = 2;
  hits = 0;
  evicted = 0;
  /** Entries trims copied to the newest end (kept): the trims' work besides what they drop. */
  moved = 0;

  get size(): number {
    return this.count;
  }

  /** Accounted bytes: the live entries (header + encoding) and the index as allocated. */
  get bytes(): number {
    return this.payload + this.locs.length * 12;
  }

  /** Chunks of slabs mapped (see SlabPool). */
  get poolChunks(): number {
    return this.pool.chunkCount;
  }

  /** Bytes of slabs held (the live entries, and what the log's two ends have not filled or freed yet). */
  get slabBytes(): number {
    let s = 0;
    for (const id of this.order) s += this.slabs[id]!.length;
    return s;
  }

  has(hash: string): boolean {
    return this.find(hash) >= 0;
  }

  /**
   * The encoding, from its second use on marking it recently used. The first use of a fetched
   * node is the read that fetched it faulting it into a tree, which holds it from then on: were
   * that a use, every entry would have its bit set and each eviction would walk (and move to the
   * back) the whole cache before dropping anything. A node faulted in again after a tree evicted
   * it is a use. A view of the arena, not a copy (a tree decodes it into strings at once): an
   * entry's bytes never change where they were written (the log only appends, a moved entry is
   * a copy), but a freed slab is written again by a later set (see freeSlab), so a
   * caller must not keep it.
   */
  get(hash: string): Uint8Array | undefined {
    const buf = this.use(this.find(hash));
    if (buf === undefined) return undefined;
    return buf.subarray(this.foundAt, this.foundAt + buf.readUInt32LE(this.foundAt - ENTRY_HEADER + 32));
  }

  /** Where the encoding getAt found starts in the array it returned. */
  foundAt = 0;

  /**
   * get for the 32-byte hash at `at` in `bytes`, without a string or a view: the arena's slab
   * that holds the encoding, which starts at `foundAt` (an RLP list: its header says where it
   * ends). For reads that walk encodings in place (a batch looks up thousands); the same rules
   * as get's view: use it at once, keep nothing.
   */
  getAt(bytes: Uint8Array, at: number): Buffer | undefined {
    return this.use(this.findAt(bytes, at));
  }

  /** A hit on index slot `i` (-1: none): marks it used, sets foundAt, returns its slab. */
  private use(i: number): Buffer | undefined {
    if (i < 0) return undefined;
    const loc = this.locs[i]! - 1;
    const buf = this.slabs[Math.floor(loc / SLAB_SPAN)]!;
    const off = loc % SLAB_SPAN;
    const f = buf[off + 36]!;
    buf[off + 36] = f & USED ? f | REF : f | USED;
    this.hits++;
    this.foundAt = off + ENTRY_HEADER;
    return buf;
  }

  /** The encoding, leaving its CLOCK bits alone (a sweep's look is not a use). */
  peek(hash: string): Uint8Array | undefined {
    const i = this.find(hash);
    if (i < 0) return undefined;
    const loc = this.locs[i]! - 1;
    return this.copyOut(this.slabs[Math.floor(loc / SLAB_SPAN)]!, loc % SLAB_SPAN);
  }

  /** Marks `hash` recently used if it is held (a tree still uses the node: see TieredStore's rule). */
  touch(hash: string): void {
    const i = this.find(hash);
    if (i < 0) return;
    const loc = this.locs[i]! - 1;
    const buf = this.slabs[Math.floor(loc / SLAB_SPAN)]!;
    buf[(loc % SLAB_SPAN) + 36]! |= REF | USED;
  }

  /** Holds `enc` (already checked to hash to `hash`: 32 chars, latin1); `hot`: as if just used. */
  set(hash: string, enc: string | Uint8Array, hot: boolean): void {
    if (this.find(hash) >= 0) return;
    const len = enc.length;
    const { buf, off, loc } = this.reserve(ENTRY_HEADER + len);
    buf.write(hash, off, 32, 'latin1');
    buf.writeUInt32LE(len, off + 32);
    buf[off + 36] = hot ? REF : 0;
    if (typeof enc === 'string') buf.write(enc, off + ENTRY_HEADER, len, 'latin1');
    else buf.set(enc, off + ENTRY_HEADER);
    this.insert(loc, hash);
    this.payload += ENTRY_HEADER + len;
  }

  pin(hash: string): void {
    this.pins.set(hash, (this.pins.get(hash) ?? 0) + 1);
  }

  /** Whether a request in progress holds `hash` (see pin). */
  isPinned(hash: string): boolean {
    return this.pins.has(hash);
  }

  unpin(hash: string): void {
    const n = this.pins.get(hash) ?? 0;
    if (n <= 1) this.pins.delete(hash);
    else this.pins.set(hash, n - 1);
  }

  /**
   * Drops entries from the log's oldest end until at most `budget` bytes are held: those wanted
   * fewer than `keepWants` times (`wants`; without it, those whose bit is clear), the others
   * moving to the newest end. A trim that went over every entry raises the bar (at last to
   * dropping every entry not pinned). `wants` reads the 32-byte hash at `at` in `bytes` (an
   * entry's place in the arena: no string made for each entry a trim passes).
   */
  evictTo(budget: number, wants?: (bytes: Uint8Array, at: number) => number): void {
    let steps = this.count;
    let bar = this.keepWants;
    // With `wants`, a trim that moved this many entries to the newest end keeps less at once,
    // rather than after going over every entry: its work stays near what it drops (a bar one
    // too low went over, and copied, the whole arena every other trim: 16% of a tiered node's
    // CPU at 1M accounts, 10%). At most an eighth of the entries, and MOVES_PER_DROP for each
    // entry (at their mean size) it has to drop: a single read's trim in a cache of ~90K
    // entries moved up to 11K of them to drop one or two, every other read.
    const over = this.bytes - budget;
    const perDrop = Math.ceil((MOVES_PER_DROP * over * this.count) / Math.max(1, this.payload));
    const moveLimit =
      wants === undefined
        ? Number.POSITIVE_INFINITY
        : Math.max(MOVE_LIMIT_MIN, Math.min(this.count >> 3, perDrop));
    let moved = 0;
    while (this.bytes > budget && this.count > 0) {
      if (steps <= 0 || (moved > moveLimit && bar <= 256)) {
        // Every entry was visited once, or too many stayed: keep less.
        if (bar > 256) break;
        bar = wants === undefined ? 257 : Math.min(bar + Math.max(1, bar >> 2), 257);
        steps = this.count;
        moved = 0;
      }
      const id = this.order[0]!;
      const buf = this.slabs[id]!;
      if (this.tailPos >= this.ends[id]!) {
        if (this.order.length === 1) break; // nothing written past the tail
        this.freeSlab();
        continue;
      }
      const off = this.tailPos;
      const len = buf.readUInt32LE(off + 32);
      const size = ENTRY_HEADER + len;
      this.tailPos += size;
      const i = this.slotOf(id * SLAB_SPAN + off);
      if (i < 0) continue; // a copy moved on, or dropped: dead
      steps--;
      const f = buf[off + 36]!;
      const stays =
        (bar <= 256 && (wants === undefined ? (f & REF) !== 0 : wants(buf, off) >= bar)) ||
        (this.pins.size > 0 && this.pins.has(buf.toString('latin1', off, off + 32)));
      if (stays) {
        // Its second chance: moved to the newest end (reserve may start a slab; this one stays
        // until the tail has passed it).
        const to = this.reserve(size);
        buf.copy(to.buf, to.off, off, off + size);
        to.buf[to.off + 36] = f & ~REF;
        this.locs[i] = to.loc + 1;
        moved++;
        this.moved++;
      } else {
        this.remove(i);
        this.payload -= size;
        this.evicted++;
      }
    }
    // The bar stays where a trim had to raise it, and is lowered by one after a trim that did not:
    // the lowest bar that fits, found again as the wants change.
    if (wants !== undefined)
      this.keepWants = bar > this.keepWants ? Math.min(bar, 255) : Math.max(1, this.keepWants - 1);
    if (this.count === 0) this.reset();
    else if (this.count * 8 < this.locs.length && this.locs.length > MIN_INDEX)
      this.resize(this.locs.length / 2);
  }

  clear(): void {
    this.reset();
    this.pins.clear();
  }

  // ------------------------------------------------------------ the log

  private reset(): void {
    this.slabs.length = 0;
    // The slabs go back to the pool, which keeps a chunk (an emptied cache fills again).
    for (const id of this.order) if (this.poolSlabs[id]! >= 0) this.pool.give(this.poolSlabs[id]!);
    this.poolSlabs.length = 0;
    this.freeIds.length = 0;
    this.ends.length = 0;
    this.order = [];
    this.headPos = 0;
    this.tailPos = 0;
    this.locs = new Float64Array(MIN_INDEX);
    this.tags = new Int32Array(MIN_INDEX);
    this.mask = MIN_INDEX - 1;
    this.count = 0;
    this.payload = 0;
  }

  /** `size` bytes at the log's newest end (a new slab when the newest is full). */
  private reserve(size: number): { buf: Buffer; off: number; loc: number } {
    if (size >= SLAB_SPAN) {
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `node cache: an entry is at most ${SLAB_SPAN - 1} bytes, found ${size}`,
      );
    }
    let id = this.order.at(-1);
    if (id === undefined || this.headPos + size > this.slabs[id]!.length) {
      id = this.freeIds.pop() ?? this.slabs.length;
      if (size <= SLAB_BYTES) {
        const got = this.pool.take();
        this.slabs[id] = got.buf;
        this.poolSlabs[id] = got.slab;
      } else {
        this.slabs[id] = Buffer.allocUnsafeSlow(size);
        this.poolSlabs[id] = -1;
      }
      this.ends[id] = 0;
      if (this.order.length === 0) this.tailPos = 0;
      this.order.push(id);
      this.headPos = 0;
    }
    const off = this.headPos;
    this.headPos += size;
    this.ends[id] = this.headPos;
    return { buf: this.slabs[id]!, off, loc: id * SLAB_SPAN + off };
  }

  /**
   * The oldest slab goes (every entry in it was dropped or moved on) back to the pool, which
   * lends it again to a later reserve (see SlabPool): a view of it is good until the next trim.
   */
  private freeSlab(): void {
    const id = this.order.shift()!;
    if (this.poolSlabs[id]! >= 0) this.pool.give(this.poolSlabs[id]!);
    this.slabs[id] = undefined;
    this.freeIds.push(id);
    this.tailPos = 0;
  }

  private copyOut(buf: Buffer, off: number): Uint8Array {
    const len = buf.readUInt32LE(off + 32);
    const out = Buffer.allocUnsafe(len); // from Node's pool when small: no ArrayBuffer each
    buf.copy(out, 0, off + ENTRY_HEADER, off + ENTRY_HEADER + len);
    return out;
  }

  // ------------------------------------------------------------ the index

  /** The slot holding `hash` (32 chars, latin1), or -1 (findAt over its bytes). */
  private find(hash: string): number {
    HASH_SCRATCH.write(hash, 0, 32, 'latin1');
    return this.findAt(HASH_SCRATCH, 0);
  }

  /** The slot holding the 32-byte hash at `at` in `bytes`, or -1. Keccak hashes are uniform: bytes 0-3 tag, 4-7 place. */
  private findAt(bytes: Uint8Array, at: number): number {
    const tag = (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!;
    let i =
      ((bytes[at + 4]! << 24) | (bytes[at + 5]! << 16) | (bytes[at + 6]! << 8) | bytes[at + 7]!) & this.mask;
    for (;;) {
      const l = this.locs[i]!;
      if (l === 0) return -1;
      if (this.tags[i] === tag) {
        const loc = l - 1;
        const buf = this.slabs[Math.floor(loc / SLAB_SPAN)]!;
        const off = loc % SLAB_SPAN;
        let k = 4;
        while (k < 32 && buf[off + k] === bytes[at + k]) k++;
        if (k === 32) return i;
      }
      i = (i + 1) & this.mask;
    }
  }

  /**
   * The slot pointing at the entry at `loc`, or -1 (a dead copy): a live entry's slot lies
   * between its home and the next empty slot (linear probing, deletes shift back).
   */
  private slotOf(loc: number): number {
    let i = this.home(loc);
    for (;;) {
      const l = this.locs[i]!;
      if (l === 0) return -1;
      if (l === loc + 1) return i;
      i = (i + 1) & this.mask;
    }
  }

  /** The slot an entry at `loc` starts probing from. */
  private home(loc: number): number {
    return this.slabs[Math.floor(loc / SLAB_SPAN)]!.readInt32BE((loc % SLAB_SPAN) + 4) & this.mask;
  }

  private insert(loc: number, hash: string): void {
    if ((this.count + 1) * 4 > this.locs.length * 3) this.resize(this.locs.length * 2);
    let i = this.home(loc);
    while (this.locs[i] !== 0) i = (i + 1) & this.mask;
    this.locs[i] = loc + 1;
    this.tags[i] = word(hash, 0);
    this.count++;
  }

  /** Empties slot `i`, shifting back the entries after it that probed past it (no tombstones). */
  private remove(i: number): void {
    const m = this.mask;
    let j = i;
    for (;;) {
      j = (j + 1) & m;
      const l = this.locs[j]!;
      if (l === 0) break;
      const k = this.home(l - 1);
      // The entry at j may move to i when its home is not cyclically within (i, j].
      if (i <= j ? k <= i || k > j : k <= i && k > j) {
        this.locs[i] = l;
        this.tags[i] = this.tags[j]!;
        i = j;
      }
    }
    this.locs[i] = 0;
    this.count--;
  }

  private resize(cap: number): void {
    const locs = this.locs;
    const tags = this.tags;
    this.locs = new Float64Array(cap);
    this.tags = new Int32Array(cap);
    this.mask = cap - 1;
    for (let s = 0; s < locs.length; s++) {
      const l = locs[s]!;
      if (l === 0) continue;
      let i = this.home(l - 1);
      while (this.locs[i] !== 0) i = (i + 1) & this.mask;
      this.locs[i] = l;
      this.tags[i] = tags[s]!;
    }
  }
}
