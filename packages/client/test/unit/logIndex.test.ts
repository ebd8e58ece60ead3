/**
 * The log index: a bounded window of blocks; a block at a held height replaces it and all above
 * (what left, oldest first); replays change nothing; gaps are refused. Its queries agree with a
 * plain reading of geth's matching rules on seeded random chains and filters, consult the bloom
 * (a block whose bloom says no is never read) and stop past their limit. ClientEvents turns the
 * ChainView's heads into chain changes, reorgs included, and shields the chain from listeners.
 */
import { describe, expect, it } from '@jest/globals';
import { bytesEqual } from '@monsoon/dsm-tree';
import { type Log, logsBloom } from '@monsoon/execution';
import { Prng } from '@monsoon/test-utils';
import { byteKey, detachAll } from '@monsoon/util';
import type { ClientBlock } from '../../src/chain.js';
import { isClientError } from '../../src/clientError.js';
import { blockLogsOf, LogIndex } from '../../src/logIndex.js';
import type { BlockLogs, ChainChange, LogFilter } from '../../src/rpc/chainEvents.js';
import { logMatches } from '../../src/rpc/logFilter.js';
import { EventChain, transferLog } from './rpc/eventChain.js';
import { alice, bob, TOKEN } from './rpc/fakeBackend.js';

function blockLogs(number: bigint, fork: number, logs: Log[] = []): BlockLogs {
  return {
    number,
    hash: Uint8Array.of(Number(number), fork, ...new Uint8Array(30)),
    timestamp: number,
    bloom: new Uint8Array(256).fill(0xff),
    logs: logs.map((log, i) => ({
      log,
      transactionHash: new Uint8Array(32),
      transactionIndex: i,
      logIndex: i,
    })),
  };
}

function chain(index: LogIndex, from: bigint, to: bigint, fork = 0): void {
  for (let n = from; n <= to; n++) index.add(blockLogs(n, fork));
}

