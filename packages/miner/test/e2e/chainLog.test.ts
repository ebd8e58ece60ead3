/**
 * A miner with a data directory keeps its chain (issue 15): every block it adopts is logged, and
 * a restarted miner re-executes the log and continues where it stopped, instead of at genesis.
 * In-process: a clean restart, and a torn tail (a crash mid-append) cut on open. As a process:
 * SIGKILLed and restarted on the same directory, it still holds the head it had. Compacted: the
 * log holds a checkpoint and the blocks after it, so it stays bounded and a restart re-executes
 * only those.
 */
import { appendFile, mkdtemp, readFile, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { BlockLog, Miner, MinerNode, readChainCheckpoint } from '@monsoon/miner';
import { decodeHeader, headerHash, MinerServiceClient, TxStatus } from '@monsoon/protocol';
import { killAll, startRole, until, writeGenesis } from '@monsoon/test-utils';
import { addrs, genesis, genesisTree, minerHead, rules, transfer } from '../helpers/minerProcess.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'monsoon-chainlog-'));
});

afterAll(async () => {
  await killAll();
  await rm(dir, { recursive: true, force: true });
});

async function startNode(dataDir: string) {
  return MinerNode.start(await Miner.create(genesis, { rules }), { blockIntervalMs: 0, dataDir });
}

