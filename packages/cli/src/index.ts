/**
 * @monsoon/cli: a whole Monsoon network on one machine.
 * - {@link Cluster}: starts storage nodes, miners and clients from a {@link Topology}, watches
 *   them, stops them in order; `npm run cluster` is its command line.
 * - {@link parseTopology} / {@link readTopology}: topology files (`deploy/topologies/*.json`),
 *   with `regions` for a geo topology, whose links {@link RegionLinks} emulates with toxiproxy.
 */
export {
  CLUSTER_DIR_MARKER,
  type ClientEndpoint,
  Cluster,
  type ClusterOptions,
  type ClusterProcess,
  type ClusterProgress,
  type DialedProcess,
  defaultClusterOptions,
  isTieredStorage,
  type MinerEndpoint,
  minerCoinbase,
  roleEnv,
  roleNodeArgs,
  type StoppedProcess,
  type StorageEndpoint,
  TIERED_MALLOC_ENV,
} from './cluster.js';
export { ClusterError, ClusterErrorCode, isClusterError } from './clusterError.js';
export { type ClusterGenesis, generateGenesis } from './clusterGenesis.js';
export { installToxiproxy, TOXIPROXY_INSTALLER } from './installToxiproxy.js';
export {
  DEFAULT_MALLOC_TRIM_SECONDS,
  MALLOC_TRIM_ENV,
  mallocTrimIntervalMs,
  startNativeHeapTrim,
} from './nativeHeapTrim.js';
export {
  DEFAULT_TOXIPROXY,
  defaultRegionLinksOptions,
  type RegionLink,
  RegionLinks,
  type RegionLinksOptions,
  requireToxiproxy,
  TOXIPROXY_VERSION,
  type ToxiproxyProxy,
  type ToxiproxyToxic,
} from './regionLinks.js';
export {
  bandwidthBetween,
  MAX_BANDWIDTH_MBPS,
  MAX_REGIONS,
  MAX_RTT_MS,
  type RegionTopology,
  regionsInUse,
  rttBetween,
} from './regionTopology.js';
export type { ProcessExit } from './roleProcess.js';
export { defaultRoleScripts, type Role, type RoleScripts } from './roleScripts.js';
export { shardGroups, storageLayout } from './shardLayout.js';
export {
  type ClientTopology,
  defaultTopology,
  FSYNC_POLICIES,
  type FsyncPolicy,
  MANAGED_FLAGS,
  MAX_ACCOUNTS,
  MAX_CLIENTS,
  MAX_MINERS,
  type MinerTopology,
  parseTopology,
  readTopology,
  type StorageTopology,
  type StorageTransport,
  type Topology,
  withStorageTransport,
} from './topology.js';
