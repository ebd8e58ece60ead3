/**
 * Checkpoints: whole snapshots of a shard tagged with the WAL seq they include, written
 * atomically (temp file, fsync, rename, directory fsync) and checked on read. Recovery is
 * `latest()` plus `wal.replay(seq + 1n)`.
 *
 * File `<seq, 20 decimal digits>.ckpt`: a 32-byte header, then the body. Header, little-endian:
 *   [0, 4) 'MCKP'  [4, 8) u32 version  [8, 16) u64 seq  [16, 24) u64 body length
 *   [24, 28) u32 CRC-32C of the body  [28, 32) u32 CRC-32C of header bytes [0, 28)
 */
import { type FileHandle, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Logger, silentLogger } from '@monsoon/edge';
import { syncDir } from '@monsoon/util';
import { crc32c } from './crc32c.js';
import { readExactly, writeAll } from './fileIo.js';
import { isStorageError, StorageError, StorageErrorCode } from './storageError.js';

export interface CheckpointStoreOptions {
  /** Directory holding the checkpoints (created if missing). One store per directory. */
  dir: string;
  /**
   * How many checkpoints to keep, newest first. Two lets recovery fall back when the newest is
   * damaged, provided the WAL is truncated only below the oldest kept one.
   */
  keep?: number;
}

/** Defaults of CheckpointStoreOptions. */
export const defaultCheckpointStoreOptions: Required<Omit<CheckpointStoreOptions, 'dir'>> = { keep: 2 };

/** Collaborators of the checkpoint store. */
export interface CheckpointStoreModules {
  /** Reports skipped (damaged) checkpoints and cleaned-up leftovers. Default: silent. */
  logger?: Logger;
}

/** A checkpoint as read back: the WAL seq it includes, and its body. */
export interface Checkpoint {
  seq: bigint;
  data: Uint8Array;
}

const MAGIC = 0x504b_434d; // 'MCKP' read as a little-endian u32
const VERSION = 1;
const HEADER_BYTES = 32;
const NAME = /^(\d{20})\.ckpt$/;
const MAX_SEQ = 0xffff_ffff_ffff_ffffn;
/** Streamed chunks are gathered up to this size per write() call; reads go in chunks of it too. */
const IO_CHUNK_BYTES = 1 << 20;

export class CheckpointStore {
  /** The directory holding the checkpoints. */
  readonly dir: string;
  /** How many checkpoints are kept. */
  readonly keep: number;
  private readonly log: Logger;
  /** Writes run one at a time (they share temp names and prune each other's predecessors). */
  private writing: Promise<unknown> = Promise.resolve();

  private constructor(dir: string, keep: number, log: Logger) {
    this.dir = dir;
    this.keep = keep;
    this.log = log;
  }

  /** Opens the store in `opts.dir`, deleting temp files left by a write that crashed. */
  static async create(
    opts: CheckpointStoreOptions,
    modules: CheckpointStoreModules = {},
  ): Promise<CheckpointStore> {
    const keep = opts.keep ?? defaultCheckpointStoreOptions.keep;
    if (!Number.isSafeInteger(keep) || keep < 1) {
      throw new StorageError(StorageErrorCode.BadArgument, `keep must be an integer >= 1, got ${keep}`, {
        keep,
      });
    }
    const log = modules.logger ?? silentLogger;
    await mkdir(opts.dir, { recursive: true });
    let removed = 0;
    for (const name of await readdir(opts.dir)) {
      if (name.endsWith('.ckpt.tmp')) {
        await rm(join(opts.dir, name), { force: true });
        log.warn('removed an unfinished checkpoint', { dir: opts.dir, file: name });
        removed++;
      }
    }
    if (removed > 0) await syncDir(opts.dir);
    return new CheckpointStore(opts.dir, keep, log);
  }

  /**
   * Seqs of the checkpoint files present, newest first (not validated; see latest()).
   */
  async list(): Promise<bigint[]> {
    const seqs: bigint[] = [];
    for (const name of await readdir(this.dir)) {
      const m = NAME.exec(name);
      if (m !== null) seqs.push(BigInt(m[1]));
    }
    return seqs.sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
  }

