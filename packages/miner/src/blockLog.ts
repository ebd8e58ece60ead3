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
 * renames leaves the old log, whose blocks up to the checkpoint are skipped. Appends go on to
 * the old log while the new one is written (head subscribers hear of a block once it is
 * appended: a compaction that held appends stalled every client for as long as it took); they
 * wait only for its last step, which copies what was appended meanwhile and swaps the files.
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
  /** The compaction in progress: it ends when `done` settles; `frames`, what was appended since it began. */
  private compacting: { readonly frames: Buffer[]; done: Promise<void> } | undefined;
  private closed = false;

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
    // Written to the old log now, and to the new one in the compaction's last step.
    this.compacting?.frames.push(frame);
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
   * durable before blocks leave the log: the miner's header archive). Appends go on meanwhile
   * and wait only for the last step; a compaction asked for while one runs is that one.
   */
  compact(checkpoint: MinerCheckpoint, after: readonly PeerBlock[], ready?: Promise<void>): Promise<void> {
    if (this.closed) return Promise.reject(new Error('chain log: compact after close'));
    if (this.compacting !== undefined) return this.compacting.done;
    const state: { frames: Buffer[]; done: Promise<void> } = { frames: [], done: Promise.resolve() };
    this.compacting = state;
    // Appends asked for before this are among `after` (held blocks); those after it follow them.
    this.count = after.length;
    state.done = this.rewrite(checkpoint, after, ready, state.frames).finally(() => {
      if (this.compacting === state) this.compacting = undefined;
    });
    return state.done;
  }

  private async rewrite(
    checkpoint: MinerCheckpoint,
    after: readonly PeerBlock[],
    ready: Promise<void> | undefined,
    appended: Buffer[],
  ): Promise<void> {
    await ready;
    const dir = this.opts.dataDir;
    const cp = rlpEncode([
      checkpoint.headerRlp,
      bigintToBytes(checkpoint.td),
      checkpoint.accounts,
      [...checkpoint.code],
    ]);
    await replaceFile(join(dir, 'checkpoint'), [frameOf(cp)], this.sync);
    const path = join(dir, 'blocks.log');
    const tmp = `${path}.tmp`;
    const out = await open(tmp, 'w');
    let at = 0;
    const write = async (f: Uint8Array) => {
      await out.write(f, 0, f.length, at);
      at += f.length;
    };
    try {
      // Encoded one at a time as written: the event loop turns between blocks.
      for (const b of after) await write(blockFrame(b));
      await out.sync();
      // The last step, after the appends queued so far: what they appended meanwhile, then the
      // swap. Appends asked for from here on go to the new log (this.compacting is cleared).
      this.compacting = undefined;
      const swap = this.tail.then(async () => {
        for (const f of appended) await write(f);
        await out.sync();
        await out.close();
        await this.fh.close();
        try {
          await rename(tmp, path);
          this.size = at;
        } finally {
          // The new log, or the old one (whole, appends included) if the rename failed.
          this.fh = await open(path, 'r+');
        }
        await this.sync(dir);
      });
      this.tail = swap.catch(() => undefined);
      await swap;
    } finally {
      // Closed by the swap unless it failed before (or never ran).
      await out.close().catch(() => undefined);
    }
  }

  /** Waits for the appends and the compactions in progress (one may start another), then closes the file. */
  async close(): Promise<void> {
    while (this.compacting !== undefined) await this.compacting.done.catch(() => undefined);
    this.closed = true;
    await this.tail;
    await this.fh.close();
  }
}
