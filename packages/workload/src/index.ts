/**
 * @monsoon/workload: the generator side of the load test.
 * - {@link AccountSet}: deterministic accounts from a seed, cached on disk.
 * - {@link buildGenesis} / {@link writeGenesisFile}: a geth-style genesis funding them with
 *   ether and MonsoonToken (an ERC-20 whose state lives in the genesis).
 * - {@link TrafficGenerator}: RainBlock's mainnet-like transaction mix, signed, with nonces.
 * - {@link LoadDriver}: drives that mix through Monsoon clients (open or closed loop), watches a
 *   miner's blocks for inclusion, and measures; {@link writeReport} writes JSON, Markdown and SVG.
 */
export {
  ACCOUNT_CACHE_HEADER_BYTES,
  ACCOUNT_RECORD_BYTES,
  accountCacheFile,
  readAccountCache,
  writeAccountCache,
} from './accountCache.js';
export {
  ACCOUNT_PROGRESS_STEP,
  type AccountCacheStatus,
  AccountSet,
  type AccountSetOptions,
  defaultDerivationWorkers,
  PARALLEL_MIN_ACCOUNTS,
  type ProgressCallback,
} from './accounts.js';
export { RUN_USAGE, runCommand } from './cli/runCommand.js';
export {
  ADDRESS_BYTES,
  type DerivedAccount,
  deriveAccount,
  deriveAccountRecords,
  derivePrivateKey,
  MAX_ACCOUNT_INDEX,
  PRIVATE_KEY_BYTES,
  PUBLIC_KEY_BYTES,
  privateKeyToAddress,
  privateKeyToPublicKey,
} from './deriveAccount.js';
export {
  BlockWatcher,
  type BlockWatcherOptions,
  defaultBlockWatcherOptions,
  type WatchedBlock,
} from './driver/blockWatcher.js';
export { type ChartOptions, chartSvg, defaultChartOptions, niceStep } from './driver/chartSvg.js';
export { type ClientEndpoint, endpointName, parseClientEndpoint } from './driver/clientEndpoint.js';
export { DriverError, DriverErrorCode, isDriverError } from './driver/driverError.js';
export { GrpcSubmitter } from './driver/grpcSubmitter.js';
export { JSON_RPC_MAX_BATCH, JsonRpcSubmitter } from './driver/jsonRpcSubmitter.js';
export {
  defaultLoadDriverOptions,
  LoadDriver,
  type LoadDriverModules,
  type LoadDriverOptions,
  type LoadProgress,
  type LoadShape,
  type RunLength,
} from './driver/loadDriver.js';
export { formatLoadProgress, type LoadProgressLine, ttyLoadProgress } from './driver/loadProgressLine.js';
export type {
  LoadCounts,
  LoadResult,
  LoadRunConfig,
  ReasonSamples,
  SecondSample,
  StopReason,
  WitnessReport,
} from './driver/loadResult.js';
export { type LatencySummary, percentile, summarizeLatency } from './driver/percentiles.js';
export { resignWithNonce } from './driver/resignWithNonce.js';
export {
  describeSteadiness,
  runSteadiness,
  type Steadiness,
  type SteadinessOptions,
  steadiness,
} from './driver/steadiness.js';
export { describeLoad, summaryMarkdown } from './driver/summaryMarkdown.js';
export {
  ACCEPTED,
  REFUSERS,
  type Refuser,
  type SubmitOutcome,
  type TxSubmitter,
} from './driver/txSubmitter.js';
export {
  metricsUrl,
  parsePrometheusText,
  scrapeWitnessCounters,
  WITNESS_METRICS,
  type WitnessCounters,
} from './driver/witnessMetrics.js';
export { type ReportFiles, writeReport } from './driver/writeReport.js';
export {
  type AddressSource,
  buildGenesis,
  defaultGenesisOptions,
  GENESIS_CHUNK_ACCOUNTS,
  type GenesisAllocEntry,
  type GenesisDocument,
  type GenesisFileSummary,
  type GenesisOptions,
  writeGenesisFile,
} from './genesisFile.js';
export { LevelTrieDb } from './levelTrieDb.js';
export { Prng } from './prng.js';
export { deriveAccountRecordsInWorkers, publicKeysPacked } from './publicKeyWorkers.js';
export {
  type ReferenceBlockEnv,
  type ReferenceBlockResult,
  ReferenceChain,
  type ReferenceChainOptions,
} from './referenceChain.js';
export {
  type FeeMarketTxFields,
  type LegacyTxFields,
  type SignedTransaction,
  signingHash,
  signTransaction,
  signTransactionWithEthereumjs,
  type TxFields,
  type TxType,
} from './signTransaction.js';
export { tokenArtifact } from './tokenArtifact.js';
export {
  encodeBalanceOf,
  encodeTokenTransfer,
  encodeTotalSupply,
  functionSelector,
  TRANSFER_EVENT_TOPIC,
} from './tokenCalldata.js';
export {
  DEFAULT_TOKEN_ADDRESS,
  TOKEN_ALLOWANCES_SLOT,
  TOKEN_BALANCES_SLOT,
  TOKEN_TOTAL_SUPPLY_SLOT,
  tokenAllowanceSlot,
  tokenBalanceSlot,
  tokenBalanceSlots,
  tokenRuntimeCode,
} from './tokenStorage.js';
export {
  defaultTrafficOptions,
  type GeneratedTx,
  type KeySource,
  TrafficGenerator,
  type TrafficOptions,
  type TxEncoder,
  type TxKind,
} from './traffic.js';
export { ttyProgress } from './ttyProgress.js';
export { isWorkloadError, WorkloadError, WorkloadErrorCode } from './workloadError.js';
