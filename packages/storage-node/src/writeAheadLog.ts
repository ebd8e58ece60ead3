/**
 * The write-ahead log: an append-only, CRC-checked sequence of opaque records in numbered
 * segment files. A record is acknowledged (its append resolves) only once it is as durable as
 * the fsync policy promises; recovery keeps every acknowledged record and cuts a torn tail.
 */
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Logger, silentLogger } from '@monsoon/edge';
import { syncDir } from '@monsoon/util';
import { writeAll } from './fileIo.js';
import { StorageError, StorageErrorCode } from './storageError.js';
import { encodeFrame, MAX_FRAME_PAYLOAD } from './walFrame.js';
import {
  defectError,
  encodeSegmentHeader,
  parseSegmentFileName,
  SEGMENT_HEADER_BYTES,
  SegmentReader,
  segmentFileName,
} from './walSegment.js';

/**
 * When an append counts as done:
 * - `always`: after the record is written and fdatasync'ed. Appends that arrive while an
 *   fsync is in flight are written together and share the next one (no added wait).
 * - `group`: as `always`, but a batch is also held open up to `groupCommitMs` (or until
 *   `groupCommitBytes` are queued) to gather more appends per fsync.
 * - `none`: after the write() reaches the OS (survives a process crash, not a power loss).
 *   For benchmarks. Segments are still fsynced when rolled and on close().
 */
export type FsyncPolicy = 'always' | 'group' | 'none';

export interface WriteAheadLogOptions {
  /** Directory holding the segments (created if missing). One log per directory. */
  dir: string;
  /** A new segment is started when the next record would take the current one past this size. */
  segmentBytes?: number;
  fsync?: FsyncPolicy;
  /** `group` policy: the longest a record waits for companions before its batch is written. */
  groupCommitMs?: number;
  /** `group` policy: a batch is written at once when this many bytes are queued. */
  groupCommitBytes?: number;
  /** Appends with a larger payload are refused. */
  maxRecordBytes?: number;
}

/** Defaults of WriteAheadLogOptions. */
export const defaultWriteAheadLogOptions: Required<Omit<WriteAheadLogOptions, 'dir'>> = {
  segmentBytes: 64 * 1024 * 1024,
  fsync: 'always',
  groupCommitMs: 2,
  groupCommitBytes: 1024 * 1024,
  maxRecordBytes: 64 * 1024 * 1024,
};

/** Collaborators of the WAL. */
export interface WriteAheadLogModules {
  /** Reports recovery (torn tails cut, segments found) and truncation. Default: silent. */
  logger?: Logger;
}

/** One record: its sequence number and its payload. */
export interface WalRecord {
  seq: bigint;
  payload: Uint8Array;
}

interface Segment {
  firstSeq: bigint;
  /** Bytes of acknowledged (or, for closed segments, all) frames plus the header. */
  size: number;
}

interface PendingAppend {
  seq: bigint;
  frame: Buffer;
  resolve: (seq: bigint) => void;
  reject: (e: unknown) => void;
}

export class WriteAheadLog {
  /** The directory holding the segments. */
  readonly dir: string;
  private readonly opts: Required<Omit<WriteAheadLogOptions, 'dir'>>;
  private readonly log: Logger;
  /** Oldest first; the last one is being appended to. Never empty. */
  private readonly segments: Segment[];
  private fh: FileHandle;
  /** End of written frames in the active segment (ahead of its `size` while a batch is in flight). */
  private writePos: number;
  private nextSeq: bigint;
  private ackedSeq: bigint;

  private queue: PendingAppend[] = [];
  private queueBytes = 0;
  private queueOpenedAt = 0;
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private truncating: Promise<unknown> = Promise.resolve();
  private failure: unknown;
  private closed = false;

  private stats = { bytes: 0, records: 0, fsyncs: 0 };

