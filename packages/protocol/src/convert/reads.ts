/** Converters for the storage node's single reads: GetAccount, GetStorage, GetCode, GetNodes, GetShardRoots. */
import type {
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
} from '../domain/reads.js';
import type * as pb from '../generated/monsoon/storage/v1/storage.js';
import {
  ADDRESS_LENGTH,
  consistent,
  fixed,
  fixedList,
  HASH_LENGTH,
  minimalBytes,
  nonEmptyList,
  omitLevels,
  plain,
  SLOT_LENGTH,
  uint64,
} from './checks.js';
import { blockRefFromProto, blockRefToProto, shardRootFromProto, shardRootToProto } from './common.js';
import { shardCount, uniqueShards } from './shards.js';

/** Proofs are lists of RLP nodes; an empty node is never valid. */
const proof = nonEmptyList;

/** An account's RLP is at least 70 bytes when present; empty on the wire means absent. */
function accountRlpToProto(rlp: Uint8Array | undefined, field: string): Uint8Array {
  if (rlp === undefined) return new Uint8Array(0);
  consistent(rlp.length > 0, field, 'undefined for an absent account, else its RLP', 'empty bytes');
  return plain(rlp);
}

function accountRlpFromProto(rlp: Uint8Array): Uint8Array | undefined {
  return rlp.length === 0 ? undefined : plain(rlp);
}

// ------------------------------------------------------------------ GetAccount

export function getAccountRequestToProto(r: GetAccountRequest): pb.GetAccountRequest {
  return {
    address: fixed(r.address, ADDRESS_LENGTH, 'address'),
    at: blockRefToProto(r.at),
    omitLevels: omitLevels(r.omitLevels, 'omitLevels'),
  };
}

export function getAccountRequestFromProto(r: pb.GetAccountRequest): GetAccountRequest {
  return {
    address: fixed(r.address, ADDRESS_LENGTH, 'address'),
    at: blockRefFromProto(r.at),
    omitLevels: omitLevels(r.omitLevels, 'omitLevels'),
  };
}

export function getAccountResponseToProto(r: GetAccountResponse): pb.GetAccountResponse {
  return {
    blockHash: fixed(r.blockHash, HASH_LENGTH, 'blockHash'),
    number: uint64(r.number, 'number'),
    accountRlp: accountRlpToProto(r.accountRlp, 'accountRlp'),
    proof: proof(r.proof, 'proof'),
  };
}

export function getAccountResponseFromProto(r: pb.GetAccountResponse): GetAccountResponse {
  return {
    blockHash: fixed(r.blockHash, HASH_LENGTH, 'blockHash'),
    number: uint64(r.number, 'number'),
    accountRlp: accountRlpFromProto(r.accountRlp),
    proof: proof(r.proof, 'proof'),
  };
}

// ------------------------------------------------------------------ GetStorage

function getStorageRequest(r: pb.GetStorageRequest | GetStorageRequest) {
  return {
    address: fixed(r.address, ADDRESS_LENGTH, 'address'),
    slot: fixed(r.slot, SLOT_LENGTH, 'slot'),
    omitLevels: omitLevels(r.omitLevels, 'omitLevels'),
  };
}

export function getStorageRequestToProto(r: GetStorageRequest): pb.GetStorageRequest {
  return { ...getStorageRequest(r), at: blockRefToProto(r.at) };
}

export function getStorageRequestFromProto(r: pb.GetStorageRequest): GetStorageRequest {
  return { ...getStorageRequest(r), at: blockRefFromProto(r.at) };
}

function getStorageResponse(r: pb.GetStorageResponse | GetStorageResponse): GetStorageResponse {
  return {
    blockHash: fixed(r.blockHash, HASH_LENGTH, 'blockHash'),
    number: uint64(r.number, 'number'),
    value: minimalBytes(r.value, 32, 'value'),
    accountProof: proof(r.accountProof, 'accountProof'),
    storageProof: proof(r.storageProof, 'storageProof'),
  };
}

export function getStorageResponseToProto(r: GetStorageResponse): pb.GetStorageResponse {
  const c = getStorageResponse(r);
  return { ...c, accountProof: [...c.accountProof], storageProof: [...c.storageProof] };
}

export function getStorageResponseFromProto(r: pb.GetStorageResponse): GetStorageResponse {
  return getStorageResponse(r);
}

// ------------------------------------------------------------------ GetCode

export function getCodeRequestToProto(r: GetCodeRequest): pb.GetCodeRequest {
  return { codeHash: fixed(r.codeHash, HASH_LENGTH, 'codeHash') };
}

