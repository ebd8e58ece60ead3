/**
 * A miner that lacks a peer block's parent fetches the missing ancestors from that peer (issue
 * 15), instead of refusing the block for good. Two MinerNodes on 127.0.0.1: A seals ten blocks
 * alone; B starts late, peered with A, asking at most 4 blocks per request. A's next block
 * reaches B, whose parent B lacks: B asks for it and its ancestors, in rounds of 4, adopts them
 * oldest first and ends at A's head, with A's state root.
 */
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { Miner, MinerNode } from '@monsoon/miner';
import { until } from '@monsoon/test-utils';
import { genesis, rules } from '../helpers/minerProcess.js';

const nodes: MinerNode[] = [];

afterEach(async () => {
  for (const n of nodes.splice(0)) await n.close();
});

describe('peer sync', () => {
  it('a miner that starts late fetches the blocks it lacks from the peer and reaches its head', async () => {
    const a = await MinerNode.start(await Miner.create(genesis, { rules }), { blockIntervalMs: 0 });
    nodes.push(a);
    for (let i = 0; i < 10; i++) await a.sealNow();
    const b = await MinerNode.start(await Miner.create(genesis, { rules }), {
      blockIntervalMs: 0,
      peers: [a.address],
      peerSync: { fetchBlocks: 4 },
    });
    nodes.push(b);
    // B's stream to A is up once a block of A's reaches B (each try seals one more).
    await until(
      async () => {
        await a.sealNow();
        return b.miner.head.header.number > 0n;
      },
      { what: "one of A's blocks at B", timeoutMs: 20_000 },
    );
    const head = a.miner.head;
    await until(() => toHex(b.miner.head.hash) === toHex(head.hash), {
      what: "B at A's head",
      timeoutMs: 20_000,
    });
    expect(b.miner.head.header.number).toBeGreaterThanOrEqual(11n);
    expect(toHex(b.miner.head.header.stateRoot)).toBe(toHex(head.header.stateRoot));
    // Every block from genesis up, each adopted (none refused), fetched from A.
    expect(b.miner.counters.peerBlocksRefused).toBe(0);
    expect(b.miner.counters.peerBlocksAdopted).toBe(Number(head.header.number));
  }, 60_000);

  it('a closed miner does not dial its peers again (a retry due after close would throw from its timer)', async () => {
    // A peer address nobody listens on: the stream fails at once and a retry is due 500 ms later.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const b = await MinerNode.start(await Miner.create(genesis, { rules }), {
      blockIntervalMs: 0,
      peers: [`127.0.0.1:${port}`],
    });
    await sleep(1_200); // failed, retried, failed again: a retry is almost always pending now
    await b.close();
    // Had the retry called the closed channel, its "Channel has been shut down" would surface
    // here as an uncaught exception, failing this test (or ending the worker).
    await sleep(1_200);
    expect(b.miner.head.header.number).toBe(0n);
  }, 20_000);
});