  private constructor(
    dir: string,
    opts: Required<Omit<WriteAheadLogOptions, 'dir'>>,
    log: Logger,
    segments: Segment[],
    fh: FileHandle,
    nextSeq: bigint,
  ) {
    this.dir = dir;
    this.opts = opts;
    this.log = log;
    this.segments = segments;
    this.fh = fh;
    this.writePos = segments[segments.length - 1].size;
    this.nextSeq = nextSeq;
    this.ackedSeq = nextSeq - 1n;
  }

  /**
   * Opens the log in `opts.dir`, creating it if empty. Every frame of every segment is checked.
   * A torn or corrupt tail of the newest segment is logged and cut (ftruncate + fsync); a bad
   * frame anywhere else, or a gap in the numbering, fails with WalCorrupt.
   */
  static async create(
    opts: WriteAheadLogOptions,
    modules: WriteAheadLogModules = {},
  ): Promise<WriteAheadLog> {
    const o = { ...defaultWriteAheadLogOptions, ...stripUndefined(opts) };
    checkOptions(o);
    const log = modules.logger ?? silentLogger;
    const dir = opts.dir;
    await mkdir(dir, { recursive: true });

    const names = await readdir(dir);
    for (const name of names) {
      if (name.endsWith('.wal.tmp')) {
        // A segment whose creation was interrupted: it never held a record.
        await rm(join(dir, name), { force: true });
        log.info('removed unfinished wal segment', { dir, file: name });
      }
    }
    const firstSeqs = names
      .map(parseSegmentFileName)
      .filter((s): s is bigint => s !== undefined)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

    const segments: Segment[] = [];
    let nextSeq = 1n;
    if (firstSeqs.length === 0) {
      await createSegment(dir, 1n);
      segments.push({ firstSeq: 1n, size: SEGMENT_HEADER_BYTES });
    } else {
      nextSeq = firstSeqs[0];
      for (let i = 0; i < firstSeqs.length; i++) {
        const firstSeq = firstSeqs[i];
        const file = join(dir, segmentFileName(firstSeq));
        if (firstSeq !== nextSeq) {
          throw new StorageError(
            StorageErrorCode.WalCorrupt,
            `gap in the log: ${file} starts at seq ${firstSeq}, the previous segment ends before ${nextSeq}`,
            { file, offset: 0, expected: nextSeq, found: firstSeq },
          );
        }
        const reader = await SegmentReader.open(dir, firstSeq);
        try {
          while ((await reader.next()) !== undefined) {}
        } finally {
          await reader.close();
        }
        const last = i === firstSeqs.length - 1;
        if (reader.defect !== undefined) {
          // Only the newest segment can hold unacknowledged (possibly torn) frames, and only a
          // frame that fails its own checks can be torn: a well-formed one out of sequence is not.
          if (!last || !reader.defect.torn) throw defectError(file, reader.defect);
          await cutTail(file, reader.end);
          log.warn('wal: cut a torn or corrupt tail', {
            file,
            offset: reader.defect.offset,
            reason: reader.defect.reason,
            bytesCut: reader.size - reader.end,
            ...reader.defect.meta,
          });
        }
        segments.push({ firstSeq, size: reader.end });
        nextSeq = reader.nextSeq;
      }
    }
    const active = segments[segments.length - 1];
    const fh = await open(join(dir, segmentFileName(active.firstSeq)), 'r+');
    const wal = new WriteAheadLog(dir, o, log, segments, fh, nextSeq);
    log.info('wal opened', {
      dir,
      segments: segments.length,
      firstSeq: wal.firstSeq,
      lastSeq: wal.lastSeq,
      fsync: o.fsync,
    });
    return wal;
  }

  // ---------------------------------------------------------------- metrics

  /** Seq of the newest acknowledged record; 0n when the log has never held one. */
  get lastSeq(): bigint {
    return this.ackedSeq;
  }

  /** Seq of the oldest record still kept (records below it were truncated away). */
  get firstSeq(): bigint {
    return this.segments[0].firstSeq;
  }