export function getCodeRequestFromProto(r: pb.GetCodeRequest): GetCodeRequest {
  return { codeHash: fixed(r.codeHash, HASH_LENGTH, 'codeHash') };
}

export function getCodeResponseToProto(r: GetCodeResponse): pb.GetCodeResponse {
  return { code: plain(r.code) };
}

export function getCodeResponseFromProto(r: pb.GetCodeResponse): GetCodeResponse {
  return { code: plain(r.code) };
}

// ------------------------------------------------------------------ GetNodes

/** A nibble path is at most a 64-nibble account key then a 64-nibble storage key. */
const MAX_NODE_PATH = 128;

function nodePaths(hashes: readonly Uint8Array[], paths: readonly Uint8Array[] | undefined): Uint8Array[] {
  if (paths === undefined || paths.length === 0) return [];
  consistent(
    paths.length === hashes.length,
    'paths',
    `none or one per hash (${hashes.length})`,
    `${paths.length} paths`,
  );
  return paths.map((p, i) => {
    consistent(p.length <= MAX_NODE_PATH, `paths[${i}]`, `at most ${MAX_NODE_PATH} nibbles`, `${p.length}`);
    const bad = p.findIndex((n) => n > 15);
    consistent(bad < 0, `paths[${i}]`, 'nibbles 0-15', `${p[bad]} at ${bad}`);
    return plain(p);
  });
}

export function getNodesRequestToProto(r: GetNodesRequest): pb.GetNodesRequest {
  return { hashes: fixedList(r.hashes, HASH_LENGTH, 'hashes'), paths: nodePaths(r.hashes, r.paths) };
}

export function getNodesRequestFromProto(r: pb.GetNodesRequest): GetNodesRequest {
  const hashes = fixedList(r.hashes, HASH_LENGTH, 'hashes');
  return { hashes, paths: nodePaths(hashes, r.paths) };
}

/** An unknown node is sent as empty bytes. */
export function getNodesResponseToProto(r: GetNodesResponse): pb.GetNodesResponse {
  return { nodes: r.nodes.map((n) => (n === undefined ? new Uint8Array(0) : plain(n))) };
}

/** With the request, also checks there is one node per requested hash. */
export function getNodesResponseFromProto(
  r: pb.GetNodesResponse,
  request?: GetNodesRequest,
): GetNodesResponse {
  if (request !== undefined) {
    consistent(
      r.nodes.length === request.hashes.length,
      'nodes',
      `one node per requested hash (${request.hashes.length})`,
      `${r.nodes.length} nodes`,
    );
  }
  return { nodes: r.nodes.map((n) => (n.length === 0 ? undefined : plain(n))) };
}

// ------------------------------------------------------------------ GetShardRoots

export function getShardRootsRequestToProto(r: GetShardRootsRequest): pb.GetShardRootsRequest {
  return { at: blockRefToProto(r.at) };
}

export function getShardRootsRequestFromProto(r: pb.GetShardRootsRequest): GetShardRootsRequest {
  return { at: blockRefFromProto(r.at) };
}

export function getShardRootsResponseToProto(r: GetShardRootsResponse): pb.GetShardRootsResponse {
  const count = shardCount(r.shardCount, 'shardCount');
  uniqueShards(r.roots, count, 'roots');
  return {
    blockHash: fixed(r.blockHash, HASH_LENGTH, 'blockHash'),
    number: uint64(r.number, 'number'),
    stateRoot: fixed(r.stateRoot, HASH_LENGTH, 'stateRoot'),
    shardCount: count,
    roots: r.roots.map((s, i) => shardRootToProto(s, count, `roots[${i}]`)),
    region:
      r.region === undefined
        ? undefined
        : {
            path: r.region.path,
            generation: uint64(r.region.generation, 'region.generation'),
            bytes: uint64(r.region.bytes, 'region.bytes'),
          },
  };
}

export function getShardRootsResponseFromProto(r: pb.GetShardRootsResponse): GetShardRootsResponse {
  const count = shardCount(r.shardCount, 'shardCount');
  uniqueShards(r.roots, count, 'roots');
  return {
    blockHash: fixed(r.blockHash, HASH_LENGTH, 'blockHash'),
    number: uint64(r.number, 'number'),
    stateRoot: fixed(r.stateRoot, HASH_LENGTH, 'stateRoot'),
    shardCount: count,
    roots: r.roots.map((s, i) => shardRootFromProto(s, count, `roots[${i}]`)),
    ...(r.region !== undefined && r.region.path !== ''
      ? {
          region: {
            path: r.region.path,
            generation: uint64(r.region.generation, 'region.generation'),
            bytes: uint64(r.region.bytes, 'region.bytes'),
          },
        }
      : {}),
  };
}
