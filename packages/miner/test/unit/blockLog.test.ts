/**
 * The miner's chain log is read back one frame at a time (a log grows with the chain: read
 * whole, a restart's memory grew with it and failed past readFile's 2 GiB): `open` checks the
 * frames and cuts a torn tail, `blocks()` decodes them lazily, oldest first. The directory is
 * synced after the log is created and after each rename of a compaction (crash order).
 */
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, describe, expect, it } from '@jest/globals';
import { BlockLog } from '@monsoon/miner';
import type { PeerBlock } from '@monsoon/protocol';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const block = (i: number): PeerBlock => ({
  headerRlp: Uint8Array.of(0xc1, i),
  transactions: [Uint8Array.of(i, 1), Uint8Array.of(i, 2)],
  bag: [new Uint8Array(100).fill(i)],
});

async function collect(g: AsyncGenerator<PeerBlock>): Promise<PeerBlock[]> {
  const out: PeerBlock[] = [];
  for await (const b of g) out.push(b);
  return out;
}

describe('BlockLog', () => {
  it('reads back what was appended, frame by frame; a torn tail is cut; an undecodable frame fails the replay', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'monsoon-blocklog-'));
    dirs.push(dataDir);
    const first = await BlockLog.open({ dataDir });
    expect(first.count).toBe(0);
    expect(await collect(first.blocks())).toEqual([]);
    for (let i = 0; i < 20; i++) await first.log.append(block(i));
    await first.log.close();

    const path = join(dataDir, 'blocks.log');
    const whole = (await readFile(path)).length;
    await appendFile(path, Buffer.from([200, 0, 0, 0, 9, 9, 9, 9, 1]));
    const again = await BlockLog.open({ dataDir });
    expect(again.count).toBe(20);
    expect((await readFile(path)).length).toBe(whole);
    const read = await collect(again.blocks());
    expect(read.map((b) => b.headerRlp[1])).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(read[7]).toEqual(block(7));
    // Appends go after the last whole frame.
    await again.log.append(block(20));
    await again.log.close();
    const third = await BlockLog.open({ dataDir });
    expect(third.count).toBe(21);
    expect((await collect(third.blocks())).at(-1)).toEqual(block(20));
    await third.log.close();

    // A frame whose checksum holds but whose payload is no block.
    const junk = Buffer.from([0xff, 0xff, 0xff]);
    const frame = Buffer.alloc(8);
    frame.writeUInt32LE(junk.length, 0);
    frame.writeUInt32LE(crc32(junk), 4);
    await writeFile(path, Buffer.concat([frame, junk]));
    const bad = await BlockLog.open({ dataDir });
    expect(bad.count).toBe(1);
    await expect(collect(bad.blocks())).rejects.toThrow(
      /at byte 0: expected a block, found a frame that does not decode/,
    );
    await bad.log.close();
  });

  it("syncs the directory once the log is created and after each of a compaction's renames", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'monsoon-blocklog-'));
    dirs.push(dataDir);
    // What the directory held at each sync: a rename not yet synced could be lost in a crash.
    const synced: { dir: string; files: string[] }[] = [];
    const sync = async (dir: string) => {
      synced.push({ dir, files: (await readdir(dir)).sort() });
    };
    const opened = await BlockLog.open({ dataDir }, undefined, sync);
    expect(synced).toEqual([{ dir: dataDir, files: ['blocks.log'] }]);
    for (let i = 0; i < 5; i++) await opened.log.append(block(i));
    expect(synced).toHaveLength(1);
    await opened.log.compact(
      { headerRlp: Uint8Array.of(0xc1, 2), td: 3n, accounts: Uint8Array.of(0xc0), code: [] },
      [block(3), block(4)],
    );
    const both = { dir: dataDir, files: ['blocks.log', 'checkpoint'] };
    expect(synced.slice(1)).toEqual([both, both]);
    await opened.log.close();
    // Opening an existing log creates nothing.
    const again = await BlockLog.open({ dataDir }, undefined, sync);
    expect(again.count).toBe(2);
    expect(synced).toHaveLength(3);
    await again.log.close();
  });

  it('appends go on while a compaction rewrites the log, and the new log holds them after the kept blocks', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'monsoon-blocklog-'));
    dirs.push(dataDir);
    const big = (i: number): PeerBlock => ({ ...block(i), bag: [new Uint8Array(200_000).fill(i)] });
    const opened = await BlockLog.open({ dataDir });
    for (let i = 0; i < 40; i++) await opened.log.append(big(i));
    let release = () => {};
    const ready = new Promise<void>((resolve) => {
      release = resolve;
    });
    const cp = { headerRlp: Uint8Array.of(0xc1, 9), td: 10n, accounts: Uint8Array.of(0xc0), code: [] };
    const kept = Array.from({ length: 30 }, (_, i) => big(10 + i));
    let compacted = false;
    const compaction = opened.log.compact(cp, kept, ready).then(() => {
      compacted = true;
    });
    // While the compaction waits (here for `ready`), appends are written: they used to wait for it.
    await opened.log.append(big(40));
    await opened.log.append(big(41));
    expect(compacted).toBe(false);
    // Asked again meanwhile: the same compaction.
    expect(opened.log.compact(cp, [], ready)).toBe(opened.log.compact(cp, kept));
    release();
    // And while it writes the kept blocks (6 MB here), more appends.
    const during = [42, 43, 44].map((i) => opened.log.append(big(i)));
    await Promise.all([compaction, ...during]);
    await opened.log.append(big(45));
    await opened.log.close();

    const again = await BlockLog.open({ dataDir });
    expect(again.checkpoint?.td).toBe(10n);
    const read = await collect(again.blocks());
    // The kept blocks, then every append since the compaction began, once each and in order.
    expect(read.map((b) => b.headerRlp[1])).toEqual(Array.from({ length: 36 }, (_, i) => 10 + i));
    expect(read[35]).toEqual(big(45));
    expect(again.count).toBe(36);
    await again.log.close();
    expect((await readdir(dataDir)).sort()).toEqual(['blocks.log', 'checkpoint']);
  });
});