  /** Segment files in the log. */
  get segmentCount(): number {
    return this.segments.length;
  }

  /** Frame bytes written since this instance was opened. */
  get bytesWritten(): number {
    return this.stats.bytes;
  }

  /** Records acknowledged since this instance was opened. */
  get recordsWritten(): number {
    return this.stats.records;
  }

  /** fdatasync calls on segment files since this instance was opened. */
  get fsyncCount(): number {
    return this.stats.fsyncs;
  }

  // ---------------------------------------------------------------- writes

  /**
   * Appends one record and resolves to its sequence number once it is durable under the
   * fsync policy. The payload is copied at once; the caller may reuse its buffer.
   * Records are numbered, written and acknowledged in call order.
   */
  append(payload: Uint8Array): Promise<bigint> {
    if (this.closed) return Promise.reject(new StorageError(StorageErrorCode.Closed, 'append after close()'));
    if (this.failure !== undefined) return Promise.reject(this.failedError());
    if (payload.length > this.opts.maxRecordBytes) {
      return Promise.reject(
        new StorageError(
          StorageErrorCode.RecordTooLarge,
          `a record holds at most ${this.opts.maxRecordBytes} bytes, got ${payload.length}`,
          { length: payload.length, max: this.opts.maxRecordBytes },
        ),
      );
    }
    const seq = this.nextSeq++;
    const frame = encodeFrame(seq, payload);
    return new Promise<bigint>((resolve, reject) => {
      if (this.queue.length === 0) this.queueOpenedAt = performance.now();
      this.queue.push({ seq, frame, resolve, reject });
      this.queueBytes += frame.length;
      this.schedule();
    });
  }

  /** Starts a flush when one is due; see FsyncPolicy. At most one flush runs at a time. */
  private schedule(): void {
    if (this.flushing !== undefined || this.queue.length === 0) return;
    if (this.opts.fsync === 'group' && !this.closed && this.queueBytes < this.opts.groupCommitBytes) {
      const wait = this.queueOpenedAt + this.opts.groupCommitMs - performance.now();
      if (wait > 0) {
        this.timer ??= setTimeout(() => {
          this.timer = undefined;
          this.schedule();
        }, wait);
        return;
      }
    }
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.flushing = this.flush();
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    this.queueBytes = 0;
    try {
      await this.writeBatch(batch);
      for (const p of batch) p.resolve(p.seq);
    } catch (e) {
      // After a failed write or fsync the file's state is unknown (and a retried fsync may
      // falsely succeed), so the log refuses further appends until it is reopened and recovered.
      this.failure = e;
      const err = this.failedError();
      this.log.warn('wal: write failed, refusing further appends', { dir: this.dir, error: String(e) });
      for (const p of batch) p.reject(err);
      for (const p of this.queue) p.reject(err);
      this.queue = [];
      this.queueBytes = 0;
    } finally {
      this.flushing = undefined;
      this.schedule();
    }
  }

  private async writeBatch(batch: PendingAppend[]): Promise<void> {
    const { segmentBytes } = this.opts;
    let i = 0;
    while (i < batch.length) {
      if (this.writePos > SEGMENT_HEADER_BYTES && this.writePos + batch[i].frame.length > segmentBytes) {
        await this.roll(batch[i].seq);
      }
      // Everything that fits in this segment (at least one frame: a record larger than a
      // segment gets a segment of its own).
      const frames = [batch[i].frame];
      let bytes = batch[i].frame.length;
      for (i++; i < batch.length && this.writePos + bytes + batch[i].frame.length <= segmentBytes; i++) {
        frames.push(batch[i].frame);
        bytes += batch[i].frame.length;
      }
      await writeAll(this.fh, frames, this.writePos);
      this.writePos += bytes;
      this.stats.bytes += bytes;
    }
    if (this.opts.fsync !== 'none') await this.datasync();
    this.segments[this.segments.length - 1].size = this.writePos;
    this.ackedSeq = batch[batch.length - 1].seq;
    this.stats.records += batch.length;
  }

