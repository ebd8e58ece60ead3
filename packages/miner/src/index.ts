export {
  defaultRecoveryThreads,
  MINER_OPTIONS,
  type MinerRoleConfig,
  minerRole,
  runMiner,
} from './cli/minerCommand.js';
export {
  type ChainBlock,
  defaultMinerOptions,
  inlineRecovery,
  Miner,
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
  type StorageCounters,
} from './minerNode.js';