describe('LogIndex', () => {
  it('holds only the newest `window` blocks, by number and by hash', () => {
    const index = new LogIndex({ window: 4 });
    chain(index, 0n, 9n);
    expect([index.first, index.head]).toEqual([6n, 9n]);
    expect(index.at(5n)).toBeUndefined();
    expect(index.at(6n)?.number).toBe(6n);
    expect(index.byHash(blockLogs(5n, 0).hash)).toBeUndefined();
    expect(index.byHash(blockLogs(9n, 0).hash)?.number).toBe(9n);
  });

  it('replaces from a held height on (a reorg), ignores replays, refuses gaps', () => {
    const index = new LogIndex({ window: 10 });
    chain(index, 0n, 5n);
    expect(index.add(blockLogs(5n, 0))).toBeUndefined();
    const change = index.add(blockLogs(3n, 1));
    expect(change?.removed.map((b) => b.number)).toEqual([3n, 4n, 5n]);
    expect(index.head).toBe(3n);
    expect(index.byHash(blockLogs(4n, 0).hash)).toBeUndefined();
    expect(index.byHash(blockLogs(3n, 1).hash)?.number).toBe(3n);
    expect(index.add(blockLogs(4n, 1))?.removed).toEqual([]);
    let caught: unknown;
    try {
      index.add(blockLogs(9n, 1));
    } catch (e) {
      caught = e;
    }
    expect(isClientError(caught)).toBe(true);
    expect(index.head).toBe(4n);
  });

  it('replaces everything held when a reorg reaches below the window', () => {
    const index = new LogIndex({ window: 3 });
    chain(index, 0n, 6n);
    const change = index.add(blockLogs(2n, 1));
    expect(change?.removed.map((b) => b.number)).toEqual([4n, 5n, 6n]);
    expect([index.first, index.head]).toEqual([2n, 2n]);
  });

  it('answers queries as geth matches logs (seeded random chains and filters)', () => {
    const rng = new Prng(13);
    const addresses = [0, 1, 2].map((i) => Uint8Array.of(...new Uint8Array(19), i + 1));
    const topics = [0, 1, 2, 3].map((i) => Uint8Array.of(...new Uint8Array(31), i + 1));
    const randomLog = (): Log => ({
      address: rng.pick(addresses),
      topics: Array.from({ length: rng.int(5) }, () => rng.pick(topics)),
      data: new Uint8Array(0),
    });
    const randomFilter = (): LogFilter => ({
      addresses: Array.from({ length: rng.int(3) }, () => rng.pick(addresses)),
      topics: Array.from({ length: rng.int(5) }, () =>
        Array.from({ length: rng.int(3) }, () => rng.pick(topics)),
      ),
    });
    // The rule, read plainly: any listed address; per position, any listed topic (none listed:
    // any); a log with fewer topics than positions never matches.
    const reference = (f: LogFilter, l: Log) =>
      (f.addresses.length === 0 || f.addresses.some((a) => bytesEqual(a, l.address))) &&
      f.topics.length <= l.topics.length &&
      f.topics.every((alts, i) => alts.length === 0 || alts.some((t) => bytesEqual(t, l.topics[i]!)));
    for (let round = 0; round < 40; round++) {
      const index = new LogIndex({ window: 16 });
      const blocks: BlockLogs[] = [];
      for (let n = 0n; n < 12n; n++) {
        const logs = Array.from({ length: rng.int(4) }, randomLog);
        // With the block's real bloom: a bloom that ruled out a block holding a match would
        // show as a missing log below.
        blocks.push({ ...blockLogs(n, 0, logs), bloom: logsBloom(logs) });
        index.add(blocks.at(-1)!);
      }
      for (let q = 0; q < 10; q++) {
        const f = randomFilter();
        const from = BigInt(rng.int(12));
        const to = from + BigInt(rng.int(Number(12n - from)));
        const expected = blocks
          .filter((b) => b.number >= from && b.number <= to)
          .flatMap((b) => b.logs.filter((e) => reference(f, e.log)).map((e) => [b.number, e.logIndex]));
        const got = index.query(from, to, f, 1000);
        expect(got.overflow).toBe(false);
        expect(got.logs.map((l) => [l.block.number, l.entry.logIndex])).toEqual(expected);
        for (const b of blocks)
          for (const e of b.logs) expect(logMatches(f, e.log)).toBe(reference(f, e.log));
      }
    }
  });

  it('skips a block its bloom rules out without reading its logs, and reads past false positives', () => {
    const index = new LogIndex({ window: 8 });
    const log = transferLog(alice.address, bob.address, 5n);
    const hidden = { ...blockLogs(0n, 0, [log]), bloom: new Uint8Array(256) };
    const noisy = blockLogs(1n, 0, [transferLog(bob.address, alice.address, 1n, TOKEN.replace('01', '02'))]);
    index.add(hidden);
    index.add(noisy);
    const filter = { addresses: [log.address], topics: [] };
    // Block 0 matches but its bloom says no: skipped. Block 1's bloom says maybe, its log does not match.
    expect(index.query(0n, 1n, filter, 10).logs).toEqual([]);
    // An empty filter: no bloom rules a block out.
    const all = index.query(0n, 1n, { addresses: [], topics: [] }, 10).logs;
    expect(all.map((l) => l.block.number)).toEqual([0n, 1n]);
  });

  it('stops once more than `limit` logs match', () => {
    const index = new LogIndex({ window: 8 });
    const logs = [1n, 2n, 3n, 4n, 5n].map((v) => transferLog(alice.address, bob.address, v));
    index.add({ ...blockLogs(0n, 0, logs), bloom: logsBloom(logs) });
    const all = { addresses: [], topics: [] };
    expect(index.query(0n, 0n, all, 5)).toMatchObject({ overflow: false });
    expect(index.query(0n, 0n, all, 5).logs).toHaveLength(5);
    expect(index.query(0n, 0n, all, 4)).toMatchObject({ overflow: true });
  });
});

