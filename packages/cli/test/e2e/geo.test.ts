/**
 * Two regions 100 ms apart on this machine (toxiproxy, installed into .tools/ on first use): a
 * storage replica of every shard and a client in each, the miner in the first. The workload's mix
 * goes in through both clients (the far one pre-executes against its own region's replica and
 * submits across the link); every transaction commits, and @ethereumjs/vm replaying each block
 * over @ethereumjs/mpt gives the block's state root. The delay is real: a call from the far
 * region to a process of the near one takes at least the RTT (a lower bound only, which a
 * cluster handing out direct addresses, or a proxy without its toxics, would fail).
 */
import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Cluster, installToxiproxy, parseTopology } from '@monsoon/cli';
import { unary } from '@monsoon/edge';
import {
  getShardRootsRequestToProto,
  HEAD,
  MinerServiceClient,
  StorageServiceClient,
} from '@monsoon/protocol';
import { logLines } from '@monsoon/test-utils';
import { type AccountSet, LoadDriver, TrafficGenerator } from '@monsoon/workload';
import { chainBlocks, replayChain } from '../helpers/chain.js';
import { type StartedCluster, startCluster } from '../helpers/startCluster.js';

const RTT_MS = 100;
const NEAR = 'us-west';
const FAR = 'ap-northeast';
const TXS = 300;

const topology = parseTopology(
  {
    description: 'geo test: two regions 100 ms apart',
    accounts: 120,
    seed: 'geo',
    storage: { processes: 2, replicas: 2, fsync: 'none' },
    miners: { count: 1, blockIntervalMs: 250, retention: 2 },
    clients: { count: 2 },
    regions: {
      names: [NEAR, FAR],
      rttMs: [
        [0, RTT_MS],
        [RTT_MS, 0],
      ],
      storage: [NEAR, FAR],
      miners: [NEAR],
      clients: [NEAR, FAR],
    },
  },
  'geo',
);

let started: StartedCluster | undefined;
let cluster: Cluster;
let accounts: AccountSet;

beforeAll(async () => {
  const toxiproxy = await installToxiproxy();
  started = await startCluster(topology, 'monsoon-geo-', { toxiproxy });
  ({ cluster, accounts } = started);
}, 600_000);

afterAll(async () => {
  await started?.stop();
});

/** Milliseconds `call` takes. */
async function timed(call: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await call();
  return performance.now() - t0;
}

describe('two regions 100 ms apart', () => {
  it('delays every call from the far region by at least the RTT', async () => {
    const [near, far] = cluster.storage;
    expect([near!.region, far!.region]).toEqual([NEAR, FAR]);
    const storage = new StorageServiceClient(cluster.addressFrom(near!, FAR), credentials.createInsecure());
    const miner = new MinerServiceClient(
      cluster.addressFrom(cluster.miners[0]!, FAR),
      credentials.createInsecure(),
    );
    try {
      // The first call also connects; the later ones ride the open connection: each pays the RTT.
      for (let i = 0; i < 3; i++) {
        const ms = await timed(() =>
          unary(storage, storage.getShardRoots, getShardRootsRequestToProto({ at: HEAD })),
        );
        expect(ms).toBeGreaterThanOrEqual(RTT_MS);
      }
      // The miner's head stream, as the far client follows it: the first head is an RTT away.
      const firstHead = await timed(
        () =>
          new Promise<void>((resolve, reject) => {
            const call = miner.subscribeHeads({});
            call.once('data', () => {
              call.cancel();
              resolve();
            });
            call.on('error', (e) => (String(e).includes('CANCELLED') ? undefined : reject(e)));
          }),
      );
      expect(firstHead).toBeGreaterThanOrEqual(RTT_MS);
    } finally {
      storage.close();
      miner.close();
    }
    // The far client reads its own region's replica first, the near one through the link.
    const listening = (await logLines(cluster.clients[1]!.logFile))
      .map((l) => JSON.parse(l) as { msg?: string; storage?: string })
      .find((l) => l.msg === 'listening')!;
    expect(listening.storage!.split(' ').filter((w) => w.includes(':'))).toEqual([
      far!.address,
      near!.from![FAR],
    ]);
  });

  it('commits a workload through both regions; ethereumjs replays every block to the same root', async () => {
    const traffic = new TrafficGenerator({ chainId: BigInt(cluster.genesis.chainId ?? 1337) }, { accounts });
    const driver = await LoadDriver.create(
      {
        clients: cluster.clients.map((c) => c.grpc),
        miner: cluster.miners[0]!.address,
        load: { concurrency: 64 },
        until: { count: TXS },
      },
      { traffic, accounts },
    );
    const result = await driver.run();
    expect(result.counts.submitted).toBe(TXS);
    expect(result.counts.committed).toBe(TXS);
    expect(result.counts.rejected).toBe(0);
    expect(result.counts.dropped).toBe(0);

    const blocks = await chainBlocks(cluster.miners[0]!.address, TXS);
    const { included } = await replayChain(cluster.genesis.file, blocks);
    expect(included).toBe(TXS);
  });
});
