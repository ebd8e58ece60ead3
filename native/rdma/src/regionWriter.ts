/**
 * The writing half of the region layout: places nodes (and code blobs) by hash in the index and
 * arena, removes them, and gives freed arena space back for reuse only after a grace period.
 * Single writer, no locks: a reader racing it may see a torn entry or a reused slot, and its
 * hash check refuses those (see RegionReader). What to place and when to remove is the storage
 * node's (regionExport.ts): this only keeps the bytes in the documented layout.
 */
import { RdmaError, RdmaErrorCode } from './rdmaError.js';
import {
  ARENA_UNIT,
  BUCKET_SLOTS,
  bucketsOf,
  H,
  planRegion,
  type RegionGeometry,
  tagsOf,
  view,
  writeHeader,
} from './regionLayout.js';

export interface RegionWriterOptions {
  /** Blocks (epochs) freed space waits before it is reused. */
  graceEpochs: number;
  /** And at least this long, ms (a reader between its index read and its node read). */
  graceMs: number;
}

export const defaultRegionWriterOptions: RegionWriterOptions = { graceEpochs: 2, graceMs: 1000 };

export interface WriterCounters {
  /** Nodes in the index now. */
  live: number;
  /** Nodes placed so far. */
  placed: number;
  /** Nodes removed so far. */
  removed: number;
  /** Nodes that found no room (arena full or both buckets full): readers miss them. */
  unplaced: number;
  /** Arena bytes handed out again after their grace period. */
  reusedBytes: number;
  /** Arena bytes waiting out their grace period. */
  limboBytes: number;
}

interface Placed {
  /** Word index (in the region's Uint32Array) of its index entry. */
  entry: number;
  /** Arena offset in ARENA_UNITs, and size class in units. */
  unit: number;
  units: number;
}

interface Freed {
  readonly unit: number;
  readonly units: number;
  readonly epoch: bigint;
  readonly at: number;
}

export class RegionWriter {
  readonly counters: WriterCounters = {
    live: 0,
    placed: 0,
    removed: 0,
    unplaced: 0,
    reusedBytes: 0,
    limboBytes: 0,
  };
  private readonly words: Uint32Array;
  private readonly buf: Buffer;
  private readonly placed = new Map<string, Placed>();
  /** The hash held by each index entry (by entry number), for moving entries between buckets. */
  private readonly holder: (string | undefined)[];
  private readonly bucketFill: Uint8Array;
  private readonly free = new Map<number, number[]>();
  private readonly limbo: Freed[] = [];
  private bump = 0;
  private epoch = 0n;
  private readonly arenaUnits: number;
  private readonly opts: RegionWriterOptions;

  private constructor(
    readonly bytes: Uint8Array,
    readonly geometry: RegionGeometry,
    opts: Partial<RegionWriterOptions>,
  ) {
    this.opts = { ...defaultRegionWriterOptions, ...opts };
    this.words = new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.holder = new Array(geometry.bucketCount * BUCKET_SLOTS);
    this.bucketFill = new Uint8Array(geometry.bucketCount);
    this.arenaUnits = geometry.arenaBytes / ARENA_UNIT;
  }

  /**
   * A writer of a new region in `bytes` (zeroed: a new file or buffer), sized for about `nodes`
   * nodes in `arenaBytes` of encodings. `bytes` must span `planRegion(...).totalBytes`.
   */
  static create(
    bytes: Uint8Array,
    geometry: RegionGeometry,
    opts: Partial<RegionWriterOptions> = {},
  ): RegionWriter {
    if (bytes.byteOffset % 8 !== 0)
      throw new RdmaError(
        RdmaErrorCode.BadArgument,
        `a region must start 8-byte aligned, at ${bytes.byteOffset}`,
      );
    writeHeader(bytes, geometry);
    return new RegionWriter(bytes, geometry, opts);
  }

  /** A region in a new in-process buffer (tests, and an export nobody maps). */
  static inMemory(nodes: number, arenaBytes: number, opts: Partial<RegionWriterOptions> = {}): RegionWriter {
    const g = planRegion(nodes, arenaBytes, 1n);
    return RegionWriter.create(new Uint8Array(g.totalBytes), g, opts);
  }

  /** Whether a node with this hash (binary string) is placed. */
  has(hash: string): boolean {
    return this.placed.has(hash);
  }

  /** Where a placed node's bytes are in the region (byte offset and length), if placed. */
  locate(hash: string): { offset: number; length: number } | undefined {
    const p = this.placed.get(hash);
    if (p === undefined) return undefined;
    return { offset: this.geometry.arenaOffset + p.unit * ARENA_UNIT, length: this.words[p.entry + 3]! };
  }

  /** Hashes placed (binary strings). */
  hashes(): IterableIterator<string> {
    return this.placed.keys();
  }

  /**
   * Places a node (or code blob) under its keccak256 `hash` (binary string, 32 chars); `enc` as
   * a binary string or bytes. Idempotent. False when there is no room (counted in `unplaced`).
   */
  put(hash: string, enc: string | Uint8Array): boolean {
    if (this.placed.has(hash)) return true;
    const len = enc.length;
    if (len === 0) return true;
    const units = Math.ceil(len / ARENA_UNIT);
    const unit = this.alloc(units);
    if (unit === undefined) {
      this.counters.unplaced++;
      return false;
    }
    const off = this.geometry.arenaOffset + unit * ARENA_UNIT;
    if (typeof enc === 'string') this.buf.write(enc, off, len, 'latin1');
    else this.bytes.set(enc, off);
    const h = Buffer.from(hash, 'latin1');
    const slot = this.freeSlot(h);
    if (slot === undefined) {
      this.release(unit, units);
      this.counters.unplaced++;
      return false;
    }
    this.fillEntry(slot, h, unit, len);
    this.holder[slot] = hash;
    this.placed.set(hash, { entry: this.indexWord(slot), unit, units });
    this.counters.placed++;
    this.counters.live++;
    return true;
  }

