/** WriteAheadLog: round trips, numbering, recovery from torn tails and corruption, group commit, truncation. */

import {
  appendFile,
  cp,
  open as openFile,
  readdir,
  readFile,
  stat,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Logger } from '@monsoon/edge';
import {
  StorageErrorCode,
  type WalRecord,
  WriteAheadLog,
  type WriteAheadLogOptions,
} from '@monsoon/storage-node';
import { makeTmpDir, removeDir } from '@monsoon/test-utils';
import { expectStorageError } from '../helpers/errors.js';
import { fixedPayload, payloadFor } from '../helpers/payloads.js';
import { RecordingLogger } from '../helpers/recordingLogger.js';

// The on-disk layout (see walFrame.ts, walSegment.ts), which these tests damage on purpose.
const SEGMENT_HEADER = 16;
const FRAME_HEADER = 16;
/** With 100-byte payloads, a segment of this size holds exactly four records. */
const FIXED_PAYLOAD = 100;
const FOUR_PER_SEGMENT = SEGMENT_HEADER + 4 * (FRAME_HEADER + FIXED_PAYLOAD);

let dir: string;
let opened: WriteAheadLog[];

beforeEach(async () => {
  dir = await makeTmpDir();
  opened = [];
});

afterEach(async () => {
  for (const w of opened) await w.close().catch(() => {});
  await removeDir(dir);
});

async function openWal(
  opts: Partial<WriteAheadLogOptions> = {},
  logger?: Logger,
  at: string = dir,
): Promise<WriteAheadLog> {
  const w = await WriteAheadLog.create({ dir: at, ...opts }, { logger });
  opened.push(w);
  return w;
}

async function replayAll(w: WriteAheadLog, fromSeq?: bigint): Promise<WalRecord[]> {
  const out: WalRecord[] = [];
  for await (const r of w.replay(fromSeq)) out.push(r);
  return out;
}

async function segmentFiles(at: string = dir): Promise<string[]> {
  return (await readdir(at)).filter((n) => n.endsWith('.wal')).sort();
}

function seqs(from: number, to: number): bigint[] {
  return Array.from({ length: to - from + 1 }, (_, i) => BigInt(from + i));
}

/** Appends records `from..to` (payloadFor) one after another. */
async function appendRange(w: WriteAheadLog, from: number, to: number): Promise<void> {
  for (const s of seqs(from, to)) expect(await w.append(payloadFor(s))).toBe(s);
}

function expectIntact(records: WalRecord[], from: number, to: number): void {
  expect(records.map((r) => r.seq)).toEqual(seqs(from, to));
  for (const r of records) expect(r.payload).toEqual(payloadFor(r.seq));
}

async function flipByte(file: string, offset: number): Promise<void> {
  const fh = await openFile(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, offset);
    b[0] ^= 0x5a;
    await fh.write(b, 0, 1, offset);
  } finally {
    await fh.close();
  }
}