  /**
   * Seals the active segment and starts one whose first record is `firstSeq`. The sealed
   * segment is fsynced whatever the policy: recovery relies on every segment but the last
   * being whole.
   */
  private async roll(firstSeq: bigint): Promise<void> {
    await this.datasync();
    await this.fh.close();
    this.segments[this.segments.length - 1].size = this.writePos;
    await createSegment(this.dir, firstSeq);
    this.fh = await open(join(this.dir, segmentFileName(firstSeq)), 'r+');
    this.segments.push({ firstSeq, size: SEGMENT_HEADER_BYTES });
    this.writePos = SEGMENT_HEADER_BYTES;
  }

  private async datasync(): Promise<void> {
    await this.fh.datasync();
    this.stats.fsyncs++;
  }

  private failedError(): StorageError {
    return new StorageError(
      StorageErrorCode.WalFailed,
      'an earlier write or fsync of the log failed; reopen it to recover',
      { dir: this.dir },
      this.failure,
    );
  }

  // ---------------------------------------------------------------- reads

  /**
   * The acknowledged records with seq >= `fromSeq` (default: all kept), in order, checking
   * every CRC again. Records appended while iterating may or may not be included.
   * Fails with WalTruncated when `fromSeq` lies below what truncateBefore() kept, so a
   * recovery never silently skips records.
   */
  async *replay(fromSeq?: bigint): AsyncGenerator<WalRecord> {
    const first = this.firstSeq;
    if (fromSeq !== undefined && fromSeq < first && first > 1n) {
      throw new StorageError(
        StorageErrorCode.WalTruncated,
        `replay from seq ${fromSeq} asked for, but the log now starts at seq ${first}`,
        { fromSeq, firstSeq: first },
      );
    }
    const segments = this.segments.slice();
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i];
      const next = segments[i + 1];
      if (fromSeq !== undefined && next !== undefined && next.firstSeq <= fromSeq) continue;
      const limit = seg.size;
      const reader = await SegmentReader.open(this.dir, seg.firstSeq, limit);
      try {
        for (let f = await reader.next(); f !== undefined; f = await reader.next()) {
          if (fromSeq === undefined || f.seq >= fromSeq)
            yield { seq: f.seq, payload: new Uint8Array(f.payload) };
        }
        const file = join(this.dir, segmentFileName(seg.firstSeq));
        // These bytes were checked when the log was opened or written by this instance.
        if (reader.defect !== undefined) throw defectError(file, reader.defect);
        if (reader.end !== limit) {
          throw new StorageError(StorageErrorCode.WalCorrupt, `${file} is shorter than the log wrote`, {
            file,
            offset: reader.end,
            expectedSize: limit,
          });
        }
      } finally {
        await reader.close();
      }
    }
  }

  // ---------------------------------------------------------------- maintenance

  /**
   * Deletes the segments whose records all have seq < `seq` (call it once a checkpoint
   * covering them is durable). The active segment is never deleted. Segments go oldest first,
   * with a directory fsync after each, so a crash never leaves a gap. Resolves to how many
   * segments were deleted.
   */
  truncateBefore(seq: bigint): Promise<number> {
    if (this.closed)
      return Promise.reject(new StorageError(StorageErrorCode.Closed, 'truncateBefore after close()'));
    const run = this.truncating.then(async () => {
      let n = 0;
      while (this.segments.length > 1 && this.segments[1].firstSeq <= seq) {
        const seg = this.segments.shift()!;
        await rm(join(this.dir, segmentFileName(seg.firstSeq)), { force: true });
        await syncDir(this.dir);
        n++;
      }
      if (n > 0)
        this.log.info('wal truncated', {
          dir: this.dir,
          before: seq,
          segmentsDeleted: n,
          firstSeq: this.firstSeq,
        });
      return n;
    });
    this.truncating = run.catch(() => {});
    return run;
  }

  /**
   * Drops every record and numbers the next one `seq`, for a log whose records a newer
   * checkpoint covers all of: after a tail cut (a lost unsynced tail) the log may end at or
   * below the checkpoint's seq, and records appended from there would reuse numbers the
   * checkpoint already covers, so a replay would skip them. Only before the first append.
   * Crash-safe: the old segments go first, then the new one is created, so a crash in between
   * leaves an empty log, which the same check on the next open restarts again.
   */
  async restartAt(seq: bigint): Promise<void> {
    if (this.closed) throw new StorageError(StorageErrorCode.Closed, 'restartAt after close()');
    if (seq <= this.lastSeq || this.queue.length > 0 || this.flushing !== undefined) {
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `restartAt(${seq}): expected an idle log ending below it, found lastSeq ${this.lastSeq} and ${this.queue.length} appends queued`,
        { seq, lastSeq: this.lastSeq },
      );
    }
    await this.truncating;
    await this.fh.close();
    for (const seg of this.segments.splice(0)) {
      await rm(join(this.dir, segmentFileName(seg.firstSeq)), { force: true });
    }
    await syncDir(this.dir);
    await createSegment(this.dir, seq);
    this.fh = await open(join(this.dir, segmentFileName(seq)), 'r+');
    this.segments.push({ firstSeq: seq, size: SEGMENT_HEADER_BYTES });
    this.writePos = SEGMENT_HEADER_BYTES;
    this.nextSeq = seq;
    this.ackedSeq = seq - 1n;
    this.log.warn('wal restarted past a checkpoint', { dir: this.dir, firstSeq: seq });
  }

  /**
   * Writes and syncs whatever is queued (pending appends still resolve), then closes the
   * active segment. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.schedule();
    while (this.flushing !== undefined) await this.flushing;
    await this.truncating;
    try {
      if (this.opts.fsync === 'none' && this.failure === undefined) await this.datasync();
    } finally {
      await this.fh.close();
    }
  }
}

/** Creates the segment for `firstSeq` whole: header to a temp file, fsync, rename, fsync dir. */
async function createSegment(dir: string, firstSeq: bigint): Promise<void> {
  const path = join(dir, segmentFileName(firstSeq));
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await writeAll(fh, [encodeSegmentHeader(firstSeq)], 0);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  await syncDir(dir);
}

