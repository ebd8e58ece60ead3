/** Converters for what storage replicas ask each other: GetBlockUpdates, GetCheckpoint. */
import type {
  GetBlockUpdatesRequest,
  GetBlockUpdatesResponse,
  GetCheckpointRequest,
} from '../domain/replica.js';
import type * as pb from '../generated/monsoon/storage/v1/storage.js';
import { nonEmptyList, uint32, uint64 } from './checks.js';
import { blockRefFromProto, blockRefToProto } from './common.js';

export function getBlockUpdatesRequestToProto(r: GetBlockUpdatesRequest): pb.GetBlockUpdatesRequest {
  return { afterNumber: uint64(r.afterNumber, 'afterNumber'), count: uint32(r.count, 'count') };
}

export function getBlockUpdatesRequestFromProto(r: pb.GetBlockUpdatesRequest): GetBlockUpdatesRequest {
  return { afterNumber: uint64(r.afterNumber, 'afterNumber'), count: uint32(r.count, 'count') };
}

export function getBlockUpdatesResponseToProto(r: GetBlockUpdatesResponse): pb.GetBlockUpdatesResponse {
  return { blocks: nonEmptyList(r.blocks, 'blocks') };
}

export function getBlockUpdatesResponseFromProto(r: pb.GetBlockUpdatesResponse): GetBlockUpdatesResponse {
  return { blocks: nonEmptyList(r.blocks, 'blocks') };
}

export function getCheckpointRequestToProto(r: GetCheckpointRequest): pb.GetCheckpointRequest {
  return { at: blockRefToProto(r.at) };
}

export function getCheckpointRequestFromProto(r: pb.GetCheckpointRequest): GetCheckpointRequest {
  return { at: blockRefFromProto(r.at) };
}
