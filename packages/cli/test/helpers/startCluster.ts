/** A real cluster for an e2e test, with the keys of its genesis accounts. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, type ClusterOptions, type Topology } from '@monsoon/cli';
import { AccountSet } from '@monsoon/workload';

/** A started cluster, its accounts, and the teardown that stops it and removes its directory. */
export interface StartedCluster {
  readonly cluster: Cluster;
  readonly accounts: AccountSet;
  readonly stop: () => Promise<void>;
}

/** Starts `topology` in a fresh temporary directory (`prefix`…), account keys cached inside it. */
export async function startCluster(
  topology: Topology,
  prefix: string,
  options: Partial<ClusterOptions> = {},
): Promise<StartedCluster> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const cacheDir = join(dir, 'accounts');
  const cluster = await Cluster.start(topology, { ...options, dir, cacheDir });
  const stop = async () => {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const accounts = await AccountSet.create({
      seed: new TextEncoder().encode(topology.seed),
      count: topology.accounts,
      cacheDir,
    });
    return { cluster, accounts, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