describe('WriteAheadLog: append and replay', () => {
  it('round-trips records across segment rolls, before and after reopening', async () => {
    const w = await openWal({ segmentBytes: 2048 });
    await appendRange(w, 1, 100);
    expect(w.lastSeq).toBe(100n);
    expect(w.recordsWritten).toBe(100);
    expect(w.segmentCount).toBeGreaterThan(5);
    expect(w.segmentCount).toBe((await segmentFiles()).length);
    expectIntact(await replayAll(w), 1, 100);
    await w.close();

    const again = await openWal({ segmentBytes: 2048 });
    expect(again.firstSeq).toBe(1n);
    expect(again.lastSeq).toBe(100n);
    expectIntact(await replayAll(again), 1, 100);
  });

  it('lays segments out as documented: 16-byte header, then 16-byte frame headers', async () => {
    const w = await openWal({ segmentBytes: FOUR_PER_SEGMENT });
    for (const s of seqs(1, 12)) await w.append(fixedPayload(s, FIXED_PAYLOAD));
    const files = await segmentFiles();
    expect(files).toEqual([
      '00000000000000000001.wal',
      '00000000000000000005.wal',
      '00000000000000000009.wal',
    ]);
    for (const f of files) expect((await stat(join(dir, f))).size).toBe(FOUR_PER_SEGMENT);
    expect(w.bytesWritten).toBe(12 * (FRAME_HEADER + FIXED_PAYLOAD));
  });

  it('continues the numbering after a reopen', async () => {
    const w = await openWal();
    await appendRange(w, 1, 5);
    await w.close();
    const again = await openWal();
    expect(again.lastSeq).toBe(5n);
    expect(await again.append(payloadFor(6n))).toBe(6n);
    expectIntact(await replayAll(again), 1, 6);
  });

  it('replays from a given seq, skipping whole segments below it', async () => {
    const w = await openWal({ segmentBytes: 1024 });
    await appendRange(w, 1, 50);
    expectIntact(await replayAll(w, 20n), 20, 50);
    expectIntact(await replayAll(w, 1n), 1, 50);
    expectIntact(await replayAll(w, 50n), 50, 50);
    expect(await replayAll(w, 51n)).toEqual([]);
  });

  it('stores empty records and records larger than a segment (alone in theirs)', async () => {
    const w = await openWal({ segmentBytes: 256 });
    const big = fixedPayload(2n, 1000);
    await w.append(new Uint8Array(0));
    await w.append(big);
    await w.append(fixedPayload(3n, 10));
    expect(w.segmentCount).toBe(3);
    await w.close();
    const again = await openWal({ segmentBytes: 256 });
    const got = await replayAll(again);
    expect(got.map((r) => r.payload)).toEqual([new Uint8Array(0), big, fixedPayload(3n, 10)]);
  });

  it('copies the payload at append, so the caller may reuse its buffer', async () => {
    const w = await openWal();
    const buf = new Uint8Array([1, 2, 3]);
    const pending = w.append(buf);
    buf.fill(9);
    await pending;
    expect((await replayAll(w))[0].payload).toEqual(new Uint8Array([1, 2, 3]));
  });

  it('refuses oversized records without using up a seq, and appends after close()', async () => {
    const w = await openWal({ maxRecordBytes: 10 });
    const e = await expectStorageError(w.append(new Uint8Array(11)), StorageErrorCode.RecordTooLarge);
    expect(e.meta).toMatchObject({ length: 11, max: 10 });
    expect(await w.append(new Uint8Array(10))).toBe(1n);
    await w.close();
    await expectStorageError(w.append(new Uint8Array(1)), StorageErrorCode.Closed);
  });

  it('refuses bad options', async () => {
    await expectStorageError(WriteAheadLog.create({ dir, segmentBytes: 8 }), StorageErrorCode.BadArgument);
    await expectStorageError(
      WriteAheadLog.create({ dir, fsync: 'sometimes' as 'always' }),
      StorageErrorCode.BadArgument,
    );
  });

  it('removes a segment whose creation was interrupted', async () => {
    const w = await openWal({ segmentBytes: 1024 });
    await appendRange(w, 1, 10);
    await w.close();
    await writeFile(join(dir, '00000000000000000011.wal.tmp'), Buffer.from('MWAL'));
    const again = await openWal({ segmentBytes: 1024 });
    expect((await readdir(dir)).some((n) => n.endsWith('.tmp'))).toBe(false);
    expect(await again.append(payloadFor(11n))).toBe(11n);
    expectIntact(await replayAll(again), 1, 11);
  });
});

