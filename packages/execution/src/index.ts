export {
  type BlockEnv,
  BlockExecutor,
  type BlockExecutorOptions,
  blockOf,
  defaultEngine,
  EvmPool,
  type ExecutedBlock,
  type ExecutedReceipt,
  engineFor,
  type TxOutcome,
} from './blockExecutor.js';
export { orderedTrieRoot, receiptsRoot, transactionsRoot } from './blockRoots.js';
export {
  assertSupportedFork,
  type ChainRules,
  chainRulesOf,
  defaultChainRules,
  FORKS,
  type Fork,
  forkAtLeast,
  makeCommon,
} from './chain.js';
export { ExecutionError, ExecutionErrorCode, isExecutionError } from './executionError.js';
export { BLOOM_BYTES, EncodedReceipts, encodeReceipt, type Log, logsBloom, type Receipt } from './receipt.js';
export {
  addonRecoverer,
  type PackedRecover,
  packageRecoverer,
  REQUEST_BYTES_PER_ITEM,
} from './recoveryWorker.js';
export {
  type BatchItem,
  type EngineName,
  type RevmBatchRun,
  RevmEngine,
  type RevmOutcome,
  revmAvailable,
} from './revmEngine.js';
export {
  cacheSenderPublicKey,
  defaultSenderRecoveryPoolOptions,
  type EcdsaSignature,
  ecdsaSign,
  keysAt,
  nativeCustomCrypto,
  nativeEcrecover,
  type RecoverableTx,
  type RecoveryItem,
  recoveredSenderKey,
  recoverSenders,
  type Secp256k1Backend,
  SenderRecoveryPool,
  type SenderRecoveryPoolOptions,
  secp256k1Backend,
} from './senderRecovery.js';
export {
  type AccessListBytes,
  decodeSignedTx,
  type ExecutableTx,
  executableTx,
  isEthereumjsTx,
  SignedTx,
} from './signedTx.js';
export {
  decodeTransaction,
  SECP256K1_HALF_N,
  SECP256K1_N,
  signatureSpansError,
  signatureValuesError,
  type TxInfo,
  txInfo,
} from './transactions.js';
export {
  type AccessSet,
  keyBytes,
  TreeStateManager,
  type TreeStateManagerOptions,
  WriteSet,
} from './treeStateManager.js';
export { checkTransaction, type TxFees, txFees } from './txChecks.js';
export { emptyAccessSet, mergeAccessSet, type PreExecuted, preExecute, witnessOf } from './witness.js';
