/**
 * A miner serves its canonical chain's headers from block 0 (GetHeaders) after it has forgotten
 * the blocks (issue 15: a client that starts late checks its first block's ancestry down to
 * genesis). Headers of forgotten blocks go to a header archive, `headers.log` with a data
 * directory: they survive a restart from a compacted chain log, a replay of the log does not
 * archive them twice, a torn tail is cut, and a gap is refused. In process, over gRPC on 127.0.0.1.
 */
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { HeaderArchive, Miner, MinerNode } from '@monsoon/miner';
import { decodeHeader, headerHash, MinerServiceClient, type minerPb } from '@monsoon/protocol';
import { until } from '@monsoon/test-utils';
import { genesis, minerHead, rules } from '../helpers/minerProcess.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'monsoon-headers-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Until the node announces block `n` (with a chain log, once it is logged). */
const announced = (address: string, n: bigint) =>
  until(async () => (await minerHead(address)).number === n, {
    what: `block #${n} announced`,
    timeoutMs: 30_000,
  });

/** GetHeaders(from, to) from the node at `address`: the headers' hashes (hex), or the call's error. */
async function headers(
  address: string,
  from: bigint,
  to: bigint,
): Promise<{ hashes: string[]; chunks: number }> {
  const c = new MinerServiceClient(address, credentials.createInsecure());
  try {
    return await new Promise((resolve, reject) => {
      const hashes: string[] = [];
      let chunks = 0;
      const s = c.getHeaders({ fromNumber: from, toNumber: to });
      s.on('data', (m: minerPb.HeadersChunk) => {
        chunks++;
        for (const rlp of m.headers) {
          const h = decodeHeader(rlp);
          expect(h.number).toBe(from + BigInt(hashes.length));
          hashes.push(toHex(headerHash(h, keccak)));
        }
      });
      s.on('error', reject);
      s.on('end', () => resolve({ hashes, chunks }));
    });
  } finally {
    c.close();
  }
}

describe("a miner's headers of forgotten blocks", () => {
  it('are served from block 0 after the blocks are gone, in memory and from headers.log across a restart', async () => {
    const dataDir = join(dir, 'node');
    const start = async (withDir: boolean) =>
      MinerNode.start(await Miner.create(genesis, { rules, keepBlocks: 4 }), {
        blockIntervalMs: 0,
        ...(withDir ? { dataDir, logCompactAfter: 8 } : {}),
      });
    for (const withDir of [false, true]) {
      const a = await start(withDir);
      const chain = [toHex(a.miner.head.hash)];
      for (let i = 0; i < 300; i++) chain.push(toHex((await a.sealNow()).block.hash));
      expect(a.miner.blockCount).toBeLessThanOrEqual(5);
      await announced(a.address, 300n);
      // All of it: archived (0..~295) and held, 256 a message.
      const all = await headers(a.address, 0n, 300n);
      expect(all.hashes).toEqual(chain);
      expect(all.chunks).toBe(2);
      expect((await headers(a.address, 290n, 298n)).hashes).toEqual(chain.slice(290, 299));
      expect((await headers(a.address, 7n, 7n)).hashes).toEqual([chain[7]]);
      await expect(headers(a.address, 5n, 301n)).rejects.toThrow(/headers #5..#301: the head is #300/);
      await a.close();
      if (!withDir) continue;

      // Restarted from the compacted log (a checkpoint far above block 0): the archive still has
      // every header, once (the log's replay forgets blocks it already archived).
      const size = (await readFile(join(dataDir, 'headers.log'))).length;
      const b = await start(true);
      expect(b.miner.head.header.number).toBe(300n);
      expect((await headers(b.address, 0n, 300n)).hashes).toEqual(chain);
      for (let i = 0; i < 3; i++) chain.push(toHex((await b.sealNow()).block.hash));
      await announced(b.address, 303n);
      expect((await headers(b.address, 0n, 303n)).hashes).toEqual(chain);
      await b.close();
      expect((await readFile(join(dataDir, 'headers.log'))).length).toBeGreaterThan(size);
    }
  }, 120_000);

  it('cuts a torn tail on open and refuses a gap', async () => {
    const dataDir = join(dir, 'archive');
    const a = await HeaderArchive.open(dataDir, true);
    a.append(0n, [Uint8Array.of(1), Uint8Array.of(2, 2)]);
    a.append(1n, [Uint8Array.of(2, 2), Uint8Array.of(3, 3, 3)]); // #1 again: skipped
    expect(() => a.append(5n, [Uint8Array.of(9)])).toThrow(/#5 given, #3 expected next/);
    await a.close();
    await appendFile(join(dataDir, 'headers.log'), Buffer.from([9, 0, 0, 0, 1, 2]));
    const b = await HeaderArchive.open(dataDir, true);
    expect(b.next).toBe(3n);
    expect([...(await b.read(2n))]).toEqual([3, 3, 3]);
    await expect(b.read(3n)).rejects.toThrow(/no #3 \(it holds #0..#2\)/);
    await b.close();
    const mem = HeaderArchive.inMemory();
    mem.append(0n, [Uint8Array.of(7)]);
    expect([...(await mem.read(0n))]).toEqual([7]);
  });
});
