/**
 * The headers of the canonical blocks a miner has forgotten (fallen out of its window), from
 * block 0 up, so a client that started at the head can check its first block's ancestry down
 * to genesis (GetHeaders) after the blocks themselves are gone. A header is ~540 bytes; with a
 * data directory they live in `headers.log` (frames `[u32 length][u32 crc32][header RLP]`, one
 * per block number in order; a torn or corrupt tail is cut on open) and only their offsets in
 * memory, else in memory.
 *
 * Appends are idempotent by number: a restarted miner re-executing its log forgets the same
 * blocks again, and those already archived are skipped. The window is deeper than any reorg a
 * miner takes, so a forgotten canonical block stays canonical.
 */
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { type Logger, silentLogger } from '@monsoon/edge';
import { FRAME_HEADER, frameOf, readFrame } from './frames.js';

export class HeaderArchive {
  /** Offsets of each header's frame in the file (file mode). */
  private readonly offsets: number[] = [];
  /** The headers themselves (memory mode). */
  private readonly held: Uint8Array[] = [];
  private end = 0;
  private tail: Promise<void> = Promise.resolve();

  private constructor(
    private readonly fh: FileHandle | undefined,
    private readonly fsync: boolean,
  ) {}

  /** In memory (a miner without a data directory). */
  static inMemory(): HeaderArchive {
    return new HeaderArchive(undefined, false);
  }

  /** `headers.log` in `dataDir`, its intact frames indexed and a bad tail cut. */
  static async open(dataDir: string, fsync: boolean, log: Logger = silentLogger): Promise<HeaderArchive> {
    await mkdir(dataDir, { recursive: true });
    const fh = await open(join(dataDir, 'headers.log'), 'a+');
    const a = new HeaderArchive(fh, fsync);
    const { size } = await fh.stat();
    let at = 0;
    for (let f = await readFrame(fh, at, size); 'payload' in f; f = await readFrame(fh, at, size)) {
      a.offsets.push(at);
      at += FRAME_HEADER + f.payload.length;
    }
    if (at < size) {
      log.warn('header archive: a torn or corrupt tail cut', { kept: a.offsets.length, bytes: size - at });
      await fh.truncate(at);
    }
    a.end = at;
    return a;
  }

  /** The number of the next header it takes (headers 0 .. next-1 are archived). */
  get next(): bigint {
    return BigInt(this.fh === undefined ? this.held.length : this.offsets.length);
  }

  /**
   * Archives forgotten canonical headers, oldest first (`number` is the first one's): those it
   * holds are skipped; a gap above what it holds is refused (a miner restarted from a checkpoint
   * with no archive beside it cannot fill it).
   */
  append(number: bigint, headers: readonly Uint8Array[]): void {
    const skip = Number(this.next - number);
    if (skip < 0) throw new RangeError(`header archive: #${number} given, #${this.next} expected next`);
    const fresh = headers.slice(skip);
    if (fresh.length === 0) return;
    if (this.fh === undefined) {
      for (const h of fresh) this.held.push(new Uint8Array(h));
      return;
    }
    const frames = fresh.map(frameOf);
    for (const f of frames) {
      this.offsets.push(this.end);
      this.end += f.length;
    }
    const fh = this.fh;
    const at = this.end - frames.reduce((n, f) => n + f.length, 0);
    this.tail = this.tail.then(async () => {
      await fh.write(Buffer.concat(frames), 0, undefined, at);
      if (this.fsync) await fh.datasync();
    });
  }

  /** Resolves once every header appended so far is written (and synced). */
  flushed(): Promise<void> {
    return this.tail;
  }

  /** Header `n`'s RLP (it must be below `next`). */
  async read(n: bigint): Promise<Uint8Array> {
    if (n < 0n || n >= this.next)
      throw new RangeError(`header archive: no #${n} (it holds #0..#${this.next - 1n})`);
    if (this.fh === undefined) return this.held[Number(n)]!;
    await this.tail;
    const f = await readFrame(this.fh, this.offsets[Number(n)]!, this.end);
    if ('defect' in f) throw new RangeError(`header archive: #${n}: ${f.defect}`);
    return f.payload;
  }

  async close(): Promise<void> {
    await this.tail;
    await this.fh?.close();
  }
}
