/**
 * The shm topology (deploy/topologies/shm.json) for real: two storage processes that export their
 * node regions under /dev/shm, a miner, and a client reading with --storage-transport shm. Ether
 * sent through the client's JSON-RPC commits and reads back, with the client's state reads
 * answered by one-sided walks (its metrics count them) — and the regions are gone after stop.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, readTopology } from '@monsoon/cli';
import { killLeftovers, logLines, tempDir } from '@monsoon/test-utils';
import { AccountSet } from '@monsoon/workload';
import { JsonRpcProvider, Wallet } from 'ethers';

const SHM = fileURLToPath(new URL('../../../../deploy/topologies/shm.json', import.meta.url));
const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;

let root: { dir: string; remove: () => Promise<void> };
let cluster: Cluster;
let provider: JsonRpcProvider;

beforeAll(async () => {
  root = await tempDir('monsoon-cluster-shm-');
  cluster = await Cluster.start(await readTopology(SHM), { dir: root.dir, startTimeoutMs: 30_000 });
  provider = new JsonRpcProvider(cluster.clients[0]!.rpc, Number(cluster.genesis.chainId), {
    staticNetwork: true,
    cacheTimeout: -1,
  });
  provider.pollingInterval = 100;
}, 60_000);

afterAll(async () => {
  provider?.destroy();
  if (cluster !== undefined) {
    await cluster.stop();
    killLeftovers(cluster.processes.map((p) => p.pid));
  }
  await root.remove();
});

/** A counter's value in a Prometheus text page. */
function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`${name} is not in the metrics page`);
  return Number(line.split(' ')[1]);
}

describe('the shm topology', () => {
  it('commits transfers read over shared memory, BatchGet only where a walk could not answer', async () => {
    const accounts = await AccountSet.create({
      seed: new TextEncoder().encode(cluster.genesis.accounts!.seed),
      count: 300,
    });
    const regions: string[] = [];
    for (const s of cluster.storage) {
      const listening = (await logLines(s.logFile))
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === 'listening');
      expect(listening.region).toMatch(/^\/dev\/shm\/monsoon-storage-\d+\.region$/);
      regions.push(listening.region);
      expect(existsSync(listening.region)).toBe(true);
    }
    for (let k = 0; k < 3; k++) {
      const wallet = new Wallet(hex(accounts.privateKey(10 + k)), provider);
      const to = hex(accounts.address(40 + k));
      const before = await provider.getBalance(to);
      const receipt = await (await wallet.sendTransaction({ to, value: 777n })).wait();
      expect(receipt?.status).toBe(1);
      expect(await provider.getBalance(to, receipt!.blockNumber)).toBe(before + 777n);
    }
    const page = await (await fetch(cluster.clients[0]!.metrics!)).text();
    expect(metric(page, 'monsoon_client_storage_one_sided_batches_total')).toBeGreaterThan(0);
    console.log(
      `shm cluster: one-sided batches ${metric(page, 'monsoon_client_storage_one_sided_batches_total')}, BatchGet calls ${metric(page, 'monsoon_client_storage_calls_total')}, retries ${metric(page, 'monsoon_client_storage_one_sided_retries_total')}`,
    );
    await cluster.stop();
    for (const r of regions) expect(existsSync(r)).toBe(false);
  });
});
