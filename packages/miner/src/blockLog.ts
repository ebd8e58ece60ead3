/**
 * The miner's chain on disk: every block it adopts (sealed here or taken from a peer), in
 * adoption order, as the peer message that re-executes it (header, transactions, witness). A
 * restarted miner re-executes them from genesis, as a peer would, and continues where it
 * stopped. One file of frames `[u32 length][u32 crc32][Block protobuf]`; a torn or corrupt tail
 * (a crash mid-append) is cut on open, and anything it lost comes back from peers (GetBlocks).
 */

import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readFile } from 'node:fs/promises';
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

  /** Opens (or creates) the log: the blocks it holds, oldest first, and the log to append to. */
  static async open(
    opts: Partial<BlockLogOptions> & { dataDir: string },
    log: Logger = silentLogger,
  ): Promise<{ log: BlockLog; blocks: PeerBlock[] }> {
    const o: BlockLogOptions = { fsync: 'always', ...opts };
    await mkdir(o.dataDir, { recursive: true });
    const path = join(o.dataDir, 'blocks.log');
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      bytes = Buffer.alloc(0);
    }
    const blocks: PeerBlock[] = [];
    let at = 0;
    let defect: string | undefined;
    while (at < bytes.length) {
      if (bytes.length - at < FRAME_HEADER) {
        defect = `a frame header of ${bytes.length - at} bytes`;
        break;
      }
      const len = bytes.readUInt32LE(at);
      const crc = bytes.readUInt32LE(at + 4);
      if (bytes.length - at - FRAME_HEADER < len) {
        defect = `a frame of ${len} bytes with ${bytes.length - at - FRAME_HEADER} left`;
        break;
      }
      const payload = bytes.subarray(at + FRAME_HEADER, at + FRAME_HEADER + len);
      if (crc32(payload) !== crc) {
        defect = 'a frame whose checksum does not match';
        break;
      }
      try {
        blocks.push(peerBlockFromProto(minerPb.Block.decode(payload)));
      } catch (e) {
        throw new ExecutionError(
          ExecutionErrorCode.BadBlock,
          `${path} at byte ${at}: expected a block, found a frame that does not decode (${(e as Error).message})`,
          { path, offset: at },
        );
      }
      at += FRAME_HEADER + len;
    }
    const fh = await open(path, bytes.length === 0 ? 'w+' : 'r+');
    if (defect !== undefined) {
      // Only an append can be torn, and appends only ever go at the end.
      await fh.truncate(at);
      await fh.sync();
      log.warn('block log: cut a torn tail', {
        path,
        offset: at,
        bytesCut: bytes.length - at,
        found: defect,
      });
    }
    return { log: new BlockLog(fh, o, at), blocks };
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