  /** Takes a node out of the index; its bytes stay readable until the grace period has passed. */
  remove(hash: string): void {
    const p = this.placed.get(hash);
    if (p === undefined) return;
    this.placed.delete(hash);
    const slot = this.slotOfWord(p.entry);
    this.clearEntry(slot);
    this.limbo.push({ unit: p.unit, units: p.units, epoch: this.epoch, at: performance.now() });
    this.counters.limboBytes += p.units * ARENA_UNIT;
    this.counters.removed++;
    this.counters.live--;
  }

  /**
   * One block's nodes are in: the epoch advances (readers see it in the header), and space
   * freed at least `graceEpochs` epochs and `graceMs` ago is given back for reuse.
   */
  advance(): void {
    this.epoch++;
    const v = view(this.bytes);
    const now = performance.now();
    let kept = 0;
    for (const f of this.limbo) {
      if (f.epoch + BigInt(this.opts.graceEpochs) <= this.epoch && now - f.at >= this.opts.graceMs) {
        this.release(f.unit, f.units);
        this.counters.reusedBytes += f.units * ARENA_UNIT;
        this.counters.limboBytes -= f.units * ARENA_UNIT;
        v.setBigUint64(H.reclaimedBytes, BigInt(this.counters.reusedBytes), true);
      } else this.limbo[kept++] = f;
    }
    this.limbo.length = kept;
    v.setBigUint64(H.arenaUsed, BigInt(this.bump * ARENA_UNIT), true);
    v.setBigUint64(H.liveNodes, BigInt(this.counters.live), true);
    v.setBigUint64(H.epoch, this.epoch, true);
  }

  get currentEpoch(): bigint {
    return this.epoch;
  }

  /** Arena bytes ever handed out by the bump pointer (the high-water mark). */
  get arenaUsed(): number {
    return this.bump * ARENA_UNIT;
  }

  private alloc(units: number): number | undefined {
    const list = this.free.get(units);
    if (list !== undefined && list.length > 0) return list.pop()!;
    if (this.bump + units > this.arenaUnits) return undefined;
    const u = this.bump;
    this.bump += units;
    return u;
  }

  private release(unit: number, units: number): void {
    let list = this.free.get(units);
    if (list === undefined) {
      list = [];
      this.free.set(units, list);
    }
    list.push(unit);
  }

  private indexWord(slot: number): number {
    return this.geometry.indexOffset / 4 + slot * 4;
  }

  private slotOfWord(word: number): number {
    return (word - this.geometry.indexOffset / 4) / 4;
  }

  /** A free entry in one of the hash's two buckets, moving one resident to its other bucket if both are full. */
  private freeSlot(h: Uint8Array): number | undefined {
    const [b1, b2] = bucketsOf(h, this.geometry.bucketCount);
    const first = this.bucketFill[b1]! <= this.bucketFill[b2]! ? b1 : b2;
    const second = first === b1 ? b2 : b1;
    for (const b of [first, second]) {
      if (this.bucketFill[b]! < BUCKET_SLOTS) return this.takeSlot(b);
    }
    // Both full: move a resident of either bucket whose other bucket has room.
    for (const b of [b1, b2]) {
      for (let s = 0; s < BUCKET_SLOTS; s++) {
        const slot = b * BUCKET_SLOTS + s;
        const hash = this.holder[slot]!;
        const hb = Buffer.from(hash, 'latin1');
        const [c1, c2] = bucketsOf(hb, this.geometry.bucketCount);
        const alt = c1 === b ? c2 : c1;
        if (alt === b || this.bucketFill[alt]! >= BUCKET_SLOTS) continue;
        const p = this.placed.get(hash)!;
        const to = this.takeSlot(alt);
        // The new entry is complete before the old one goes: a reader finds it in one or both.
        const w = p.entry;
        this.fillEntry(to, hb, this.words[w + 2]!, this.words[w + 3]!);
        this.holder[to] = hash;
        p.entry = this.indexWord(to);
        this.clearEntry(slot);
        return this.takeSlot(b);
      }
    }
    return undefined;
  }

  private takeSlot(b: number): number {
    const w0 = this.indexWord(b * BUCKET_SLOTS);
    for (let s = 0; s < BUCKET_SLOTS; s++) {
      if (this.words[w0 + s * 4 + 3] === 0 && this.holder[b * BUCKET_SLOTS + s] === undefined) {
        this.bucketFill[b]!++;
        this.holder[b * BUCKET_SLOTS + s] = '';
        return b * BUCKET_SLOTS + s;
      }
    }
    throw new RdmaError(RdmaErrorCode.RegionFull, `bucket ${b} counted free space it does not have`);
  }

  /** Tags and offset first, length last: a reader never takes a half-written entry as whole. */
  private fillEntry(slot: number, h: Uint8Array, unit: number, len: number): void {
    const w = this.indexWord(slot);
    const [t0, t1] = tagsOf(h);
    this.words[w + 3] = 0;
    this.words[w] = t0;
    this.words[w + 1] = t1;
    this.words[w + 2] = unit;
    this.words[w + 3] = len;
  }

  private clearEntry(slot: number): void {
    const w = this.indexWord(slot);
    this.words[w + 3] = 0;
    this.words[w] = 0;
    this.words[w + 1] = 0;
    this.words[w + 2] = 0;
    this.holder[slot] = undefined;
    this.bucketFill[Math.floor(slot / BUCKET_SLOTS)]!--;
  }
}
