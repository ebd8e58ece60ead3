/**
 * LoadDriver against a fake cluster on real sockets: counts add up, a sender's transactions go
 * out in nonce order one answer at a time, refusals renumber the sender's later transactions,
 * failed calls retire senders, the open loop generates what its rate calls for, latency
 * percentiles reflect the miner's delays, and the drain reports what never made it into a block.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeSignedTx, makeCommon, recoverSenders } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import {
  AccountSet,
  DriverErrorCode,
  isDriverError,
  isWorkloadError,
  LoadDriver,
  type LoadDriverOptions,
  type LoadProgress,
  type LoadResult,
  TrafficGenerator,
  type TrafficOptions,
  WorkloadErrorCode,
} from '@monsoon/workload';
import { FAKE_WITNESS_BYTES, type FakeCluster, startFakeCluster } from '../helpers/driverFakes.js';

const SEED = new TextEncoder().encode('driver test');
let accounts: AccountSet;
let cluster: FakeCluster | undefined;

beforeAll(async () => {
  accounts = await AccountSet.create({ seed: SEED, count: 100, eager: true });
});

afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

async function drive(
  c: FakeCluster,
  opts: Partial<LoadDriverOptions>,
  trafficOpts: Partial<TrafficOptions> = {},
  onProgress?: (p: LoadProgress) => void,
): Promise<LoadResult> {
  const traffic = new TrafficGenerator({ seed: SEED, ...trafficOpts }, { accounts });
  const driver = await LoadDriver.create(
    {
      clients: c.clients.map((x) => x.address),
      miner: c.miner.address,
      batchIntervalMs: 2,
      drainTimeoutMs: 10_000,
      progressIntervalMs: 20,
      ...opts,
    },
    { traffic, accounts, ...(onProgress === undefined ? {} : { onProgress }) },
  );
  return driver.run();
}

/** The identities LoadCounts documents. */
function expectConsistent(r: LoadResult): void {
  const n = r.counts;
  expect(n.generated).toBe(n.submitted + n.unsent);
  expect(n.submitted).toBe(n.accepted + n.rejected + n.failed + n.unanswered);
  expect(n.accepted).toBe(n.committed + n.dropped);
  expect(n.rejected).toBe(n.rejectedBy.client + n.rejectedBy.miner + n.rejectedBy.stale + n.rejectedBy.rpc);
  expect(r.series.reduce((s, x) => s + x.committed, 0)).toBe(n.committed);
  expect(r.series.reduce((s, x) => s + x.submitted, 0)).toBe(n.submitted);
}

/** Each sender's accepted nonces are 0, 1, 2, … with no gap. */
function expectContiguousNonces(c: FakeCluster): void {
  for (const [sender, nonces] of c.core.acceptedNonces())
    expect({ sender, nonces }).toEqual({ sender, nonces: nonces.map((_, i) => BigInt(i)) });
}