describe('blockLogsOf', () => {
  it("copies a block's logs and their transactions' hashes out of the buffer the block's transactions share", () => {
    const r = new Prng(7);
    // As chain.ts detachBlock holds a block: its transactions, their hashes and every log field
    // views into one buffer. Transactions 0 and 2 emit no logs.
    const logsOf = [0, 2, 0, 1].map((n) =>
      Array.from({ length: n }, () => ({
        address: r.bytes(20),
        topics: Array.from({ length: r.int(5) }, () => r.bytes(32)),
        data: r.bytes(r.int(100)),
      })),
    );
    const raws = logsOf.map(() => r.bytes(150));
    const hashes = logsOf.map(() => r.bytes(32));
    const shared = detachAll([
      ...raws,
      ...hashes,
      ...logsOf.flat().flatMap((l) => [l.address, ...l.topics, l.data]),
    ]);
    let at = 0;
    const next = () => shared[at++]!;
    const transactions = raws.map(next);
    const txHashes = hashes.map(next);
    const receipts = logsOf.map((logs) => ({
      type: 2,
      status: 1 as const,
      cumulativeGasUsed: 0n,
      logs: logs.map((l) => ({ address: next(), topics: l.topics.map(next), data: next() })),
    }));
    const block = {
      hash: r.bytes(32),
      header: { number: 9n, timestamp: 99n },
      transactions,
      txHashes,
      txKeys: txHashes.map(byteKey),
      receipts,
      logsBloom: new Uint8Array(256),
      size: 0,
    } as unknown as ClientBlock;

    const got = blockLogsOf(block);
    expect(got.logs.map((e) => [e.transactionIndex, e.logIndex])).toEqual([
      [1, 0],
      [1, 1],
      [3, 2],
    ]);
    const want = logsOf.flatMap((logs, i) => logs.map((log) => ({ log, hash: hashes[i]! })));
    got.logs.forEach((e, i) => {
      expect(e.log).toEqual(want[i]!.log);
      expect(e.transactionHash).toEqual(want[i]!.hash);
    });
    // Nothing held is a view into the block's buffer, and the one buffer held is just the logs'
    // bytes and the two hashes: none of the transactions' bytes.
    const views = got.logs.flatMap((e) => [e.transactionHash, e.log.address, ...e.log.topics, e.log.data]);
    const buffers = new Set(views.map((v) => v.buffer));
    expect(buffers.has(transactions[0]!.buffer)).toBe(false);
    expect(buffers.size).toBe(1);
    const logBytes = logsOf.flat().reduce((n, l) => n + 20 + 32 * l.topics.length + l.data.length, 0);
    expect([...buffers][0]!.byteLength).toBe(logBytes + 2 * 32);
  });
});

describe('ClientEvents', () => {
  it('indexes the blocks already held, then each new head; a reorg is one change', () => {
    const c = new EventChain(3);
    c.mineEmpty(4);
    const x = c.mine([[transferLog(alice.address, bob.address, 7n)]]);
    const late = new EventChain(3);
    expect(late.events.logs.head).toBe(0n);
    expect([c.events.logs.first, c.events.logs.head]).toEqual([3n, 5n]);
    const changes: ChainChange[] = [];
    c.events.onChange((ch) => changes.push(ch));
    const y = c.mine([[transferLog(bob.address, alice.address, 8n)]]);
    const parent = c.chain.byNumber(4n)!;
    const fork = c.mine([[], [transferLog(alice.address, alice.address, 9n)]], { parent, fork: 1 });
    expect(changes).toHaveLength(2);
    expect(changes[0]!.removed).toEqual([]);
    expect(changes[0]!.added.hash).toEqual(y.hash);
    expect(changes[1]!.removed.map((b) => b.hash)).toEqual([x.hash, y.hash]);
    expect(changes[1]!.added.hash).toEqual(fork.hash);
    expect(changes[1]!.added.logs[0]).toMatchObject({ transactionIndex: 1, logIndex: 0 });
    expect(changes[1]!.head.header.number).toBe(5n);
  });

  it('keeps the chain going when a listener throws', () => {
    const c = new EventChain();
    const seen: bigint[] = [];
    c.events.onChange(() => {
      throw new Error('listener bug');
    });
    c.events.onChange((ch) => seen.push(ch.added.number));
    c.mineEmpty(2);
    expect(seen).toEqual([1n, 2n]);
    expect(c.chain.requireHead().header.number).toBe(2n);
  });
});
