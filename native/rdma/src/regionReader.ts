/**
 * Reads nodes out of an exported region by hash and trusts none of them: each is copied out of
 * the region and kept only if its keccak256 is the hash asked for. A mismatch (the writer was
 * reusing the slot, a torn entry, a forged byte) is looked up again a few times and then
 * reported as a miss, which a caller answers some other way (gRPC). Never a wrong node.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { RdmaError, RdmaErrorCode } from './rdmaError.js';
import { ARENA_UNIT, BUCKET_SLOTS, H, type RegionGeometry, readHeader, view } from './regionLayout.js';

/** What a reader has seen, for tests, metrics and benchmarks. */
export interface ReadCounters {
  /** Nodes returned (each verified). */
  nodes: number;
  /** Lookups that found an entry whose bytes failed the hash check, and looked again. */
  retries: number;
  /** Lookups that gave up: no entry, or every try failed the check. */
  misses: number;
  /** Entries whose bytes failed the hash check (torn, reused or forged). */
  rejected: number;
}

export interface RegionReaderOptions {
  /** Lookups of a node whose bytes fail the check before it is reported missing. */
  maxTries: number;
}

export const defaultRegionReaderOptions: RegionReaderOptions = { maxTries: 3 };

export class RegionReader {
  readonly geometry: RegionGeometry;
  readonly counters: ReadCounters = { nodes: 0, retries: 0, misses: 0, rejected: 0 };
  private readonly words: Uint32Array;
  private readonly indexWord: number;
  private readonly mask: number;
  private readonly opts: RegionReaderOptions;
  private readonly buf: Buffer;
  private readonly offsets = new Uint32Array(2);
  private readonly digest = new Uint8Array(32);
  private readonly cand = new Int32Array(2 * BUCKET_SLOTS);

  /** A reader over `bytes` (a mapped region or a buffer holding one); checks the header. */
  constructor(
    readonly bytes: Uint8Array,
    opts: Partial<RegionReaderOptions> = {},
    private readonly keccak: Keccak = defaultKeccak,
  ) {
    if (bytes.byteOffset % 8 !== 0)
      throw new RdmaError(
        RdmaErrorCode.BadArgument,
        `a region must start 8-byte aligned, at ${bytes.byteOffset}`,
      );
    this.geometry = readHeader(bytes);
    this.words = new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.indexWord = this.geometry.indexOffset / 4;
    this.mask = this.geometry.bucketCount - 1;
    this.opts = { ...defaultRegionReaderOptions, ...opts };
  }

  /** Blocks the writer has placed so far (read fresh from the header). */
  get epoch(): bigint {
    return view(this.bytes).getBigUint64(H.epoch, true);
  }

  /** The generation in the header now (a writer that re-created the region changes it). */
  get generation(): bigint {
    return view(this.bytes).getBigUint64(H.generation, true);
  }

  /** The node whose keccak256 is `hash` (32 bytes), copied out and verified; undefined if not there. */
  node(hash: Uint8Array): Uint8Array | undefined {
    for (let attempt = 0; attempt < this.opts.maxTries; attempt++) {
      const r = this.tryOnce(hash);
      if (r !== false) {
        if (r === undefined) this.counters.misses++;
        else this.counters.nodes++;
        return r;
      }
      this.counters.retries++;
    }
    this.counters.misses++;
    return undefined;
  }