describe('LoadDriver, closed loop', () => {
  it('commits every transaction, keeps nonce order and the concurrency, and spreads over the clients', async () => {
    cluster = await startFakeCluster(accounts, {
      clients: 2,
      policy: { answerDelayMs: 3 },
      miner: { includeDelayMs: () => 5 },
    });
    const r = await drive(cluster, { load: { concurrency: 16 }, until: { count: 300 } });
    expectConsistent(r);
    expect(r.counts).toMatchObject({
      generated: 300,
      submitted: 300,
      accepted: 300,
      committed: 300,
      rejected: 0,
      failed: 0,
      dropped: 0,
      unanswered: 0,
      unsent: 0,
      renumbered: 0,
    });
    expect(cluster.core.orderViolations).toBe(0);
    expect(cluster.core.nonceErrors).toBe(0);
    expect(cluster.core.maxInFlight).toBeLessThanOrEqual(16);
    expect(cluster.core.maxInFlight).toBeGreaterThan(1);
    expectContiguousNonces(cluster);
    for (const client of cluster.clients) expect(client.txs).toBeGreaterThan(0);
    expect(cluster.clients[0]!.txs + cluster.clients[1]!.txs).toBe(300);
    expect(r.timing).toMatchObject({ stoppedBy: 'count', drainTimedOut: false });
    expect(r.latencyMs?.samples).toBe(300);
    expect(r.blocks.withRunTxs).toBeGreaterThan(0);
    expect(r.blocks.seen).toBeGreaterThanOrEqual(r.blocks.withRunTxs);
    expect(r.config).toMatchObject({ mode: 'closed', concurrency: 16, count: 300, accounts: 100 });
  });

  it('renumbers a sender’s later transactions after a refusal, so none is refused for its nonce', async () => {
    let refusals = 0;
    cluster = await startFakeCluster(accounts, {
      policy: {
        answerDelayMs: 2,
        refuse: (a) => {
          if (a.index % 7 === 3) return { by: 'client', error: `insufficient funds #${refusals++ % 3}` };
          if (a.index % 11 === 5) return { by: 'stale', error: 'still stale after 3 submissions' };
          return undefined;
        },
      },
    });
    const r = await drive(cluster, { load: { concurrency: 24 }, until: { count: 300 } });
    expectConsistent(r);
    const byPolicy = cluster.core.refusedByPolicy;
    expect(byPolicy.client).toBeGreaterThan(10);
    expect(byPolicy.stale).toBeGreaterThan(5);
    expect(cluster.core.nonceErrors).toBe(0);
    expect(cluster.core.orderViolations).toBe(0);
    expectContiguousNonces(cluster);
    expect(r.counts.rejectedBy).toEqual({ client: byPolicy.client, miner: 0, stale: byPolicy.stale, rpc: 0 });
    expect(r.counts.staleAbandoned).toBe(byPolicy.stale);
    expect(r.counts.committed).toBe(300 - byPolicy.client - byPolicy.stale);
    expect(r.counts.renumbered).toBeGreaterThan(0);
    const client = r.reasons.find((g) => g.by === 'client')!;
    expect(client.count).toBe(byPolicy.client);
    expect(client.samples.map((s) => s.reason).sort()).toEqual([
      'insufficient funds #0',
      'insufficient funds #1',
      'insufficient funds #2',
    ]);
  });

  it('sends each transaction with its signer’s public key (renumbered ones too), none when told not to', async () => {
    const policy = {
      answerDelayMs: 2,
      refuse: (a: { index: number }) =>
        a.index % 5 === 2 ? { by: 'client' as const, error: 'insufficient funds' } : undefined,
    };
    cluster = await startFakeCluster(accounts, { clients: 2, policy });
    const r = await drive(cluster, { load: { concurrency: 24 }, until: { count: 200 } });
    expect(r.counts.renumbered).toBeGreaterThan(0);
    const received = cluster.clients.flatMap((c) => c.received);
    expect(received).toHaveLength(r.counts.submitted);
    const common = makeCommon(1337n);
    const senders = recoverSenders(received.map(({ raw }) => decodeSignedTx(raw, common)));
    received.forEach(({ senderKey }, i) => {
      expect(senderKey).toMatch(/^[0-9a-f]{128}$/);
      const address = Buffer.from(keccak.keccak256(Buffer.from(senderKey, 'hex')).subarray(12));
      expect(address).toEqual(Buffer.from(senders[i] as Uint8Array));
    });
    await cluster.close();

    cluster = await startFakeCluster(accounts, { policy });
    const off = await drive(cluster, { load: { concurrency: 24 }, until: { count: 50 }, senderKeys: false });
    expect(off.counts.submitted).toBeGreaterThan(0);
    expect(cluster.clients[0]!.received.map((x) => x.senderKey)).toEqual(
      Array(off.counts.submitted).fill(''),
    );
  });

  it('retires the senders of a failed call: their later transactions are never sent', async () => {
    cluster = await startFakeCluster(accounts, { policy: { failCall: (n) => n === 3 } });
    const r = await drive(cluster, { load: { concurrency: 16 }, until: { count: 200 } });
    expectConsistent(r);
    expect(cluster.core.failedTxs).toBeGreaterThan(0);
    expect(r.counts.failed).toBe(cluster.core.failedTxs);
    expect(r.reasons.find((g) => g.by === 'failed')?.count).toBe(cluster.core.failedTxs);
    // Without retirement the failed senders' next nonces would be refused.
    expect(cluster.core.nonceErrors).toBe(0);
    expect(cluster.core.orderViolations).toBe(0);
    expect(r.counts.unsent).toBeGreaterThan(0);
    expect(r.counts.committed).toBe(r.counts.accepted);
  });

  it('gives up when everything is refused and nothing was accepted (a chain past the genesis nonces)', async () => {
    cluster = await startFakeCluster(accounts, {
      policy: { refuse: () => ({ by: 'client', error: 'nonce too low: next nonce 5, tx nonce 0' }) },
    });
    const r = await drive(cluster, {
      load: { concurrency: 16 },
      until: { durationMs: 600_000 },
      maxRefusedBeforeAccepted: 40,
    });
    expectConsistent(r);
    expect(r.timing.stoppedBy).toBe('refusals');
    expect(r.counts.accepted).toBe(0);
    expect(r.counts.rejected).toBeGreaterThanOrEqual(40);
  });

  it('reports latency percentiles that reflect the miner’s inclusion delays', async () => {
    // Every tenth transaction waits 250 ms for its block, the others 10 ms.
    cluster = await startFakeCluster(accounts, {
      miner: { includeDelayMs: (a) => (a.index % 10 === 0 ? 250 : 10) },
    });
    const r = await drive(cluster, { load: { concurrency: 20 }, until: { count: 200 } });
    expectConsistent(r);
    const l = r.latencyMs!;
    expect(l.samples).toBe(200);
    expect(l.p50).toBeGreaterThanOrEqual(10);
    expect(l.p50).toBeLessThan(250);
    expect(l.p95).toBeGreaterThanOrEqual(250);
    expect(l.p99).toBeGreaterThanOrEqual(250);
    expect(l.max).toBeGreaterThanOrEqual(l.p99);
    expect(l.p95).toBeGreaterThanOrEqual(l.p50);
  });
});

