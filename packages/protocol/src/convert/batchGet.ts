/** Converters for BatchGet: account queries and results, proofs in one node bag. */

import { bytesEqual, bytesToHex } from '@monsoon/util';
import type { AccountQuery, AccountResult, BatchGetRequest, BatchGetResponse } from '../domain/batchGet.js';
import type * as pb from '../generated/monsoon/storage/v1/storage.js';
import { ProtocolErrorCode } from '../protocolError.js';
import {
  ADDRESS_LENGTH,
  consistent,
  eachIn,
  fail,
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

/** A query, its fields named relative to it (see eachIn). */
function accountQuery(q: pb.AccountQuery | AccountQuery): pb.AccountQuery {
  return {
    address: fixed(q.address, ADDRESS_LENGTH, 'address'),
    slots: fixedList(q.slots, SLOT_LENGTH, 'slots'),
    code: q.code,
  };
}

const NO_BYTES = new Uint8Array(0);

/** A result, its fields named relative to it (see eachIn). */
function accountResult(r: pb.AccountResult | AccountResult): pb.AccountResult {
  return {
    address: fixed(r.address, ADDRESS_LENGTH, 'address'),
    accountRlp: plain(r.accountRlp ?? NO_BYTES),
    slotValues: eachIn(r.slotValues, 'slotValues', (v) => minimalBytes(v, 32, '')),
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
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    const q = queries[i]!;
    // The messages are built only for a refusal: hex for every result was most of the check.
    if (!bytesEqual(r.address, q.address))
      fail(
        ProtocolErrorCode.Inconsistent,
        `results[${i}].address`,
        bytesToHex(q.address),
        bytesToHex(r.address),
      );
    if (r.slotValues.length !== q.slots.length)
      fail(
        ProtocolErrorCode.Inconsistent,
        `results[${i}].slotValues`,
        `one value per slot asked (${q.slots.length})`,
        `${r.slotValues.length} values`,
      );
  }
}

export function batchGetRequestToProto(r: BatchGetRequest): pb.BatchGetRequest {
  return {
    at: blockRefToProto(r.at),
    queries: eachIn(r.queries, 'queries', accountQuery),
    omitLevels: omitLevels(r.omitLevels, 'omitLevels'),
  };
}

export function batchGetRequestFromProto(r: pb.BatchGetRequest): BatchGetRequest {
  return {
    at: blockRefFromProto(r.at),
    queries: eachIn(r.queries, 'queries', accountQuery),
    omitLevels: omitLevels(r.omitLevels, 'omitLevels'),
  };
}

/** With the request, also checks that each result answers its query. */
export function batchGetResponseToProto(r: BatchGetResponse, request?: BatchGetRequest): pb.BatchGetResponse {
  const results = eachIn(r.results, 'results', (x) => {
    if (x.accountRlp !== undefined)
      consistent(
        x.accountRlp.length > 0,
        'accountRlp',
        'undefined for an absent account, else its RLP',
        'empty bytes',
      );
    return accountResult(x);
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
  const results = eachIn(r.results, 'results', accountResult);
  if (request !== undefined) matchQueries(results, request.queries);
  return {
    blockHash: fixed(r.blockHash, HASH_LENGTH, 'blockHash'),
    number: uint64(r.number, 'number'),
    results: results.map((x) => ({ ...x, accountRlp: x.accountRlp.length === 0 ? undefined : x.accountRlp })),
    bag: nodeBagFromProto(r.bag),
  };
}