describe('WriteAheadLog: recovery', () => {
  /** Record 40, kept short so that cutting it at every offset stays quick. */
  const LAST = fixedPayload(40n, 24);

  /** A log of 40 records over several segments, closed; returns the newest segment's layout. */
  async function writeTemplate(at: string) {
    const w = await openWal({ segmentBytes: 4096 }, undefined, at);
    await appendRange(w, 1, 39);
    await w.append(LAST);
    await w.close();
    const files = await segmentFiles(at);
    const lastFile = files[files.length - 1];
    const size = (await stat(join(at, lastFile))).size;
    const lastFrameStart = size - FRAME_HEADER - LAST.length;
    return { files, lastFile, size, lastFrameStart };
  }

  it('cuts a last record torn at any byte offset, and appends continue after the survivors', async () => {
    const template = join(dir, 'template');
    const { files, lastFile, size, lastFrameStart } = await writeTemplate(template);
    expect(files.length).toBeGreaterThan(1);
    // Every cut inside the last frame: its header (incl. mid-header, +8) and its payload.
    for (let cut = lastFrameStart; cut < size; cut++) {
      const at = join(dir, `cut-${cut}`);
      await cp(template, at, { recursive: true });
      await truncate(join(at, lastFile), cut);
      const logger = new RecordingLogger();
      const w = await openWal({ segmentBytes: 4096, fsync: 'none' }, logger, at);

      expect(w.lastSeq).toBe(39n);
      expect((await stat(join(at, lastFile))).size).toBe(lastFrameStart);
      if (cut === lastFrameStart) {
        expect(logger.warnings).toEqual([]); // a clean end: nothing torn
      } else {
        expect(logger.warnings).toHaveLength(1);
        expect(logger.warnings[0].meta).toMatchObject({
          file: join(at, lastFile),
          offset: lastFrameStart,
          bytesCut: cut - lastFrameStart,
        });
      }
      const fresh = fixedPayload(40n, 5);
      expect(await w.append(fresh)).toBe(40n);
      const got = await replayAll(w);
      expectIntact(got.slice(0, 39), 1, 39);
      expect(got[39]).toEqual({ seq: 40n, payload: fresh });
      await w.close();
      await removeDir(at);
    }
  });

  it.each([
    ['length', 1],
    ['crc', 5],
    ['seq', 9],
    ['payload', 16 + 20],
  ])('detects a flipped byte in the last record (%s field) by CRC and cuts it', async (_field, delta) => {
    const { lastFile, lastFrameStart } = await writeTemplate(dir);
    await flipByte(join(dir, lastFile), lastFrameStart + delta);
    const logger = new RecordingLogger();
    const w = await openWal({ segmentBytes: 4096 }, logger);
    expect(w.lastSeq).toBe(39n);
    expect((await stat(join(dir, lastFile))).size).toBe(lastFrameStart);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0].meta.offset).toBe(lastFrameStart);
    expect(['crc mismatch', 'frame length past end of file']).toContain(logger.warnings[0].meta.reason);
    expectIntact(await replayAll(w), 1, 39);
  });

  it('refuses a well-formed frame out of sequence at the tail rather than cutting it', async () => {
    const { lastFile, size, lastFrameStart } = await writeTemplate(dir);
    const file = join(dir, lastFile);
    const lastFrame = (await readFile(file)).subarray(lastFrameStart, size);
    await appendFile(file, lastFrame); // seq 40 again: a valid CRC, so not a torn write
    const e = await expectStorageError(openWal({ segmentBytes: 4096 }), StorageErrorCode.WalCorrupt);
    expect(e.meta).toMatchObject({ file, offset: size, reason: 'unexpected sequence number' });
    expect((await stat(file)).size).toBe(size + lastFrame.length); // nothing was cut
  });

  /** Three full segments of four 100-byte records each. */
  async function writeThreeSegments(): Promise<string[]> {
    const w = await openWal({ segmentBytes: FOUR_PER_SEGMENT });
    for (const s of seqs(1, 12)) await w.append(fixedPayload(s, FIXED_PAYLOAD));
    await w.close();
    return segmentFiles();
  }

  it('fails with WalCorrupt (file, offset) on a bad record in an earlier segment', async () => {
    const files = await writeThreeSegments();
    const secondFrame = SEGMENT_HEADER + FRAME_HEADER + FIXED_PAYLOAD;
    await flipByte(join(dir, files[0]), secondFrame + FRAME_HEADER + 10);
    const e = await expectStorageError(
      openWal({ segmentBytes: FOUR_PER_SEGMENT }),
      StorageErrorCode.WalCorrupt,
    );
    expect(e.meta).toMatchObject({ file: join(dir, files[0]), offset: secondFrame, reason: 'crc mismatch' });
  });

  it('fails with WalCorrupt on a torn earlier segment, and on a missing middle segment', async () => {
    const files = await writeThreeSegments();
    await truncate(join(dir, files[1]), FOUR_PER_SEGMENT - 1);
    const e = await expectStorageError(
      openWal({ segmentBytes: FOUR_PER_SEGMENT }),
      StorageErrorCode.WalCorrupt,
    );
    expect(e.meta).toMatchObject({
      file: join(dir, files[1]),
      offset: FOUR_PER_SEGMENT - FRAME_HEADER - FIXED_PAYLOAD,
    });

    await removeDir(join(dir, files[1]));
    const gap = await expectStorageError(
      openWal({ segmentBytes: FOUR_PER_SEGMENT }),
      StorageErrorCode.WalCorrupt,
    );
    expect(gap.meta).toMatchObject({ file: join(dir, files[2]), expected: 5n, found: 9n });
  });

  it('fails with WalCorrupt on a damaged segment header', async () => {
    const files = await writeThreeSegments();
    await flipByte(join(dir, files[2]), 0);
    const e = await expectStorageError(
      openWal({ segmentBytes: FOUR_PER_SEGMENT }),
      StorageErrorCode.WalCorrupt,
    );
    expect(e.meta).toMatchObject({ file: join(dir, files[2]), offset: 0 });
  });
});

