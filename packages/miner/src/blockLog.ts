/**
 * The miner's chain on disk: every block it adopts (sealed here or taken from a peer), in
 * adoption order, as the peer message that re-executes it (header, transactions, witness). A
 * restarted miner re-executes them from genesis, as a peer would, and continues where it
 * stopped. One file of frames `[u32 length][u32 crc32][Block protobuf]`; a torn or corrupt tail
 * (a crash mid-append) is cut on open, and anything it lost comes back from peers (GetBlocks).
 */

import type { FileHandle } from 'node:fs/promises';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { type Logger, silentLogger } from '@monsoon/edge';
import { ExecutionError, ExecutionErrorCode } from '@monsoon/execution';
import { minerPb, type PeerBlock, peerBlockFromProto, peerBlockToProto } from '@monsoon/protocol';

export interface BlockLogOptions {
  /** The data directory; the log is `blocks.log` in it. */
  dataDir: string;
  /** fdatasync after every block (default) or leave it to the OS. */
  fsync: 'always' | 'none';
}

const FRAME_HEADER = 8;

export class BlockLog {
  /** Appends run one after another: a later frame never lands before an earlier one is written. */
  private tail: Promise<void> = Promise.resolve();

  private constructor(
    private readonly fh: FileHandle,
    private readonly opts: BlockLogOptions,
    private size: number,
  ) {}

  /**
   * Opens (or creates) the log: the log to append to, how many blocks it holds, and `blocks()`,
   * which reads them back one frame at a time, oldest first. Nothing is held whole: a log grows
   * with the chain (~1-3 MiB a block under the main job's load), and reading it into one buffer
   * made a restart's memory grow with it, then fail outright past 2 GiB (readFile's limit).
   * Frames are checked on open and a torn tail is cut; a frame that passes its checksum and does
   * not decode fails `blocks()`.
   */
  static async open(
    opts: Partial<BlockLogOptions> & { dataDir: string },
    log: Logger = silentLogger,
  ): Promise<{ log: BlockLog; count: number; blocks: () => AsyncGenerator<PeerBlock> }> {
    const o: BlockLogOptions = { fsync: 'always', ...opts };
    await mkdir(o.dataDir, { recursive: true });
    const path = join(o.dataDir, 'blocks.log');
    const fh = await open(path, 'r+').catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
      return open(path, 'w+');
    });
    const total = (await fh.stat()).size;
    const header = Buffer.alloc(FRAME_HEADER);
    /** The frame at `at`: its payload, or why it is no frame (a torn or corrupt tail). */
    const frameAt = async (at: number): Promise<{ payload: Buffer } | { defect: string }> => {
      if (total - at < FRAME_HEADER) return { defect: `a frame header of ${total - at} bytes` };
      await fh.read(header, 0, FRAME_HEADER, at);
      const len = header.readUInt32LE(0);
      const crc = header.readUInt32LE(4);
      if (total - at - FRAME_HEADER < len) {
        return { defect: `a frame of ${len} bytes with ${total - at - FRAME_HEADER} left` };
      }
      const payload = Buffer.alloc(len);
      await fh.read(payload, 0, len, at + FRAME_HEADER);
      if (crc32(payload) !== crc) return { defect: 'a frame whose checksum does not match' };
      return { payload };
    };
    let at = 0;
    let count = 0;
    let defect: string | undefined;
    while (at < total) {
      const f = await frameAt(at);
      if ('defect' in f) {
        defect = f.defect;
        break;
      }
      at += FRAME_HEADER + f.payload.length;
      count++;
    }
    if (defect !== undefined) {
      // Only an append can be torn, and appends only ever go at the end.
      await fh.truncate(at);
      await fh.sync();
      log.warn('block log: cut a torn tail', { path, offset: at, bytesCut: total - at, found: defect });
    }
    const end = at;
    async function* blocks(): AsyncGenerator<PeerBlock> {
      for (let from = 0; from < end; ) {
        const f = await frameAt(from);
        if ('defect' in f)
          throw new ExecutionError(ExecutionErrorCode.BadBlock, `${path} at byte ${from}: ${f.defect}`);
        let block: PeerBlock;
        try {
          block = peerBlockFromProto(minerPb.Block.decode(f.payload));
        } catch (e) {
          throw new ExecutionError(
            ExecutionErrorCode.BadBlock,
            `${path} at byte ${from}: expected a block, found a frame that does not decode (${(e as Error).message})`,
            { path, offset: from },
          );
        }
        yield block;
        from += FRAME_HEADER + f.payload.length;
      }
    }
    return { log: new BlockLog(fh, o, end), count, blocks };
  }

  /** Appends a block; resolves once it is written (and synced, under fsync 'always'). */
  append(b: PeerBlock): Promise<void> {
    const payload = minerPb.Block.encode(peerBlockToProto(b)).finish();
    const frame = Buffer.alloc(FRAME_HEADER + payload.length);
    frame.writeUInt32LE(payload.length, 0);
    frame.writeUInt32LE(crc32(payload), 4);
    frame.set(payload, FRAME_HEADER);
    const run = this.tail.then(async () => {
      await this.fh.write(frame, 0, frame.length, this.size);
      this.size += frame.length;
      if (this.opts.fsync === 'always') await this.fh.datasync();
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Waits for the appends in progress, then closes the file. */
  async close(): Promise<void> {
    await this.tail;
    await this.fh.close();
  }
}