describe('LoadDriver, open loop', () => {
  it('generates exactly rate × duration transactions, sent over many batches', async () => {
    cluster = await startFakeCluster(accounts, { clients: 2 });
    const progress: LoadProgress[] = [];
    const r = await drive(cluster, { load: { rate: 2000 }, until: { durationMs: 300 } }, {}, (p) =>
      progress.push(p),
    );
    expectConsistent(r);
    expect(r.counts).toMatchObject({ generated: 600, submitted: 600, committed: 600, missed: 0 });
    const calls = cluster.clients[0]!.calls + cluster.clients[1]!.calls;
    expect(calls).toBeGreaterThan(10);
    expect(r.timing.stoppedBy).toBe('duration');
    expect(r.config).toMatchObject({ mode: 'open', rate: 2000, durationMs: 300 });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)!.generated).toBeLessThanOrEqual(600);
    expect(cluster.core.orderViolations).toBe(0);
  });

  it('with a count, generates that many and no more', async () => {
    cluster = await startFakeCluster(accounts);
    const r = await drive(cluster, { load: { rate: 5000 }, until: { count: 250 } });
    expectConsistent(r);
    expect(r.counts).toMatchObject({ generated: 250, committed: 250 });
    expect(r.timing.stoppedBy).toBe('count');
  });

  it('counts what falls due beyond maxOutstanding as missed instead of generating it', async () => {
    // Nothing is included before the run ends, so outstanding only grows.
    cluster = await startFakeCluster(accounts, { miner: { includeDelayMs: () => 400 } });
    const r = await drive(cluster, {
      load: { rate: 2000 },
      until: { count: 300 },
      maxOutstanding: 50,
    });
    expectConsistent(r);
    expect(r.counts.generated).toBe(50);
    expect(r.counts.missed).toBe(250);
    expect(r.counts.committed).toBe(50);
  });
});

