/**
 * @monsoon/protocol: what crosses the wire.
 * - Domain types (`domain/`): plain TypeScript, bigint numbers, Uint8Array bytes.
 * - Converters (`convert/`), `xToProto` / `xFromProto`: validate both ways, throw ProtocolError.
 * - Generated code (ts-proto, from protos/), for the edges only: a server is built from a
 *   `*ServiceDefinition` and a `*ServiceServer` implementation, a client from a
 *   `*ServiceClient`; message types live in the `*Pb` namespaces. Domain code never uses them.
 */
export {
  applyBlockRequestFromBytes,
  applyBlockRequestFromProto,
  applyBlockRequestToProto,
  applyBlockResponseFromProto,
  applyBlockResponseToProto,
  type ShardContext,
} from './convert/applyBlock.js';
export {
  batchGetRequestFromProto,
  batchGetRequestToProto,
  batchGetResponseBytes,
  batchGetResponseFromProto,
  batchGetResponseToProto,
} from './convert/batchGet.js';
export {
  sendResultsFromProto,
  sendResultsToProto,
  sendTransactionsRequestFromProto,
  sendTransactionsRequestToProto,
} from './convert/clientApi.js';
export {
  blockRefFromProto,
  blockRefToProto,
  headFromProto,
  headToProto,
  nodeBagFromProto,
  nodeBagToProto,
  shardRootFromProto,
  shardRootToProto,
} from './convert/common.js';
export {
  blockWithReceiptsFromProto,
  blockWithReceiptsToProto,
  peerBlockFromProto,
  peerBlockToProto,
  peerMessageFromProto,
  peerMessageToProto,
} from './convert/peer.js';
export {
  connectRdmaRequestFromProto,
  connectRdmaRequestToProto,
  connectRdmaResponseFromProto,
  connectRdmaResponseToProto,
  GID_LENGTH,
} from './convert/rdma.js';
export {
  getAccountRequestFromProto,
  getAccountRequestToProto,
  getAccountResponseFromProto,
  getAccountResponseToProto,
  getCodeRequestFromProto,
  getCodeRequestToProto,
  getCodeResponseFromProto,
  getCodeResponseToProto,
  getNodesRequestFromProto,
  getNodesRequestToProto,
  getNodesResponseFromProto,
  getNodesResponseToProto,
  getShardRootsRequestFromProto,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  getShardRootsResponseToProto,
  getStorageRequestFromProto,
  getStorageRequestToProto,
  getStorageResponseFromProto,
  getStorageResponseToProto,
} from './convert/reads.js';
export {
  getBlockUpdatesRequestFromProto,
  getBlockUpdatesRequestToProto,
  getBlockUpdatesResponseFromProto,
  getBlockUpdatesResponseToProto,
  getCheckpointRequestFromProto,
  getCheckpointRequestToProto,
} from './convert/replica.js';
export {
  SENDER_KEY_LENGTH,
  submitRequestFromProto,
  submitRequestToProto,
  submitResponseFromProto,
  submitResponseToProto,
  txStatusFromProto,
  txStatusToProto,
} from './convert/submit.js';
export type {
  AccountChange,
  AccountDeletion,
  AccountUpdate,
  ApplyBlockRequest,
  ApplyBlockResponse,
  ShardUpdate,
  StorageWrite,
} from './domain/applyBlock.js';
export {
  type AccountQuery,
  type AccountResult,
  type BatchGetRequest,
  type BatchGetResponse,
  type PackedBag,
  withPackedBag,
} from './domain/batchGet.js';
export {
  type BlockHeader,
  checkPow,
  decodeHeader,
  encodeHeader,
  headerHash,
  powTarget,
  sealHash,
  sealPow,
} from './domain/blockHeader.js';
export { atHash, atNumber, type BlockRef, HEAD } from './domain/blockRef.js';
export {
  type ChainConfig,
  DEFAULT_CHAIN_ID,
  FORKS,
  type Fork,
  forkAtLeast,
  parseChainConfig,
} from './domain/chainConfig.js';
export type { RefusedBy, SendResult, SendTransactionsRequest } from './domain/clientApi.js';
export {
  DEFAULT_MIN_DIFFICULTY,
  type Genesis,
  type GenesisAccount,
  genesisHeader,
  minDifficultyOf,
  parseGenesis,
} from './domain/genesis.js';
export type { Head } from './domain/head.js';
export type { BlockWithReceipts, PeerBlock, PeerMessage } from './domain/peer.js';
export type { ConnectRdmaRequest, ConnectRdmaResponse, RdmaEndpoint } from './domain/rdma.js';
export type {
  ExportedRegion,
  GetAccountRequest,
  GetAccountResponse,
  GetCodeRequest,
  GetCodeResponse,
  GetNodesRequest,
  GetNodesResponse,
  GetShardRootsRequest,
  GetShardRootsResponse,
  GetStorageRequest,
  GetStorageResponse,
} from './domain/reads.js';
export type {
  GetBlockUpdatesRequest,
  GetBlockUpdatesResponse,
  GetCheckpointRequest,
} from './domain/replica.js';
export { type ShardCount, ShardLayout } from './domain/shardLayout.js';
export { SHARD_COUNTS, type ShardRoot } from './domain/shardRoot.js';
export { applyAccountUpdate, genesisState, insertGenesisAccount } from './domain/stateWrites.js';
export { type SubmitRequest, type SubmitResponse, type TxResult, TxStatus } from './domain/submit.js';
export * as clientPb from './generated/monsoon/client/v1/client.js';
export {
  ClientServiceClient,
  type ClientServiceServer,
  ClientServiceService as ClientServiceDefinition,
} from './generated/monsoon/client/v1/client.js';
export * as commonPb from './generated/monsoon/common/v1/common.js';
export * as minerPb from './generated/monsoon/miner/v1/miner.js';
export {
  MinerServiceClient,
  type MinerServiceServer,
  MinerServiceService as MinerServiceDefinition,
} from './generated/monsoon/miner/v1/miner.js';
export * as storagePb from './generated/monsoon/storage/v1/storage.js';
export {
  StorageServiceClient,
  type StorageServiceServer,
  StorageServiceService as StorageServiceDefinition,
} from './generated/monsoon/storage/v1/storage.js';
export {
  type FieldFault,
  isProtocolError,
  ProtocolError,
  ProtocolErrorCode,
  type ProtocolErrorMeta,
} from './protocolError.js';