describe('the miner chain log', () => {
  it('a restarted miner continues from its logged chain; a torn tail is cut', async () => {
    const dataDir = join(dir, 'inproc');
    const a = await startNode(dataDir);
    const full = genesisTree();
    const res = await a.miner.submit({
      transactions: [transfer(0, addrs[40]!, 1234n)],
      bag: full.proveAccounts([addrs[0]!, addrs[40]!]),
      prefetchedRoot: full.root(),
    });
    expect(res.results.map((r) => r.status)).toEqual([TxStatus.Accepted]);
    for (let i = 0; i < 5; i++) await a.sealNow();
    const head = a.miner.head;
    await a.close();

    const b = await startNode(dataDir);
    expect(toHex(b.miner.head.hash)).toBe(toHex(head.hash));
    expect(toHex(b.miner.head.header.stateRoot)).toBe(toHex(head.header.stateRoot));
    expect(b.miner.head.header.number).toBe(5n);
    expect(b.miner.block(head.parent!.hash)).toBeDefined();
    const sixth = await b.sealNow();
    expect(sixth.block.header.number).toBe(6n);
    await b.close();

    // A crash mid-append: half of a seventh frame. It is cut; the six whole blocks remain.
    const path = join(dataDir, 'blocks.log');
    const whole = (await readFile(path)).length;
    await appendFile(path, Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 5, 6]));
    const c = await startNode(dataDir);
    expect(toHex(c.miner.head.hash)).toBe(toHex(sixth.block.hash));
    await c.close();
    expect((await readFile(path)).length).toBe(whole);

    // A tail cut inside the sixth block's frame: the miner is back at block 5.
    await truncate(path, whole - 3);
    const d = await startNode(dataDir);
    expect(toHex(d.miner.head.hash)).toBe(toHex(head.hash));
    await d.close();
  }, 60_000);

  it('compacts its log to a checkpoint and the held blocks; a restart resumes from it and executes on it', async () => {
    const dataDir = join(dir, 'compact');
    const start = async () =>
      MinerNode.start(await Miner.create(genesis, { rules, keepBlocks: 4 }), {
        blockIntervalMs: 0,
        dataDir,
        logCompactAfter: 8,
      });
    const a = await start();
    const full = genesisTree();
    const first = await a.miner.submit({
      transactions: [transfer(0, addrs[40]!, 1234n)],
      bag: full.proveAccounts([addrs[0]!, addrs[40]!]),
      prefetchedRoot: full.root(),
    });
    expect(first.results.map((r) => r.status)).toEqual([TxStatus.Accepted]);
    for (let i = 0; i < 40; i++) await a.sealNow();
    const head = a.miner.head;
    await a.close();

    // At most logCompactAfter blocks past the window (5 blocks) stay in the log; 40 without compaction.
    const logged = await BlockLog.open({ dataDir });
    await logged.log.close();
    expect(logged.checkpoint).toBeDefined();
    expect(logged.count).toBeLessThanOrEqual(8 + 5 + 1);
    expect(decodeHeader(logged.checkpoint!.headerRlp).number).toBeGreaterThan(20n);

    // Started from the checkpoint (as the miner command does), the genesis' accounts are never
    // read: a restart costs the checkpoint and the log after it, not the genesis' size.
    const untouchable = {
      ...genesis,
      get alloc(): never {
        throw new Error("the genesis' accounts were read on a restart from a checkpoint");
      },
    };
    const fromCheckpoint = await MinerNode.start(
      await Miner.create(untouchable, { rules, keepBlocks: 4 }, keccak, await readChainCheckpoint(dataDir)),
      { blockIntervalMs: 0, dataDir, logCompactAfter: 8 },
    );
    expect(toHex(fromCheckpoint.miner.head.hash)).toBe(toHex(head.hash));
    expect(fromCheckpoint.miner.blockCount).toBeLessThanOrEqual(5);
    await fromCheckpoint.close();

    const b = await start();
    expect(toHex(b.miner.head.hash)).toBe(toHex(head.hash));
    expect(toHex(b.miner.head.header.stateRoot)).toBe(toHex(head.header.stateRoot));
    expect(b.miner.blockCount).toBeLessThanOrEqual(5);
    // The restored top layer executes: a transfer between accounts whose subtrees block 1 left
    // alone (a genesis witness revised there, not stale).
    const touched = new Set([addrs[0]!, addrs[40]!].map((a) => keccak.keccak256(a)[0]));
    const [from, to] = addrs
      .map((a, i) => ({ i, bucket: keccak.keccak256(a)[0]! }))
      .filter((x, k, all) => !touched.has(x.bucket) && all.findIndex((y) => y.bucket === x.bucket) === k)
      .slice(0, 2)
      .map((x) => x.i);
    const res = await b.miner.submit({
      transactions: [transfer(from!, addrs[to!]!, 5n)],
      bag: full.proveAccounts([addrs[from!]!, addrs[to!]!]),
      prefetchedRoot: full.root(),
    });
    expect(res.results.map((r) => r.status)).toEqual([TxStatus.Accepted]);
    const next = await b.sealNow();
    expect(next.block.header.number).toBe(head.header.number + 1n);
    expect(next.block.transactions).toHaveLength(1);
    await b.close();
  }, 60_000);

  it('a miner process SIGKILLed and restarted on its data directory holds the head it had', async () => {
    const g = await writeGenesis(dir, genesis);
    const args = ['--genesis', g, '--block-interval', '100', '--data-dir', join(dir, 'proc')];
    const first = await startRole('miner', args);
    const before = await until(
      async () => {
        const h = await minerHead(first.address);
        return h.number >= 5n && h;
      },
      { what: 'five blocks', timeoutMs: 30_000 },
    );
    first.proc.signal('SIGKILL');
    await first.proc.exited;
    const again = await startRole('miner', args);
    const restored = await again.proc.waitFor((l) => l.msg === 'chain restored');
    expect(restored.blocks as number).toBeGreaterThanOrEqual(Number(before.number));
    // The block that was the head is on the restarted miner's chain at its height.
    const c = new MinerServiceClient(again.address, credentials.createInsecure());
    const atBefore = await new Promise<Uint8Array>((resolve, reject) => {
      const s = c.subscribeBlocks({ fromNumber: before.number });
      s.once('data', (b: { headerRlp: Uint8Array }) => {
        resolve(headerHash(decodeHeader(b.headerRlp)));
        s.cancel();
      });
      s.once('error', (e) => (String(e).includes('CANCELLED') ? undefined : reject(e)));
    });
    c.close();
    expect(toHex(atBefore)).toBe(toHex(before.hash));
  }, 60_000);
});
