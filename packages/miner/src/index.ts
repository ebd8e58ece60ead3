export {
  type ChainBlock,
  defaultMinerOptions,
  Miner,
  type MinerCounters,
  type MinerOptions,
  type SealedBlock,
} from './miner.js';
export {
  defaultMinerNodeOptions,
  type MinerLogger,
  MinerNode,
  type MinerNodeOptions,
  type StorageCounters,
  silentMinerLogger,
} from './minerNode.js';
