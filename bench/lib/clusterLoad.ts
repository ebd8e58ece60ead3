import type { Cluster } from '@monsoon/cli';
import { AccountSet, LoadDriver, type LoadProgress, TrafficGenerator } from '@monsoon/workload';

/** What {@link clusterLoad} drives. */
export interface ClusterLoadOptions {
  /** The genesis accounts' seed and count (the topology's). */
  readonly seed: string;
  readonly accounts: number;
  /** Where the account keys are cached between runs. */
  readonly cacheDir: string;
  /** Transactions kept in flight (closed loop). */
  readonly concurrency: number;
  /** Transactions sent per second instead (open loop): the same work for runs A/B-compared. */
  readonly rate?: number;
  readonly seconds: number;
  /** How long the drain may take (default: the driver's). */
  readonly drainTimeoutMs?: number;
  /** Read witness bytes from the clients' metrics. */
  readonly witnessMetrics: boolean;
  /** Transactions signed before the driver starts (TrafficGenerator.signAhead); 0: each as it is sent. */
  readonly signAhead?: number;
  /** Told the count signed ahead every 10,000. */
  readonly onSigned?: (signed: number) => void;
  readonly onProgress?: (p: LoadProgress) => void;
}

/**
 * A load driver over a started cluster: the workload's mix for its genesis accounts, closed loop
 * (or open, at `rate`) through every client's gRPC bulk path, inclusion seen in the first miner's block stream.
 */
export async function clusterLoad(cluster: Cluster, o: ClusterLoadOptions): Promise<LoadDriver> {
  const accounts = await AccountSet.create({
    seed: new TextEncoder().encode(o.seed),
    count: o.accounts,
    cacheDir: o.cacheDir,
  });
  const traffic = new TrafficGenerator({ chainId: BigInt(cluster.genesis.chainId ?? 1337) }, { accounts });
  if (o.signAhead !== undefined && o.signAhead > 0) traffic.signAhead(o.signAhead, o.onSigned);
  return LoadDriver.create(
    {
      clients: cluster.clients.map((c) => c.grpc),
      miner: cluster.miners[0]!.address,
      ...(o.witnessMetrics
        ? { metrics: cluster.clients.map((c) => c.metrics).filter((m): m is string => m !== undefined) }
        : {}),
      load: o.rate === undefined ? { concurrency: o.concurrency } : { rate: o.rate },
      until: { durationMs: o.seconds * 1000 },
      ...(o.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: o.drainTimeoutMs }),
    },
    { traffic, accounts, ...(o.onProgress === undefined ? {} : { onProgress: o.onProgress }) },
  );
}
