/**
 * WAL segment files: naming, the 16-byte file header, and a validating sequential reader.
 *
 * A segment is `<first seq, 20 decimal digits>.wal`: a header ['MWAL', u32 version, u64 first
 * seq] followed by frames (walFrame.ts) numbered consecutively from the first seq. Segments are
 * created whole (header written to a temp file, fsynced, renamed), so a header is never torn;
 * only frames at the tail of the newest segment can be.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { readExactly } from './fileIo.js';
import { StorageError, StorageErrorCode } from './storageError.js';
import { FRAME_HEADER_BYTES, frameCrc } from './walFrame.js';

const MAGIC = 0x4c41_574d; // 'MWAL' read as a little-endian u32
const VERSION = 1;

/** Bytes of the segment file header. */
export const SEGMENT_HEADER_BYTES = 16;

const NAME = /^(\d{20})\.wal$/;

/** The file name of the segment whose first record is `firstSeq`. */
export function segmentFileName(firstSeq: bigint): string {
  return `${firstSeq.toString().padStart(20, '0')}.wal`;
}

/** The first seq named by a segment file name, or undefined for any other file. */
export function parseSegmentFileName(name: string): bigint | undefined {
  const m = NAME.exec(name);
  return m === null ? undefined : BigInt(m[1]);
}

/** The header of a segment starting at `firstSeq`. */
export function encodeSegmentHeader(firstSeq: bigint): Buffer {
  const h = Buffer.alloc(SEGMENT_HEADER_BYTES);
  h.writeUInt32LE(MAGIC, 0);
  h.writeUInt32LE(VERSION, 4);
  h.writeBigUInt64LE(firstSeq, 8);
  return h;
}

/** A frame as read back. `payload` is a view into the reader's buffer, valid until the next read. */
export interface SegmentFrame {
  seq: bigint;
  payload: Uint8Array;
  /** File offset of the frame's first byte. */
  offset: number;
}

/** Where and why a reader stopped before the end of the file. */
export interface SegmentDefect {
  offset: number;
  /** The frame fails its own checks (short, length past the end, bad CRC), as a torn write would. */
  torn: boolean;
  reason: string;
  meta: Record<string, unknown>;
}

const DEFAULT_CHUNK_BYTES = 1 << 20;

/**
 * Reads a segment's frames in order, checking each one's length, CRC and sequence number.
 * At the first frame that fails, `next()` returns undefined and `defect` says why; `end` is
 * then the offset just past the last good frame (where a torn tail would be cut).
 */
export class SegmentReader {
  readonly path: string;
  private readonly fh: FileHandle;
  /** Bytes of the file this reader will look at. */
  readonly size: number;
  private buf: Buffer;
  /** File offset of buf[0], and how many bytes of buf are valid. */
  private bufPos = 0;
  private bufLen = 0;
  private pos = SEGMENT_HEADER_BYTES;
  private expectedSeq: bigint;
  defect: SegmentDefect | undefined;

  private constructor(path: string, fh: FileHandle, size: number, firstSeq: bigint) {
    this.path = path;
    this.fh = fh;
    this.size = size;
    this.expectedSeq = firstSeq;
    this.buf = Buffer.allocUnsafe(Math.min(DEFAULT_CHUNK_BYTES, Math.max(size, FRAME_HEADER_BYTES)));
  }