describe('WriteAheadLog: fsync policies', () => {
  it("'always' fsyncs once per append when appends come one at a time", async () => {
    const w = await openWal({ fsync: 'always' });
    await appendRange(w, 1, 20);
    expect(w.fsyncCount).toBe(20);
  });

  it("'group' shares fsyncs among 200 concurrent appends, each acknowledged only once durable", async () => {
    const w = await openWal({ fsync: 'group', groupCommitMs: 5, segmentBytes: 8192 });
    const acked = await Promise.all(
      seqs(1, 200).map((s) =>
        w.append(payloadFor(s)).then((seq) => {
          // Resolved only after the batch holding it was written and fsynced.
          expect(w.lastSeq >= seq).toBe(true);
          return seq;
        }),
      ),
    );
    expect(acked).toEqual(seqs(1, 200));
    expect(w.fsyncCount).toBeGreaterThan(0);
    expect(w.fsyncCount).toBeLessThan(200);
    expectIntact(await replayAll(w), 1, 200);
    await w.close();
    expectIntact(await replayAll(await openWal()), 1, 200);
  });

  it("'group' writes a batch at once when groupCommitBytes are queued, without waiting out the timer", async () => {
    const w = await openWal({ fsync: 'group', groupCommitMs: 600_000, groupCommitBytes: 1 });
    const acked = await Promise.all(seqs(1, 50).map((s) => w.append(payloadFor(s))));
    expect(acked).toEqual(seqs(1, 50));
    expect(w.fsyncCount).toBeLessThan(50);
  }, 10_000);

  it("'group' holds a batch open across event-loop turns; close() writes it with one fsync", async () => {
    const w = await openWal({ fsync: 'group', groupCommitMs: 600_000 });
    let resolved = 0;
    const pending: Promise<bigint>[] = [];
    for (const s of seqs(1, 10)) {
      pending.push(w.append(payloadFor(s)).finally(() => resolved++));
      await new Promise((r) => setImmediate(r)); // 'always' would have flushed by now
    }
    expect(resolved).toBe(0);
    expect(w.fsyncCount).toBe(0);
    await w.close();
    expect(await Promise.all(pending)).toEqual(seqs(1, 10));
    expect(w.fsyncCount).toBe(1);
    expectIntact(await replayAll(await openWal()), 1, 10);
  }, 10_000);

  it("'none' does not fsync appends, and close() makes them durable", async () => {
    const w = await openWal({ fsync: 'none' });
    await appendRange(w, 1, 20);
    expect(w.fsyncCount).toBe(0);
    await w.close();
    expect(w.fsyncCount).toBe(1);
    expectIntact(await replayAll(await openWal()), 1, 20);
  });
});

describe('WriteAheadLog: truncateBefore', () => {
  it('deletes only segments whose records are all below the seq, never the active one', async () => {
    const w = await openWal({ segmentBytes: FOUR_PER_SEGMENT });
    for (const s of seqs(1, 20)) await w.append(fixedPayload(s, FIXED_PAYLOAD));
    // Segments: [1-4] [5-8] [9-12] [13-16] [17-20]
    expect(await w.truncateBefore(4n)).toBe(0); // seq 4 is still needed
    expect(await w.truncateBefore(8n)).toBe(1); // [1-4] goes; [5-8] holds 8
    expect(w.firstSeq).toBe(5n);
    expect(await w.truncateBefore(9n)).toBe(1);
    expect(await segmentFiles()).toEqual([
      '00000000000000000009.wal',
      '00000000000000000013.wal',
      '00000000000000000017.wal',
    ]);
    expect(await w.truncateBefore(1000n)).toBe(2);
    expect(w.firstSeq).toBe(17n);
    expect(w.segmentCount).toBe(1);
    await expectStorageError(replayAll(w, 3n), StorageErrorCode.WalTruncated);
    await w.close();

    const again = await openWal({ segmentBytes: FOUR_PER_SEGMENT });
    expect(again.firstSeq).toBe(17n);
    expect(await again.append(fixedPayload(21n, FIXED_PAYLOAD))).toBe(21n);
    const got = await replayAll(again);
    expect(got.map((r) => r.seq)).toEqual(seqs(17, 21));
    expect(got.map((r) => r.payload)).toEqual(seqs(17, 21).map((s) => fixedPayload(s, FIXED_PAYLOAD)));
  });
});
