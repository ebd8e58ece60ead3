/**
 * A reader racing the writer, in two processes over one shared-memory region: the storage node
 * applies 60 blocks, sweeping after every pruned version and reusing freed space at once (no
 * grace period: the harshest the writer can be), while a forked reader walks the newest versions
 * (some of them already pruned and their slots reused) as fast as it can. A completed walk must
 * give exactly the node's answers at that version; slots that changed under it must be caught by
 * the hash check (counted as rejected / retried / missed). Then, with the writer still going, the
 * newest version's root node is scribbled over in the shared region: every walk of that version
 * must be refused by the hash check (rejections counted), never answered. Never a wrong answer,
 * from the JS walk or from the addon's (each query is walked both ways).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { atHash } from '@monsoon/protocol';
import { RegionExport, StorageNode } from '@monsoon/storage-node';
import { Prng, tempDir } from '@monsoon/test-utils';
import { makeGenesis, RefChain } from '../helpers/chain.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/regionRaceReader.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../../../native/rdma/dist/index.js', import.meta.url));
const hex = (b: Uint8Array | undefined) => (b === undefined ? '-' : toHex(b));

interface Counts {
  walks: number;
  answered: number;
  wrong: number;
  missed: number;
  firstWrong?: unknown;
  nodes: number;
  retries: number;
  misses: number;
  rejected: number;
  /** The addon's walks of the same queries (the shm transport's), counted apart. */
  native: Omit<Counts, 'native'>;
}

describe('a reader racing the region writer', () => {
  let dir: { dir: string; remove: () => Promise<void> };
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run \`npm run build:ts\` first`);
    dir = await tempDir('monsoon-race-');
  });

  afterAll(async () => {
    if (child?.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
    await dir.remove();
  });

  it('never gives a wrong answer while blocks are applied and space is reused under it', async () => {
    const genesis = makeGenesis(17, 1000);
    const chain = new RefChain(genesis, 16);
    const path = join(dir.dir, 'race.region');
    const region = await RegionExport.create({
      path,
      nodes: 100_000,
      arenaBytes: 64 << 20,
      sweepEvery: 1,
      graceEpochs: 0,
      graceMs: 0,
    });
    const node = StorageNode.fromGenesis(genesis, { window: 2, forkWindow: 1 }, { observers: [region] });
    await node.startObservers();

    const c = fork(FIXTURE, [path], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child = c;
    const messages: unknown[] = [];
    let wake: (() => void) | undefined;
    c.on('message', (m) => {
      messages.push(m);
      wake?.();
    });
    const next = async (): Promise<unknown> => {
      while (messages.length === 0) await new Promise<void>((r) => (wake = r));
      return messages.shift();
    };
    /** The next message that is not a walked-job notice (those are dropped). */
    const nextOther = async (): Promise<unknown> => {
      for (;;) {
        const m = await next();
        if (typeof m !== 'object' || m === null || !('walked' in m)) return m;
      }
    };
    const walked = async (id: number): Promise<void> => {
      for (;;) {
        const m = await next();
        if (typeof m === 'object' && m !== null && (m as { walked?: number }).walked === id) return;
      }
    };
    expect(await nextOther()).toBe('ready');

    const rng = new Prng(23);
    const sample = Array.from({ length: 40 }, () => genesis.alloc[rng.int(genesis.alloc.length)]!);
    let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    const blocks = 60;
    for (let i = 1; i <= blocks; i++) {
      const b = chain.block(parent, 1000 + i, 200);
      await node.applyBlock(b.req);
      parent = { hash: b.hash, state: b.state, number: BigInt(i) };
      const queries = sample.map((a) => ({
        address: a.address,
        slots: a.storage.map(([s]) => s),
        code: true,
      }));
      const res = node.batchGet({ at: atHash(b.hash), queries, omitLevels: 0 });
      if (i === blocks) {
        // Forge the newest root node in place (a lying or broken writer), before the reader hears of it.
        const at = region.writer.locate(Buffer.from(b.header.stateRoot).toString('latin1'))!;
        region.bytes[at.offset + (at.length >> 1)]! ^= 0x55;
      }
      c.send({
        id: i,
        root: hex(b.header.stateRoot),
        queries: queries.map((q) => ({ address: hex(q.address), slots: q.slots.map(hex) })),
        expected: res.results.map((r) => ({
          accountRlp: hex(r.accountRlp),
          slotValues: r.slotValues.map(hex),
          code: hex(r.code),
        })),
      });
      // Let the reader's messages through now and then (the writer itself never waits for it).
      if (i % 10 === 0) await new Promise((r) => setImmediate(r));
    }
    await walked(blocks);
    c.send('stop');
    const counts = (await nextOther()) as Counts;
    await new Promise<void>((r) => (c.exitCode !== null ? r() : c.once('exit', () => r())));
    console.log(
      `race: ${counts.walks} walks, ${counts.answered} answered, ${counts.missed} missed, ${counts.wrong} wrong; ` +
        `node reads ${counts.nodes}, retries ${counts.retries}, rejected ${counts.rejected}; ` +
        `writer: ${JSON.stringify(region.writer.counters)}; native: ${JSON.stringify({ ...counts.native, firstWrong: undefined })}`,
    );
    expect(counts.firstWrong).toBeUndefined();
    expect(counts.wrong).toBe(0);
    expect(counts.answered).toBeGreaterThan(0);
    expect(counts.rejected).toBeGreaterThan(0);
    expect(counts.retries).toBeGreaterThan(0);
    expect(counts.native.firstWrong).toBeUndefined();
    expect(counts.native.wrong).toBe(0);
    expect(counts.native.answered).toBeGreaterThan(0);
    expect(counts.native.rejected).toBeGreaterThan(0);
    expect(counts.native.missed).toBeGreaterThan(0);
    expect(region.writer.counters.reusedBytes).toBeGreaterThan(0);
    await node.close();
  });
});
