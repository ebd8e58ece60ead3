export { BlockLog, type BlockLogOptions, readChainCheckpoint } from './blockLog.js';
export {
  defaultRecoveryThreads,
  MINER_OPTIONS,
  type MinerRoleConfig,
  minerRole,
  runMiner,
} from './cli/minerCommand.js';
export { HeaderArchive } from './headerArchive.js';
export {
  type ChainBlock,
  defaultMinerOptions,
  inlineRecovery,
  KEEP_BLOCKS_FLOOR,
  Miner,
  type MinerCheckpoint,
  type MinerCounters,
  type MinerOptions,
  type PreparedSubmission,
  type PreparedTx,
  type SealedBlock,
  type SenderRecovery,
} from './miner.js';
export {
  defaultMinerNodeOptions,
  MinerNode,
  type MinerNodeOptions,
} from './minerNode.js';
export { defaultPeerSyncOptions, type PeerLink, PeerSync, type PeerSyncOptions } from './peerSync.js';
export {
  defaultStoragePeerOptions,
  type StorageCounters,
  StoragePeer,
  type StoragePeerOptions,
} from './storagePeer.js';
