/**
 * The miner's chain on disk: every block it adopts (sealed here or taken from a peer), in
 * adoption order, as the peer message that re-executes it (header, transactions, witness). A
 * restarted miner re-executes them from genesis, as a peer would, and continues where it
 * stopped. One file of frames `[u32 length][u32 crc32][Block protobuf]`; a torn or corrupt tail
 * (a crash mid-append) is cut on open, and anything it lost comes back from peers (GetBlocks).
 *
 * Compaction (`compact`): `checkpoint` (one frame of RLP `[header, td, top layer, code]`, see
 * MinerCheckpoint) is written for a held block, then the log is rewritten with the held blocks
 * after it, each through a temporary file, a rename and a sync of the directory. A restart
 * starts the miner at the checkpoint and re-executes only the log; a crash between the two
 * renames leaves the old log, whose blocks up to the checkpoint are skipped.
 */

import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { type Logger, silentLogger } from '@monsoon/edge';
import { ExecutionError, ExecutionErrorCode } from '@monsoon/execution';
import { minerPb, type PeerBlock, peerBlockFromProto, peerBlockToProto } from '@monsoon/protocol';
import { bigintToBytes, bytesToBigint, rlpDecode, rlpEncode, syncDir } from '@monsoon/util';
import { FRAME_HEADER, frameOf, readFrame } from './frames.js';
import type { MinerCheckpoint } from './miner.js';

export interface BlockLogOptions {
  /** The data directory; the log is `blocks.log` in it. */
  dataDir: string;
  /** fdatasync after every block (default) or leave it to the OS. */
  fsync: 'always' | 'none';
}

function blockFrame(b: PeerBlock): Buffer {
  return frameOf(minerPb.Block.encode(peerBlockToProto(b)).finish());
}

/**
 * Writes `frames` to `path` through a temporary file and a rename: the file synced before it,
 * the directory after it (`sync`), so a crash finds the new file or the old one, and once this
 * resolves never the old one again.
 */
async function replaceFile(
  path: string,
  frames: Iterable<Uint8Array>,
  sync: (dir: string) => Promise<void>,
): Promise<void> {
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    let at = 0;
    for (const f of frames) {
      await fh.write(f, 0, f.length, at);
      at += f.length;
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  await sync(dirname(path));
}

/** The checkpoint in `path`, or undefined when there is none; a damaged one is an error. */
async function readCheckpoint(path: string): Promise<MinerCheckpoint | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const bad = (why: string): never => {
    throw new ExecutionError(ExecutionErrorCode.BadBlock, `${path}: expected a checkpoint, found ${why}`, {
      path,
    });
  };
  if (bytes.length < FRAME_HEADER) bad(`${bytes.length} bytes`);
  const payload = bytes.subarray(FRAME_HEADER, FRAME_HEADER + bytes.readUInt32LE(0));
  if (payload.length !== bytes.length - FRAME_HEADER || crc32(payload) !== bytes.readUInt32LE(4))
    bad('a frame whose length or checksum does not match');
  const v = rlpDecode(payload);
  if (!Array.isArray(v) || v.length !== 4 || !Array.isArray(v[3]))
    return bad('no [header, td, accounts, code] list');
  const [headerRlp, td, accounts, code] = v as [Uint8Array, Uint8Array, Uint8Array, Uint8Array[]];
  return { headerRlp, td: bytesToBigint(td), accounts, code };
}

/**
 * The checkpoint a compacted chain log in `dataDir` follows, or undefined (none yet: the log
 * starts at genesis). A miner started from it (Miner.create's `from`) never builds the genesis.
 */
export function readChainCheckpoint(dataDir: string): Promise<MinerCheckpoint | undefined> {
  return readCheckpoint(join(dataDir, 'checkpoint'));
}

export class BlockLog {
  /** Appends run one after another: a later frame never lands before an earlier one is written. */
  private tail: Promise<void> = Promise.resolve();

  private constructor(
    private fh: FileHandle,
    private readonly opts: BlockLogOptions,
    private size: number,
    /** Blocks in the log (since its last compaction), those still being appended included. */
    public count: number,
    private readonly sync: (dir: string) => Promise<void>,
  ) {}

  /**
   * Opens (or creates) the log: the log to append to, how many blocks it holds, and `blocks()`,
   * which reads them back one frame at a time, oldest first. Nothing is held whole: a log grows
   * with the chain (~1-3 MiB a block under the main job's load), and reading it into one buffer
   * made a restart's memory grow with it, then fail outright past 2 GiB (readFile's limit).
   * Frames are checked on open and a torn tail is cut; a frame that passes its checksum and does
   * not decode fails `blocks()`. `sync` fsyncs a directory (injected by tests): after the log is
   * created, and after each of a compaction's renames.
   */
  static async open(
    opts: Partial<BlockLogOptions> & { dataDir: string },
    log: Logger = silentLogger,
    sync: (dir: string) => Promise<void> = syncDir,
  ): Promise<{
    log: BlockLog;
    count: number;
    blocks: () => AsyncGenerator<PeerBlock>;
    /** The block the log's blocks follow, once it was compacted (absent: genesis). */
    checkpoint: MinerCheckpoint | undefined;
  }> {
    const o: BlockLogOptions = { fsync: 'always', ...opts };
    await mkdir(o.dataDir, { recursive: true });
    const path = join(o.dataDir, 'blocks.log');
    const fh = await open(path, 'r+').catch(async (e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
      const created = await open(path, 'w+');
      // The new log's entry, or a crash could lose the file with every block appended to it.
      await sync(o.dataDir);
      return created;
    });
    const total = (await fh.stat()).size;
    const frameAt = (at: number) => readFrame(fh, at, total);
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
    const checkpoint = await readChainCheckpoint(o.dataDir);
    return { log: new BlockLog(fh, o, end, count, sync), count, blocks, checkpoint };
  }

  /** Appends a block; resolves once it is written (and synced, under fsync 'always'). */
  append(b: PeerBlock): Promise<void> {
    const frame = blockFrame(b);
    this.count++;
    const run = this.tail.then(async () => {
      await this.fh.write(frame, 0, frame.length, this.size);
      this.size += frame.length;
      if (this.opts.fsync === 'always') await this.fh.datasync();
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * Compacts the log: `checkpoint` replaces everything up to its block, and the log keeps
   * `after` (the held blocks after it, parents first), once `ready` resolves (what must be
   * durable before blocks leave the log: the miner's header archive). Appends wait for it.
   */
  compact(checkpoint: MinerCheckpoint, after: readonly PeerBlock[], ready?: Promise<void>): Promise<void> {
    const run = this.tail.then(async () => {
      await ready;
      const dir = this.opts.dataDir;
      const cp = rlpEncode([
        checkpoint.headerRlp,
        bigintToBytes(checkpoint.td),
        checkpoint.accounts,
        [...checkpoint.code],
      ]);
      await replaceFile(join(dir, 'checkpoint'), [frameOf(cp)], this.sync);
      const frames = after.map(blockFrame);
      await this.fh.close();
      const path = join(dir, 'blocks.log');
      await replaceFile(path, frames, this.sync);
      this.fh = await open(path, 'r+');
      this.size = frames.reduce((n, f) => n + f.length, 0);
    });
    // Appends queued before this are among `after` (held blocks); those queued after follow it.
    this.count = after.length;
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Waits for the appends in progress, then closes the file. */
  async close(): Promise<void> {
    await this.tail;
    await this.fh.close();
  }
}
