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
  type MinerLogger,
  MinerNode,
  type MinerNodeOptions,
  type StorageCounters,
  silentMinerLogger,
} from './minerNode.js';