  /**
   * Many nodes at once, in order: one copy into one buffer and one keccak call for all of them
   * (what a level of a batched walk reads; over RDMA, one doorbell). A node whose bytes fail the
   * check is looked up again on its own (node()); undefined where it can't be had.
   */
  nodes(hashes: readonly Uint8Array[]): (Uint8Array | undefined)[] {
    const n = hashes.length;
    const out: (Uint8Array | undefined)[] = new Array(n);
    const offs = new Uint32Array(n);
    const lens = new Uint32Array(n);
    let total = 0;
    for (let i = 0; i < n; i++) {
      if (this.candidates(hashes[i]!, true) === 0) continue;
      const e = this.cand[0]!;
      const len = this.words[e + 3]!;
      const off = this.geometry.arenaOffset + this.words[e + 2]! * ARENA_UNIT;
      if (len === 0 || off + len > this.geometry.totalBytes) continue;
      offs[i] = off;
      lens[i] = len;
      total += len;
    }
    const data = Buffer.allocUnsafe(total);
    const bounds = new Uint32Array(n + 1);
    let at = 0;
    for (let i = 0; i < n; i++) {
      bounds[i] = at;
      if (lens[i]! > 0) at += this.buf.copy(data, at, offs[i]!, offs[i]! + lens[i]!);
    }
    bounds[n] = at;
    const digests = this.keccak.keccak256Packed(data, bounds, n);
    for (let i = 0; i < n; i++) {
      const h = hashes[i]!;
      let ok = lens[i]! > 0;
      for (let j = 0; ok && j < 32; j++) if (digests[i * 32 + j] !== h[j]) ok = false;
      if (ok) {
        this.counters.nodes++;
        out[i] = new Uint8Array(data.buffer, data.byteOffset + bounds[i]!, lens[i]!);
      } else {
        if (lens[i]! > 0) this.counters.rejected++;
        out[i] = this.node(h); // counts its own retries and misses
      }
    }
    return out;
  }

  /**
   * Fills `this.cand` with the word indexes of the index entries carrying `hash`'s tags (a
   * non-zero length), first bucket first; returns how many (at most one with `firstOnly`).
   */
  private candidates(hash: Uint8Array, firstOnly = false): number {
    const mask = this.mask;
    const b1 = (hash[0]! | (hash[1]! << 8) | (hash[2]! << 16) | (hash[3]! << 24)) & mask;
    const b2 = (hash[12]! | (hash[13]! << 8) | (hash[14]! << 16) | (hash[15]! << 24)) & mask;
    const t0 = (hash[4]! | (hash[5]! << 8) | (hash[6]! << 16) | (hash[7]! << 24)) >>> 0;
    const t1 = (hash[8]! | (hash[9]! << 8) | (hash[10]! << 16) | (hash[11]! << 24)) >>> 0;
    const words = this.words;
    let n = 0;
    for (let k = 0; k < 2; k++) {
      if (k === 1 && b2 === b1) break;
      let w = this.indexWord + (k === 0 ? b1 : b2) * BUCKET_SLOTS * 4;
      for (let s = 0; s < BUCKET_SLOTS; s++, w += 4)
        if (words[w] === t0 && words[w + 1] === t1 && words[w + 3] !== 0) {
          this.cand[n++] = w;
          if (firstOnly) return n;
        }
    }
    return n;
  }

  /**
   * One lookup: the verified node, undefined when no entry carries the hash's tag, false when
   * some did but none held bytes with that hash (look again).
   */
  private tryOnce(hash: Uint8Array): Uint8Array | undefined | false {
    const n = this.candidates(hash);
    for (let c = 0; c < n; c++) {
      const w = this.cand[c]!;
      const len = this.words[w + 3]!;
      const off = this.geometry.arenaOffset + this.words[w + 2]! * ARENA_UNIT;
      if (len === 0 || off + len > this.geometry.totalBytes) continue;
      // Copy first, then check the copy: the region may change under us, the copy can't.
      const copy = Buffer.allocUnsafe(len);
      this.buf.copy(copy, 0, off, off + len);
      this.offsets[1] = len;
      this.keccak.keccak256Packed(copy, this.offsets, 1, this.digest);
      if (sameHash(this.digest, hash)) return new Uint8Array(copy.buffer, copy.byteOffset, len);
      this.counters.rejected++;
    }
    return n > 0 ? false : undefined;
  }
}

function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < 32; i++) if (a[i] !== b[i]) return false;
  return a.length === 32 && b.length === 32;
}
