/**
 * The addon's shared-memory half and its error paths: a region file created by one mapping is
 * read through another (what a client on the same host sees), and every misuse — a bad or closed
 * handle, a file too small or missing, a header that is not a region — throws a typed RdmaError
 * instead of crashing the process. A closed mapping's bytes read as empty, never as freed memory.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { keccak } from '@monsoon/keccak';
import {
  isRdmaError,
  loadNative,
  planRegion,
  RdmaErrorCode,
  RegionReader,
  RegionWriter,
  SharedRegion,
} from '@monsoon/rdma';
import { rejection, tempDir, thrown } from '@monsoon/test-utils';

const bin = (b: Uint8Array) => Buffer.from(b).toString('latin1');

describe('SharedRegion (the addon)', () => {
  let dir: { dir: string; remove: () => Promise<void> };
  beforeAll(async () => {
    dir = await tempDir('monsoon-rdma-');
  });
  afterAll(() => dir.remove());

  it('is built (npm run build:native)', () => {
    const l = loadNative();
    expect(l.error).toBeUndefined();
  });

  it('a node written through one mapping is read through another, verified', async () => {
    const path = join(dir.dir, 'a.region');
    const g = planRegion(100, 4096, 42n);
    const w = await SharedRegion.create(path, g.totalBytes);
    const writer = RegionWriter.create(w.bytes, g);
    const node = new TextEncoder().encode('a node encoding that is longer than thirty-two bytes');
    const hash = keccak.keccak256(node);
    expect(writer.put(bin(hash), node)).toBe(true);
    writer.advance();
    const r = await SharedRegion.map(path);
    const reader = new RegionReader(r.bytes);
    expect(reader.geometry.generation).toBe(42n);
    expect(reader.epoch).toBe(1n);
    expect(reader.node(hash)).toEqual(node);
    // A write through the writable mapping shows in the read-only one.
    writer.remove(bin(hash));
    expect(reader.node(hash)).toBeUndefined();
    r.close();
    w.close();
  });

  it('a closed mapping reads as empty; closing twice or a bad handle is BAD_HANDLE', async () => {
    const path = join(dir.dir, 'b.region');
    const w = await SharedRegion.create(path, 8192);
    const view = w.bytes;
    w.close();
    expect(view.length).toBe(0);
    expect(view[10]).toBeUndefined();
    const binding = loadNative().binding!;
    const bad = (f: () => void) => (thrown(f) as { code?: string } | undefined)?.code;
    expect(bad(() => binding.unmap(w.handle))).toBe(RdmaErrorCode.BadHandle);
    expect(bad(() => binding.unmap(987654))).toBe(RdmaErrorCode.BadHandle);
    expect(bad(() => binding.unmap(-1))).toBe(RdmaErrorCode.BadHandle);
    expect(bad(() => (binding.unmap as (x: unknown) => void)('x'))).toBe(RdmaErrorCode.BadHandle);
    w.close(); // idempotent on the wrapper
  });

  it('a missing file, a file too small, and a non-region are typed errors', async () => {
    expect(
      isRdmaError(await rejection(SharedRegion.map(join(dir.dir, 'none.region'))), RdmaErrorCode.NotFound),
    ).toBe(true);
    const small = join(dir.dir, 'small.region');
    await writeFile(small, Buffer.alloc(100));
    const m = await SharedRegion.map(small);
    expect(() => new RegionReader(m.bytes)).toThrow(/RDMA_REGION_TOO_SMALL/);
    m.close();
    await expect(loadNative().binding!.mapFile(small, false, 4096)).rejects.toMatchObject({
      code: RdmaErrorCode.RegionTooSmall,
    });
    const empty = join(dir.dir, 'empty.region');
    await writeFile(empty, Buffer.alloc(0));
    expect(isRdmaError(await rejection(SharedRegion.map(empty)), RdmaErrorCode.RegionTooSmall)).toBe(true);
    const junk = join(dir.dir, 'junk.region');
    await writeFile(junk, Buffer.alloc(8192, 0x5a));
    const j = await SharedRegion.map(junk);
    expect(() => new RegionReader(j.bytes)).toThrow(/RDMA_BAD_REGION.*MONSRGN1/);
    j.close();
    // A header that claims more than is mapped.
    const g = planRegion(1000, 1 << 20, 1n);
    const cut = join(dir.dir, 'cut.region');
    const full = new Uint8Array(g.totalBytes);
    RegionWriter.create(full, g);
    await writeFile(cut, full.subarray(0, g.arenaOffset));
    const c = await SharedRegion.map(cut);
    expect(() => new RegionReader(c.bytes)).toThrow(/RDMA_REGION_TOO_SMALL.*header says it spans/);
    c.close();
    expect(loadNative().binding!.mappings()).toBe(0);
  });

  it('bad arguments to the addon throw typed errors', async () => {
    const b = loadNative().binding!;
    await expect(
      Promise.resolve().then(() => (b.mapFile as (...a: unknown[]) => unknown)(1, 2, 3)),
    ).rejects.toMatchObject({
      code: RdmaErrorCode.BadArgument,
    });
    expect(() => b.mapFile('/x', false, -5)).toThrow(
      expect.objectContaining({ code: RdmaErrorCode.BadArgument }),
    );
  });
});
