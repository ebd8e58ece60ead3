/**
 * The miner's /metrics: the CLI's `--metrics` serves Prometheus text whose counters move with
 * what the miner does (a Submit accepted, a malformed one refused, each timed by status); a
 * bad address is refused at start; per storage node, retries and the blocks kept for it are counted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, type ServiceError, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ERROR_CODE_TRAILER, unary } from '@monsoon/edge';
import { Miner, MinerNode } from '@monsoon/miner';
import { MinerServiceClient, TxStatus } from '@monsoon/protocol';
import { killAll, spawnRole, startRole, until, writeGenesis } from '@monsoon/test-utils';
import { addrs, genesis, genesisTree, rules, submit, transfer } from '../helpers/minerProcess.js';
import { freeAddress } from '../helpers/roles.js';

let dir: string;
let genesisFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'monsoon-miner-metrics-'));
  genesisFile = await writeGenesis(dir, genesis);
});

afterAll(async () => {
  await killAll();
  await rm(dir, { recursive: true, force: true });
});

async function scrape(address: string): Promise<string> {
  const res = await fetch(`http://${address}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one sample line (`name{labels} value`), or undefined when it is not there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('miner --metrics', () => {
  it('serves the miner counters; a Submit moves the accepted count and is timed by status', async () => {
    const { address, line } = await startRole('miner', [
      '--genesis',
      genesisFile,
      '--metrics',
      '127.0.0.1:0',
      '--block-interval',
      '0',
    ]);
    expect(line.metrics).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    const metrics = String(line.metrics);

    const before = await scrape(metrics);
    expect(sample(before, 'monsoon_miner_transactions_total{result="accepted"}')).toBe(0);
    expect(sample(before, 'monsoon_miner_pending_transactions')).toBe(0);
    // Genesis alone: one block held, no transaction indexed.
    expect(sample(before, 'monsoon_miner_blocks_held')).toBe(1);
    expect(sample(before, 'monsoon_miner_indexed_transactions')).toBe(0);
    expect(sample(before, 'monsoon_miner_head_number')).toBe(0);

    const full = genesisTree();
    const res = await submit(address, {
      transactions: [transfer(0, addrs[1]!, 5n)],
      bag: full.proveAccounts([addrs[0]!, addrs[1]!]),
      prefetchedRoot: full.root(),
    });
    expect(res.results.map((r) => r.status)).toEqual([TxStatus.Accepted]);

    // A request the converters refuse: INVALID_ARGUMENT with its code in the trailer, timed too.
    const client = new MinerServiceClient(address, credentials.createInsecure());
    const refused = await unary(client, client.submit, {
      transactions: [transfer(2, addrs[3]!, 5n)],
      bag: undefined,
      prefetchedRoot: new Uint8Array(31),
      senderKeys: new Uint8Array(0),
    }).then(
      () => undefined,
      (e: ServiceError) => e,
    );
    client.close();
    expect(refused?.code).toBe(status.INVALID_ARGUMENT);
    expect(refused?.details).toMatch(/^BAD_LENGTH: prefetchedRoot/);
    expect(refused?.metadata.get(ERROR_CODE_TRAILER)).toEqual(['BAD_LENGTH']);

    const after = await scrape(metrics);
    expect(sample(after, 'monsoon_miner_transactions_total{result="accepted"}')).toBe(1);
    expect(sample(after, 'monsoon_miner_transactions_total{result="invalid"}')).toBe(0);
    expect(sample(after, 'monsoon_miner_pending_transactions')).toBe(1);
    expect(sample(after, 'monsoon_miner_submit_seconds_count{code="OK"}')).toBe(1);
    expect(sample(after, 'monsoon_miner_submit_seconds_count{code="INVALID_ARGUMENT"}')).toBe(1);
    expect(after).toContain('# TYPE monsoon_miner_transactions_total counter\n');
  });

  it('refuses a metrics address that is not host:port: exit 2, one line on stderr', async () => {
    const proc = spawnRole('miner', ['--genesis', genesisFile, '--metrics', 'localhost']);
    expect((await proc.exited).code).toBe(2);
    expect(proc.stderr).toMatch(
      /^monsoon miner: BAD_ARGUMENT: --metrics "localhost": expected host:port.*\n$/,
    );
  });
});

describe('MinerNode metrics', () => {
  it('counts, per storage node, the retries and keeps the blocks of one it cannot reach', async () => {
    // A port nothing listens on: every ApplyBlock there fails UNAVAILABLE and is retried.
    const dead = await freeAddress();
    const miner = await Miner.create(genesis, { rules });
    const node = await MinerNode.start(miner, {
      blockIntervalMs: 0,
      storage: [dead],
      storageFeed: { retryMinMs: 5, retryMaxMs: 20, warnAfter: 2 },
    });
    try {
      await node.sealNow();
      await node.sealNow();
      // Never given up on: the retries go on and both blocks stay queued for the node.
      const text = await until(
        async () => {
          const t = await node.metrics.render();
          return (sample(t, `monsoon_miner_storage_retries_total{storage="${dead}"}`) ?? 0) >= 4 && t;
        },
        { what: 'four retries', timeoutMs: 20_000 },
      );
      expect(sample(text, `monsoon_miner_storage_blocks_total{storage="${dead}",result="refused"}`)).toBe(0);
      expect(sample(text, `monsoon_miner_storage_blocks_total{storage="${dead}",result="applied"}`)).toBe(0);
      expect(sample(text, `monsoon_miner_storage_backlog_blocks{storage="${dead}"}`)).toBe(2);
      expect(sample(text, 'monsoon_miner_blocks_sealed_total')).toBe(2);
      expect(sample(text, 'monsoon_miner_head_number')).toBe(2);
      expect(node.storageCounters).toMatchObject({ applied: 0, refused: 0, caughtUp: 0 });
    } finally {
      await node.close();
    }
  });

  it('keeps sealed blocks for storage catch-ups only while the miner holds them (its window bounds both)', async () => {
    const dead = await freeAddress();
    const miner = await Miner.create(genesis, { rules, keepBlocks: 4 });
    const node = await MinerNode.start(miner, {
      blockIntervalMs: 0,
      storage: [dead],
      storageFeed: { retryMinMs: 5, retryMaxMs: 20, maxBacklog: 2 },
    });
    try {
      for (let i = 0; i < 12; i++) await node.sealNow();
      // The miner holds blocks 8-12; 128 catch-up blocks would otherwise keep all 12 (and with
      // them their transactions, witnesses and top layers) alive.
      expect(miner.blockCount).toBe(5);
      expect(node.sealedHeld).toBe(5);
    } finally {
      await node.close();
    }
  });
});
