/**
 * The small topology (deploy/topologies/small.json) for real: two storage processes, a miner
 * and a client, started from the built role CLIs with a generated genesis. Every role listens
 * (and serves metrics), ethers sends ether through the client's JSON-RPC and gets its receipt,
 * a process killed with SIGKILL is reported with its log tail, and stop() leaves no process.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, type ClusterError, ClusterErrorCode, readTopology } from '@monsoon/cli';
import { isAlive, killLeftovers, logLines, tempDir } from '@monsoon/test-utils';
import { AccountSet, defaultGenesisOptions } from '@monsoon/workload';
import { JsonRpcProvider, Wallet } from 'ethers';

const SMALL = fileURLToPath(new URL('../../../../deploy/topologies/small.json', import.meta.url));
const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;

let root: { dir: string; remove: () => Promise<void> };
let cluster: Cluster;
let provider: JsonRpcProvider;
const failures: ClusterError[] = [];
const waiting: Array<() => void> = [];

beforeAll(async () => {
  root = await tempDir('monsoon-cluster-small-');
  cluster = await Cluster.start(await readTopology(SMALL), {
    dir: root.dir,
    startTimeoutMs: 30_000,
    onFailure: (e) => {
      failures.push(e);
      for (const resolve of waiting.splice(0)) resolve();
    },
  });
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

describe('the small topology', () => {
  it('has every role listening, storage holding all 16 shards', async () => {
    expect(cluster.storage.map((s) => s.shards)).toEqual(['0-7', '8-15']);
    expect(cluster.miners).toHaveLength(1);
    expect(cluster.clients).toHaveLength(1);
    expect(cluster.genesis).toMatchObject({
      accounts: { seed: 'monsoon', count: 300 },
      chainId: defaultGenesisOptions.chainId,
    });
    for (const p of cluster.processes) {
      expect(isAlive(p.pid)).toBe(true);
      const res = await fetch(p.metrics!);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain(`monsoon_`);
    }
    expect(await provider.send('eth_chainId', [])).toBe(`0x${defaultGenesisOptions.chainId.toString(16)}`);
  });

  it('commits an ether transfer sent with ethers through the JSON-RPC endpoint', async () => {
    const accounts = await AccountSet.create({
      seed: new TextEncoder().encode(cluster.genesis.accounts!.seed),
      count: 300,
    });
    const wallet = new Wallet(hex(accounts.privateKey(7)), provider);
    const to = hex(accounts.address(8));
    const before = await provider.getBalance(to);
    const tx = await wallet.sendTransaction({ to, value: 12_345n });
    const receipt = await tx.wait();
    expect(receipt?.status).toBe(1);
    expect(await provider.getBalance(to, receipt!.blockNumber)).toBe(before + 12_345n);
  });

  it('reports a process killed with SIGKILL with its log tail', async () => {
    const victim = cluster.storage[1]!;
    const reported = new Promise<void>((resolve) => waiting.push(resolve));
    process.kill(victim.pid, 'SIGKILL');
    await reported;
    expect(failures).toHaveLength(1);
    const error = failures[0]!;
    expect(error.code).toBe(ClusterErrorCode.ProcessExited);
    expect(error.message).toContain(
      `storage-1 (pid ${victim.pid}) was killed by SIGKILL while the cluster was running`,
    );
    const tail = error.meta.tail as string[];
    expect(tail.length).toBeGreaterThan(0);
    expect(tail.length).toBeLessThanOrEqual(20);
    expect(tail).toEqual((await logLines(victim.logFile)).slice(-tail.length));
    for (const line of tail) expect(error.message).toContain(line);
  });

  it('stops every other process cleanly and leaves none running', async () => {
    const stopped = await cluster.stop();
    expect(stopped.map((s) => s.name)).toEqual(['client-0', 'miner-0', 'storage-0', 'storage-1']);
    for (const s of stopped) {
      if (s.name === 'storage-1') expect(s.signal).toBe('SIGKILL');
      else expect(s).toMatchObject({ code: 0, killed: false });
    }
    for (const p of cluster.processes) expect(isAlive(p.pid)).toBe(false);
    expect(failures).toHaveLength(1);
  });
});