describe('LoadDriver, drain', () => {
  /** 100 transactions, 10 in flight; lost ones stop holding a slot after 100 ms; a 300 ms drain. */
  const LOSSY_RUN: Partial<LoadDriverOptions> = {
    load: { concurrency: 10 },
    until: { count: 100 },
    inclusionTimeoutMs: 100,
    drainTimeoutMs: 300,
  };

  it('counts accepted transactions that never reach a block as dropped, once the drain times out', async () => {
    cluster = await startFakeCluster(accounts, { miner: { drop: (a) => a.index % 10 === 4 } });
    const r = await drive(cluster, LOSSY_RUN);
    expectConsistent(r);
    expect(cluster.miner.lost).toBe(10);
    expect(r.counts).toMatchObject({ accepted: 100, committed: 90, dropped: 10, unanswered: 0 });
    expect(r.timing.drainTimedOut).toBe(true);
    expect(r.timing.drainMs).toBeGreaterThanOrEqual(300);
  });

  it('undoes the inclusions of a block replaced by a reorg', async () => {
    cluster = await startFakeCluster(accounts, { miner: { reorgOut: (a) => a.index % 25 === 3 } });
    const r = await drive(cluster, LOSSY_RUN);
    expectConsistent(r);
    expect(cluster.miner.lost).toBe(4);
    expect(r.blocks.reorgs).toBe(cluster.miner.reorgs);
    expect(r.counts).toMatchObject({ committed: 96, dropped: 4 });
    expect(r.latencyMs?.samples).toBe(96);
  });

  it('ends the drain as soon as nothing is outstanding', async () => {
    cluster = await startFakeCluster(accounts);
    const r = await drive(cluster, {
      load: { concurrency: 4 },
      until: { count: 40 },
      drainTimeoutMs: 60_000,
    });
    expect(r.timing.drainTimedOut).toBe(false);
    expect(r.timing.drainMs).toBeLessThan(60_000);
    expect(r.counts.committed).toBe(40);
  });

  it('stop() ends the run phase early; what was sent still drains', async () => {
    cluster = await startFakeCluster(accounts);
    const traffic = new TrafficGenerator({ seed: SEED }, { accounts });
    let stopped = false;
    const driver: LoadDriver = await LoadDriver.create(
      {
        clients: [cluster.clients[0]!.address],
        miner: cluster.miner.address,
        load: { concurrency: 8 },
        until: { durationMs: 600_000 },
        progressIntervalMs: 10,
      },
      {
        traffic,
        accounts,
        onProgress: (p) => {
          // Once: a second stop() would also end the drain.
          if (p.committed > 20 && !stopped) {
            stopped = true;
            driver.stop();
          }
        },
      },
    );
    const r = await driver.run();
    expectConsistent(r);
    expect(r.timing.stoppedBy).toBe('stopped');
    expect(r.counts.committed).toBeGreaterThan(20);
    expect(r.counts.committed).toBe(r.counts.generated);
  });
});