async function cutTail(file: string, end: number): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    await fh.truncate(end);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function checkOptions(o: Required<Omit<WriteAheadLogOptions, 'dir'>>): void {
  const bad = (what: string, meta: Record<string, unknown>) =>
    new StorageError(StorageErrorCode.BadArgument, what, meta);
  if (!Number.isSafeInteger(o.segmentBytes) || o.segmentBytes <= SEGMENT_HEADER_BYTES) {
    throw bad(`segmentBytes must be an integer above ${SEGMENT_HEADER_BYTES}`, {
      segmentBytes: o.segmentBytes,
    });
  }
  if (!['always', 'group', 'none'].includes(o.fsync)) {
    throw bad(`fsync must be 'always', 'group' or 'none'`, { fsync: o.fsync });
  }
  if (!(o.groupCommitMs >= 0)) throw bad('groupCommitMs must be >= 0', { groupCommitMs: o.groupCommitMs });
  if (!(o.groupCommitBytes >= 0)) {
    throw bad('groupCommitBytes must be >= 0', { groupCommitBytes: o.groupCommitBytes });
  }
  if (
    !Number.isSafeInteger(o.maxRecordBytes) ||
    o.maxRecordBytes < 0 ||
    o.maxRecordBytes > MAX_FRAME_PAYLOAD
  ) {
    throw bad(`maxRecordBytes must be an integer in [0, ${MAX_FRAME_PAYLOAD}]`, {
      maxRecordBytes: o.maxRecordBytes,
    });
  }
}

/** Options with `undefined` values dropped, so they do not override defaults. */
function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
