/** Converters for BatchGet: account queries and results, proofs in one node bag. */

import { bytesEqual, bytesToHex } from '@monsoon/util';
import type { AccountQuery, AccountResult, BatchGetRequest, BatchGetResponse } from '../domain/batchGet.js';
import type * as pb from '../generated/monsoon/storage/v1/storage.js';
import {
  ADDRESS_LENGTH,
  consistent,
  fixed,
  fixedList,
  HASH_LENGTH,
  minimalBytes,
  omitLevels,
  plain,
  SLOT_LENGTH,
  uint64,
} from './checks.js';
import { blockRefFromProto, blockRefToProto, nodeBagFromProto, nodeBagToProto } from './common.js';

function accountQuery(q: pb.AccountQuery | AccountQuery, field: string): pb.AccountQuery {
  return {
    address: fixed(q.address, ADDRESS_LENGTH, `${field}.address`),
    slots: fixedList(q.slots, SLOT_LENGTH, `${field}.slots`),
    code: q.code,
  };
}

function accountResult(r: pb.AccountResult | AccountResult, field: string): pb.AccountResult {
  const rlp = r.accountRlp ?? new Uint8Array(0);
  return {
    address: fixed(r.address, ADDRESS_LENGTH, `${field}.address`),
    accountRlp: plain(rlp),
    slotValues: r.slotValues.map((v, i) => minimalBytes(v, 32, `${field}.slotValues[${i}]`)),
    code: plain(r.code),
  };
}

/** Checks that each result answers its query: same address, one value per slot asked. */
function matchQueries(results: readonly pb.AccountResult[], queries: readonly AccountQuery[]): void {
  consistent(
    results.length === queries.length,
    'results',
    `one result per query (${queries.length})`,
    `${results.length} results`,
  );
  results.forEach((r, i) => {
    const q = queries[i]!;
    consistent(
      bytesEqual(r.address, q.address),
      `results[${i}].address`,
      bytesToHex(q.address),
      bytesToHex(r.address),
    );
    consistent(
      r.slotValues.length === q.slots.length,
      `results[${i}].slotValues`,
      `one value per slot asked (${q.slots.length})`,
      `${r.slotValues.length} values`,
    );
  });
}

export function batchGetRequestToProto(r: BatchGetRequest): pb.BatchGetRequest {
  return {
    at: blockRefToProto(r.at),
    queries: r.queries.map((q, i) => accountQuery(q, `queries[${i}]`)),
    omitLevels: omitLevels(r.omitLevels, 'omitLevels'),
  };
}

export function batchGetRequestFromProto(r: pb.BatchGetRequest): BatchGetRequest {
  return {
    at: blockRefFromProto(r.at),
    queries: r.queries.map((q, i) => accountQuery(q, `queries[${i}]`)),
    omitLevels: omitLevels(r.omitLevels, 'omitLevels'),
  };
}

/** With the request, also checks that each result answers its query. */
export function batchGetResponseToProto(r: BatchGetResponse, request?: BatchGetRequest): pb.BatchGetResponse {
  const results = r.results.map((x, i) => {
    if (x.accountRlp !== undefined)
      consistent(
        x.accountRlp.length > 0,
        `results[${i}].accountRlp`,
        'undefined for an absent account, else its RLP',
        'empty bytes',
      );
    return accountResult(x, `results[${i}]`);
  });
  if (request !== undefined) matchQueries(results, request.queries);
  return {
    blockHash: fixed(r.blockHash, HASH_LENGTH, 'blockHash'),
    number: uint64(r.number, 'number'),
    results,
    bag: nodeBagToProto(r.bag),
  };
}

/** With the request, also checks that each result answers its query. */
export function batchGetResponseFromProto(
  r: pb.BatchGetResponse,
  request?: BatchGetRequest,
): BatchGetResponse {
  const results = r.results.map((x, i) => accountResult(x, `results[${i}]`));
  if (request !== undefined) matchQueries(results, request.queries);
  return {
    blockHash: fixed(r.blockHash, HASH_LENGTH, 'blockHash'),
    number: uint64(r.number, 'number'),
    results: results.map((x) => ({ ...x, accountRlp: x.accountRlp.length === 0 ? undefined : x.accountRlp })),
    bag: nodeBagFromProto(r.bag),
  };
}
