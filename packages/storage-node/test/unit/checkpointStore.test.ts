/** CheckpointStore: atomic writes (buffer and streamed), retention, fallback past damage, crash leftovers. */

import { open, readdir, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { CheckpointStore, StorageErrorCode } from '@monsoon/storage-node';
import { makeTmpDir, Prng, removeDir } from '@monsoon/test-utils';
import { expectStorageError } from '../helpers/errors.js';
import { RecordingLogger } from '../helpers/recordingLogger.js';

/** Bytes before the body (see checkpointStore.ts). */
const HEADER = 32;

let dir: string;

beforeEach(async () => {
  dir = await makeTmpDir();
});

afterEach(async () => {
  await removeDir(dir);
});

function fileOf(seq: bigint): string {
  return join(dir, `${seq.toString().padStart(20, '0')}.ckpt`);
}

async function flipByte(file: string, offset: number): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, offset);
    b[0] ^= 0x01;
    await fh.write(b, 0, 1, offset);
  } finally {
    await fh.close();
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

describe('CheckpointStore', () => {
  it('has no checkpoint in an empty directory', async () => {
    const store = await CheckpointStore.create({ dir: join(dir, 'new') });
    expect(await store.latest()).toBeUndefined();
    expect(await store.list()).toEqual([]);
  });

  it('round-trips a buffer body, and an empty one', async () => {
    const store = await CheckpointStore.create({ dir });
    const data = new Prng(1).bytes(10_000);
    await store.write(7n, data);
    expect(await store.latest()).toEqual({ seq: 7n, data });
    expect((await stat(fileOf(7n))).size).toBe(HEADER + data.length);

    await store.write(8n, new Uint8Array(0));
    expect(await store.latest()).toEqual({ seq: 8n, data: new Uint8Array(0) });
  });

  it('round-trips a streamed body of tiny and large chunks, reusing the producer buffer', async () => {
    const store = await CheckpointStore.create({ dir });
    const r = new Prng(2);
    const sizes = [1, 0, 5, 300_000, 1 << 20, 3, (1 << 20) + 17, 64 * 1024, 2];
    const chunks = sizes.map((n) => r.bytes(n));
    async function* body(): AsyncGenerator<Uint8Array> {
      const scratch = new Uint8Array(2 << 20);
      for (const c of chunks) {
        scratch.set(c);
        yield scratch.subarray(0, c.length); // overwritten on the next step
      }
    }
    await store.write(42n, body());
    const got = await store.latest();
    expect(got?.seq).toBe(42n);
    expect(Buffer.from(got!.data).equals(Buffer.from(concat(chunks)))).toBe(true);

    await store.write(43n, [Uint8Array.of(1, 2), Uint8Array.of(3)]); // a plain iterable
    expect(await store.latest()).toEqual({ seq: 43n, data: Uint8Array.of(1, 2, 3) });
  });

  it('keeps the newest two by default and deletes older ones', async () => {
    const store = await CheckpointStore.create({ dir });
    for (const seq of [10n, 20n, 30n]) await store.write(seq, Uint8Array.of(Number(seq)));
    expect(await store.list()).toEqual([30n, 20n]);
    expect((await readdir(dir)).sort()).toEqual(
      [fileOf(20n), fileOf(30n)].map((f) => f.slice(dir.length + 1)),
    );

    const one = await CheckpointStore.create({ dir, keep: 1 });
    await one.write(40n, Uint8Array.of(40));
    expect(await one.list()).toEqual([40n]);
  });

  it.each([
    ['a flipped body byte', (f: string) => flipByte(f, HEADER + 100), 'body crc mismatch'],
    ['a flipped header byte', (f: string) => flipByte(f, 12), 'header crc mismatch'],
    ['a truncated body', (f: string) => truncate(f, HEADER + 500), 'body truncated'],
    ['a truncated header', (f: string) => truncate(f, 20), 'file shorter than the checkpoint header'],
  ])('falls back to the previous checkpoint past %s in the newest', async (_what, damage, reason) => {
    const logger = new RecordingLogger();
    const store = await CheckpointStore.create({ dir }, { logger });
    const older = new Prng(3).bytes(2000);
    await store.write(1n, older);
    await store.write(2n, new Prng(4).bytes(2000));
    await damage(fileOf(2n));
    expect(await store.latest()).toEqual({ seq: 1n, data: older });
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0].meta).toMatchObject({ file: fileOf(2n), seq: 2n, reason });
  });

  it('returns undefined when every checkpoint is damaged', async () => {
    const store = await CheckpointStore.create({ dir });
    await store.write(1n, Uint8Array.of(1, 2, 3));
    await store.write(2n, Uint8Array.of(4, 5, 6));
    await flipByte(fileOf(1n), HEADER);
    await flipByte(fileOf(2n), HEADER + 2);
    expect(await store.latest()).toBeUndefined();
  });

  it('ignores and removes a temp file left by a crash mid-write', async () => {
    const store = await CheckpointStore.create({ dir });
    await store.write(5n, Uint8Array.of(5));
    // A newer checkpoint whose write died before the rename: a header placeholder and half a body.
    await writeFile(`${fileOf(9n)}.tmp`, new Uint8Array(HEADER + 1000));
    expect(await store.latest()).toEqual({ seq: 5n, data: Uint8Array.of(5) });

    const logger = new RecordingLogger();
    const reopened = await CheckpointStore.create({ dir }, { logger });
    expect(await readdir(dir)).toEqual([fileOf(5n).slice(dir.length + 1)]);
    expect(logger.warnings).toHaveLength(1);
    expect(await reopened.latest()).toEqual({ seq: 5n, data: Uint8Array.of(5) });
  });

  it('leaves no trace of a write whose stream fails', async () => {
    const store = await CheckpointStore.create({ dir });
    await store.write(1n, Uint8Array.of(1));
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array(1000);
      throw new Error('source went away');
    }
    await expect(store.write(2n, failing())).rejects.toThrow('source went away');
    expect(await readdir(dir)).toEqual([fileOf(1n).slice(dir.length + 1)]);
    expect(await store.latest()).toEqual({ seq: 1n, data: Uint8Array.of(1) });
  });

  it('refuses a seq below the newest, replaces the same seq, and refuses keep = 0', async () => {
    const store = await CheckpointStore.create({ dir });
    await store.write(10n, Uint8Array.of(1));
    const e = await expectStorageError(
      store.write(9n, Uint8Array.of(2)),
      StorageErrorCode.CheckpointSeqRegress,
    );
    expect(e.meta).toMatchObject({ seq: 9n, newest: 10n });
    await store.write(10n, Uint8Array.of(3));
    expect(await store.latest()).toEqual({ seq: 10n, data: Uint8Array.of(3) });
    await expectStorageError(CheckpointStore.create({ dir, keep: 0 }), StorageErrorCode.BadArgument);
  });

  it('serialises concurrent writes', async () => {
    const store = await CheckpointStore.create({ dir, keep: 3 });
    await Promise.all([1n, 2n, 3n, 4n].map((s) => store.write(s, Uint8Array.of(Number(s)))));
    expect(await store.list()).toEqual([4n, 3n, 2n]);
    expect(await store.latest()).toEqual({ seq: 4n, data: Uint8Array.of(4) });
  });
});