describe('LoadDriver transports and metrics', () => {
  it('drives gRPC and JSON-RPC clients together and reads witness bytes from /metrics', async () => {
    cluster = await startFakeCluster(accounts, {
      jsonRpc: true,
      policy: {
        refuse: (a) => (a.index % 13 === 6 ? { by: 'miner', error: 'intrinsic gas too low' } : undefined),
      },
    });
    const rpc = cluster.jsonRpc!;
    const traffic = new TrafficGenerator({ seed: SEED }, { accounts });
    const driver = await LoadDriver.create(
      {
        clients: [cluster.clients[0]!.address, rpc.url],
        miner: cluster.miner.address,
        metrics: [rpc.url.replace(/\/$/, '/metrics')],
        load: { concurrency: 12 },
        until: { count: 130 },
        batchIntervalMs: 2,
      },
      { traffic, accounts },
    );
    const r = await driver.run();
    expectConsistent(r);
    expect(cluster.clients[0]!.txs).toBeGreaterThan(0);
    expect(rpc.txs).toBeGreaterThan(0);
    expect(cluster.core.nonceErrors).toBe(0);
    // The same refusal is 'miner' over gRPC, 'rpc' over JSON-RPC (whose answer does not say who).
    expect(r.counts.rejectedBy.miner + r.counts.rejectedBy.rpc).toBe(cluster.core.refusedByPolicy.miner);
    // Which transport a refused account's transactions took depends on timing: count each side's.
    expect(r.counts.rejectedBy.rpc).toBe(rpc.refused);
    expect(r.counts.rejectedBy.miner).toBe(cluster.clients[0]!.refused);
    expect(rpc.refused + cluster.clients[0]!.refused).toBeGreaterThan(0);
    expect(r.counts.committed).toBe(130 - cluster.core.refusedByPolicy.miner);
    expect(r.witness).toEqual({
      endpoints: 1,
      bagBytes: FAKE_WITNESS_BYTES.bag * r.counts.committed,
      unbaggedWitnessBytes: FAKE_WITNESS_BYTES.unbagged * r.counts.committed,
      proofBytesFetched: FAKE_WITNESS_BYTES.proofs * r.counts.committed,
      bagBytesPerTx: FAKE_WITNESS_BYTES.bag,
      unbaggedWitnessBytesPerTx: FAKE_WITNESS_BYTES.unbagged,
      proofBytesFetchedPerTx: FAKE_WITNESS_BYTES.proofs,
      storageCallsPerTx: FAKE_WITNESS_BYTES.storageCalls,
      submissionsPerTx: FAKE_WITNESS_BYTES.submissions,
    });
  });

  it('reports unreadable /metrics instead of failing the run', async () => {
    cluster = await startFakeCluster(accounts);
    const r = await drive(cluster, {
      load: { concurrency: 4 },
      until: { count: 10 },
      metrics: ['127.0.0.1:1'],
    });
    expect(r.counts.committed).toBe(10);
    expect(r.witness).toBeNull();
    expect(r.witnessError).toMatch(/METRICS_UNAVAILABLE/);
  });

  it('fails to start when the miner streams no head block', async () => {
    cluster = await startFakeCluster(accounts);
    const traffic = new TrafficGenerator({ seed: SEED }, { accounts });
    const err = await LoadDriver.create(
      { clients: [cluster.clients[0]!.address], miner: '127.0.0.1:1', minerReadyTimeoutMs: 2_000 },
      { traffic, accounts },
    ).catch((e: unknown) => e);
    expect(isDriverError(err, DriverErrorCode.MinerUnavailable)).toBe(true);
  });

  it('refuses bad options before connecting', async () => {
    const traffic = new TrafficGenerator({ seed: SEED }, { accounts });
    const bad = [
      { load: { rate: 0 } },
      { load: { concurrency: 1.5 } },
      { until: { count: 0 } },
      { clients: [] },
      { clients: ['not an address'] },
      { miner: 'nowhere' },
      { metrics: ['no metrics here'] },
    ];
    for (const opts of bad) {
      const err = await LoadDriver.create(
        { clients: ['127.0.0.1:1'], miner: '127.0.0.1:1', ...opts },
        { traffic, accounts },
      ).catch((e: unknown) => e);
      expect(
        isWorkloadError(err, WorkloadErrorCode.BadOptions) || isDriverError(err, DriverErrorCode.BadEndpoint),
      ).toBe(true);
    }
  });
});
