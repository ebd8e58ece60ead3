export {
  type BlockEnv,
  BlockExecutor,
  type BlockExecutorOptions,
  type ExecutedBlock,
  type ExecutedReceipt,
  type ReceiptLog,
  type TxOutcome,
} from './blockExecutor.js';
export { type ChainRules, defaultChainRules, HARDFORK, makeCommon } from './chain.js';
export { ExecutionError, ExecutionErrorCode, isExecutionError } from './executionError.js';
export {
  type AccessSet,
  keyBytes,
  TreeStateManager,
  type TreeStateManagerOptions,
  WriteSet,
} from './treeStateManager.js';
export { checkTransaction, type TxFees, txFees } from './txChecks.js';