  /**
   * Writes the checkpoint for `seq` atomically, then deletes all but the newest `keep`.
   * `data` may be one buffer or a stream of chunks (consumed once, never held whole in
   * memory; the CRC is computed as it goes). A seq below the newest kept one is refused;
   * the same seq replaces it.
   */
  write(seq: bigint, data: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<void> {
    const run = this.writing.then(() => this.writeNow(seq, data));
    this.writing = run.catch(() => {});
    return run;
  }

  private async writeNow(
    seq: bigint,
    data: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<void> {
    if (seq < 0n || seq > MAX_SEQ) {
      throw new StorageError(StorageErrorCode.BadArgument, `a checkpoint seq is a u64, got ${seq}`, { seq });
    }
    const newest = (await this.list())[0];
    if (newest !== undefined && seq < newest) {
      throw new StorageError(
        StorageErrorCode.CheckpointSeqRegress,
        `checkpoint seq ${seq} is below the newest kept checkpoint, ${newest}`,
        { seq, newest },
      );
    }
    const started = performance.now();
    const path = join(this.dir, fileName(seq));
    const tmp = `${path}.tmp`;
    const fh = await open(tmp, 'w');
    let length: number;
    try {
      const body = await writeBody(fh, data);
      length = body.length;
      await writeAll(fh, [encodeHeader(seq, body.length, body.crc)], 0);
      await fh.sync();
    } catch (e) {
      await fh.close();
      await rm(tmp, { force: true });
      throw e;
    }
    await fh.close();
    await rename(tmp, path);
    await syncDir(this.dir);
    const pruned = await this.prune();
    this.log.info('checkpoint written', {
      dir: this.dir,
      seq,
      bytes: length,
      pruned,
      ms: Math.round(performance.now() - started),
    });
  }

  /** Deletes all but the newest `keep` checkpoints; returns how many went. */
  private async prune(): Promise<number> {
    const old = (await this.list()).slice(this.keep);
    for (const seq of old) await rm(join(this.dir, fileName(seq)), { force: true });
    if (old.length > 0) await syncDir(this.dir);
    return old.length;
  }

  /**
   * The newest checkpoint that passes its checks (header, length, body CRC), or undefined
   * when there is none. A damaged newer one is skipped with a warning.
   */
  async latest(): Promise<Checkpoint | undefined> {
    for (const seq of await this.list()) {
      const file = join(this.dir, fileName(seq));
      try {
        return await readCheckpoint(file, seq);
      } catch (e) {
        if (isStorageError(e, StorageErrorCode.CheckpointCorrupt)) {
          this.log.warn('skipping a damaged checkpoint', { ...e.meta });
        } else if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw e; // ENOENT: pruned by a concurrent write, which left a newer one.
        }
      }
    }
    return undefined;
  }
}

function fileName(seq: bigint): string {
  return `${seq.toString().padStart(20, '0')}.ckpt`;
}

function encodeHeader(seq: bigint, length: number, bodyCrc: number): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  h.writeUInt32LE(MAGIC, 0);
  h.writeUInt32LE(VERSION, 4);
  h.writeBigUInt64LE(seq, 8);
  h.writeBigUInt64LE(BigInt(length), 16);
  h.writeUInt32LE(bodyCrc, 24);
  h.writeUInt32LE(crc32c(h, 0, 0, 28), 28);
  return h;
}

/** Writes the body after the header's place; returns its length and CRC. */
async function writeBody(
  fh: FileHandle,
  data: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): Promise<{ length: number; crc: number }> {
  if (data instanceof Uint8Array) {
    await writeAll(fh, [data], HEADER_BYTES);
    return { length: data.length, crc: crc32c(data) };
  }
  // Small chunks are gathered so that a producer yielding tiny pieces does not cost a syscall
  // each; large ones go straight through. Each chunk is written before the next is pulled, so
  // a producer may reuse its buffer.
  let pos = HEADER_BYTES;
  let crc = 0;
  const gather = Buffer.allocUnsafe(IO_CHUNK_BYTES);
  let gathered = 0;
  const drain = async () => {
    if (gathered === 0) return;
    pos += await writeAll(fh, [gather.subarray(0, gathered)], pos);
    gathered = 0;
  };
  for await (const chunk of data) {
    crc = crc32c(chunk, crc);
    if (gathered + chunk.length <= IO_CHUNK_BYTES) {
      gather.set(chunk, gathered);
      gathered += chunk.length;
    } else {
      await drain();
      if (chunk.length < IO_CHUNK_BYTES) {
        gather.set(chunk, 0);
        gathered = chunk.length;
      } else {
        pos += await writeAll(fh, [chunk], pos);
      }
    }
  }
  await drain();
  return { length: pos - HEADER_BYTES, crc };
}

async function readCheckpoint(file: string, seq: bigint): Promise<Checkpoint> {
  const bad = (reason: string, meta: Record<string, unknown> = {}) =>
    new StorageError(StorageErrorCode.CheckpointCorrupt, `${reason} in ${file}`, {
      file,
      seq,
      reason,
      ...meta,
    });
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const h = Buffer.alloc(HEADER_BYTES);
    if (size < HEADER_BYTES || !(await readExactly(fh, h, 0, HEADER_BYTES, 0))) {
      throw bad('file shorter than the checkpoint header', { size });
    }
    if (h.readUInt32LE(0) !== MAGIC) throw bad('not a checkpoint (bad magic)');
    const headerCrc = crc32c(h, 0, 0, 28);
    if (h.readUInt32LE(28) !== headerCrc) {
      throw bad('header crc mismatch', { stored: h.readUInt32LE(28), computed: headerCrc });
    }
    const version = h.readUInt32LE(4);
    if (version !== VERSION) throw bad('unsupported checkpoint version', { version });
    const headerSeq = h.readBigUInt64LE(8);
    if (headerSeq !== seq) throw bad('header seq does not match the file name', { headerSeq });
    const length = h.readBigUInt64LE(16);
    if (length !== BigInt(size - HEADER_BYTES)) {
      throw bad(length > BigInt(size - HEADER_BYTES) ? 'body truncated' : 'bytes after the body', {
        expectedLength: length,
        actualLength: size - HEADER_BYTES,
      });
    }
    const body = Buffer.allocUnsafe(size - HEADER_BYTES);
    let crc = 0;
    for (let off = 0; off < body.length; off += IO_CHUNK_BYTES) {
      const n = Math.min(IO_CHUNK_BYTES, body.length - off);
      if (!(await readExactly(fh, body, off, n, HEADER_BYTES + off)))
        throw bad('file shrank while being read');
      crc = crc32c(body, crc, off, off + n);
    }
    const stored = h.readUInt32LE(24);
    if (crc !== stored) throw bad('body crc mismatch', { stored, computed: crc });
    return { seq, data: new Uint8Array(body.buffer, body.byteOffset, body.length) };
  } finally {
    await fh.close();
  }
}
