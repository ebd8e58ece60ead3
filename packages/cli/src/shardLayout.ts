import { ClusterError, ClusterErrorCode } from './clusterError.js';
import type { StorageTopology } from './topology.js';

/**
 * `shardCount` shards cut into `groups` contiguous ranges as even as can be (sizes differ by at
 * most one), as `--shards` specs: 16 in 2 → `0-7`, `8-15`; 16 in 3 → `0-4`, `5-9`, `10-15`.
 */
export function shardGroups(shardCount: number, groups: number): string[] {
  if (!Number.isInteger(groups) || groups < 1 || groups > shardCount) {
    throw new ClusterError(
      ClusterErrorCode.BadTopology,
      `shard groups: expected an integer in [1, ${shardCount}], found ${groups}`,
      { shardCount, groups },
    );
  }
  const specs: string[] = [];
  for (let g = 0; g < groups; g++) {
    const from = Math.floor((g * shardCount) / groups);
    const to = Math.floor(((g + 1) * shardCount) / groups) - 1;
    specs.push(from === to ? String(from) : `${from}-${to}`);
  }
  return specs;
}

/**
 * The `--shards` spec of each storage process, in process order: `processes / replicas` shard
 * groups, the replicas of one group next to each other (4 processes, 2 replicas, 16 shards →
 * `0-7`, `0-7`, `8-15`, `8-15`).
 */
export function storageLayout(storage: StorageTopology, shardCount: number): string[] {
  const groups = shardGroups(shardCount, storage.processes / storage.replicas);
  return groups.flatMap((spec) => Array.from({ length: storage.replicas }, () => spec));
}
