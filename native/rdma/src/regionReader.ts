/**
 * Reads nodes out of an exported region by hash and trusts none of them: each is copied out of
 * the region and kept only if its keccak256 is the hash asked for. A mismatch (the writer was
 * reusing the slot, a torn entry, a forged byte) is looked up again a few times and then
 * reported as a miss, which a caller answers some other way (gRPC). Never a wrong node.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { RdmaError, RdmaErrorCode } from './rdmaError.js';
import {
  ARENA_UNIT,
  BUCKET_SLOTS,
  bucketsOf,
  H,
  type RegionGeometry,
  readHeader,
  tagsOf,
  view,
} from './regionLayout.js';

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
   * One lookup: the verified node, undefined when no entry carries the hash's tag, false when
   * some did but none held bytes with that hash (look again).
   */
  private tryOnce(hash: Uint8Array): Uint8Array | undefined | false {
    const [b1, b2] = bucketsOf(hash, this.mask + 1);
    const [t0, t1] = tagsOf(hash);
    let rejected = false;
    for (let k = 0; k < 2; k++) {
      const b = k === 0 ? b1 : b2;
      if (k === 1 && b2 === b1) break;
      let w = this.indexWord + b * BUCKET_SLOTS * 4;
      for (let s = 0; s < BUCKET_SLOTS; s++, w += 4) {
        const words = this.words;
        if (words[w] !== t0 || words[w + 1] !== t1) continue;
        const len = words[w + 3]!;
        if (len === 0) continue;
        const off = this.geometry.arenaOffset + words[w + 2]! * ARENA_UNIT;
        if (off + len > this.geometry.totalBytes) {
          rejected = true;
          continue;
        }
        // Copy first, then check the copy: the region may change under us, the copy can't.
        const copy = this.bytes.slice(off, off + len);
        if (sameHash(this.keccak.keccak256(copy), hash)) return copy;
        this.counters.rejected++;
        rejected = true;
      }
    }
    return rejected ? false : undefined;
  }
}

function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < 32; i++) if (a[i] !== b[i]) return false;
  return a.length === 32 && b.length === 32;
}