  /**
   * Opens `dir/<segment of firstSeq>` and checks its header (a bad header is always corruption:
   * headers are written atomically). Reads at most `limit` bytes when given.
   */
  static async open(dir: string, firstSeq: bigint, limit?: number): Promise<SegmentReader> {
    const path = join(dir, segmentFileName(firstSeq));
    const fh = await open(path, 'r');
    try {
      const fileSize = (await fh.stat()).size;
      const size = limit === undefined ? fileSize : Math.min(limit, fileSize);
      const h = Buffer.alloc(SEGMENT_HEADER_BYTES);
      if (size < SEGMENT_HEADER_BYTES || !(await readExactly(fh, h, 0, SEGMENT_HEADER_BYTES, 0))) {
        throw corrupt(path, 0, 'segment shorter than its header', { size });
      }
      const magic = h.readUInt32LE(0);
      const version = h.readUInt32LE(4);
      const headerSeq = h.readBigUInt64LE(8);
      if (magic !== MAGIC) throw corrupt(path, 0, 'not a WAL segment (bad magic)', { magic });
      if (version !== VERSION) throw corrupt(path, 4, 'unsupported segment version', { version });
      if (headerSeq !== firstSeq) {
        throw corrupt(path, 8, 'header first seq does not match the file name', { headerSeq, firstSeq });
      }
      return new SegmentReader(path, fh, size, firstSeq);
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** Offset just past the last frame read successfully. */
  get end(): number {
    return this.pos;
  }

  /** The seq the next frame must carry (one past the last good frame). */
  get nextSeq(): bigint {
    return this.expectedSeq;
  }

  /** The next valid frame, or undefined at the end of the file or at the first bad frame. */
  async next(): Promise<SegmentFrame | undefined> {
    if (this.defect !== undefined) return undefined;
    const offset = this.pos;
    const remaining = this.size - offset;
    if (remaining === 0) return undefined;
    if (remaining < FRAME_HEADER_BYTES) {
      return this.stop(offset, 'short frame header', { bytes: remaining });
    }
    await this.fill(offset, FRAME_HEADER_BYTES);
    let at = offset - this.bufPos;
    const length = this.buf.readUInt32LE(at);
    const storedCrc = this.buf.readUInt32LE(at + 4);
    const seq = this.buf.readBigUInt64LE(at + 8);
    if (length > remaining - FRAME_HEADER_BYTES) {
      return this.stop(offset, 'frame length past end of file', {
        length,
        available: remaining - FRAME_HEADER_BYTES,
      });
    }
    await this.fill(offset, FRAME_HEADER_BYTES + length);
    at = offset - this.bufPos;
    const crc = frameCrc(this.buf, at, length);
    if (crc !== storedCrc) return this.stop(offset, 'crc mismatch', { stored: storedCrc, computed: crc });
    // Only reachable with a valid CRC, i.e. a well-formed frame in the wrong place.
    if (seq !== this.expectedSeq) {
      return this.stop(
        offset,
        'unexpected sequence number',
        { expected: this.expectedSeq, found: seq },
        false,
      );
    }
    this.pos = offset + FRAME_HEADER_BYTES + length;
    this.expectedSeq++;
    return {
      seq,
      offset,
      payload: this.buf.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + length),
    };
  }

  async close(): Promise<void> {
    await this.fh.close();
  }

  private stop(offset: number, reason: string, meta: Record<string, unknown>, torn = true): undefined {
    this.defect = { offset, torn, reason, meta };
    return undefined;
  }

  /** Makes buf hold file bytes [offset, offset + n); the caller has checked they exist. */
  private async fill(offset: number, n: number): Promise<void> {
    if (offset >= this.bufPos && offset + n <= this.bufPos + this.bufLen) return;
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
    const want = Math.min(this.buf.length, this.size - offset);
    if (!(await readExactly(this.fh, this.buf, 0, want, offset))) {
      throw corrupt(this.path, offset, 'segment shrank while being read', { want });
    }
    this.bufPos = offset;
    this.bufLen = want;
  }
}

function corrupt(file: string, offset: number, reason: string, meta: Record<string, unknown>): StorageError {
  return new StorageError(StorageErrorCode.WalCorrupt, `${reason} in ${file} at offset ${offset}`, {
    file,
    offset,
    reason,
    ...meta,
  });
}

/** The error for a defect found where no torn write can be. */
export function defectError(file: string, d: SegmentDefect): StorageError {
  return corrupt(file, d.offset, d.reason, d.meta);
}
