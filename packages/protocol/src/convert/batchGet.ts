/** Converters for BatchGet: account queries and results, proofs in one node bag. */

import { bytesEqual, bytesToHex } from '@monsoon/util';
import type {
  AccountQuery,
  AccountResult,
  BatchGetRequest,
  BatchGetResponse,
  PackedBag,
} from '../domain/batchGet.js';
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
function matchQueries(
  results: readonly { readonly address: Uint8Array; readonly slotValues: readonly Uint8Array[] }[],
  queries: readonly AccountQuery[],
): void {
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

/** An answer's account RLP: undefined for an absent account, never empty bytes. */
function checkAccountRlp(x: AccountResult): void {
  if (x.accountRlp !== undefined)
    consistent(
      x.accountRlp.length > 0,
      'accountRlp',
      'undefined for an absent account, else its RLP',
      'empty bytes',
    );
}

/** With the request, also checks that each result answers its query. */
export function batchGetResponseToProto(r: BatchGetResponse, request?: BatchGetRequest): pb.BatchGetResponse {
  const results = eachIn(r.results, 'results', (x) => {
    checkAccountRlp(x);
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

/**
 * encodeMessage(BatchGetResponse, batchGetResponseToProto(r, request)) written directly: the
 * same checks (and refusals) and the same bytes, with no message object per result or node;
 * a packed bag's nodes are moved into place inside the output (no view per node).
 */
export function batchGetResponseBytes(r: BatchGetResponse, request?: BatchGetRequest): Buffer {
  eachIn(r.results, 'results', (x) => {
    checkAccountRlp(x);
    fixed(x.address, ADDRESS_LENGTH, 'address');
    if (x.slotValues.length > 0) eachIn(x.slotValues, 'slotValues', (v) => minimalBytes(v, 32, ''));
  });
  if (request !== undefined) matchQueries(r.results, request.queries);
  fixed(r.blockHash, HASH_LENGTH, 'blockHash');
  const number = uint64(r.number, 'number');
  const packed = r.packedBag;
  if (packed === undefined || !nonEmptyNodes(packed)) nodeBagToProto(r.bag); // its refusal, if any
  // Sizes first: every length is written before what it measures.
  let size = 2 + HASH_LENGTH + (number === 0n ? 0 : 1 + uint64Size(number));
  const sizes = new Array<number>(r.results.length);
  for (let i = 0; i < r.results.length; i++) {
    const x = r.results[i]!;
    let n = 2 + ADDRESS_LENGTH + (x.code.length > 0 ? bytesFieldSize(x.code.length) : 0);
    if (x.accountRlp !== undefined) n += bytesFieldSize(x.accountRlp.length);
    for (const v of x.slotValues) n += bytesFieldSize(v.length);
    sizes[i] = n;
    size += bytesFieldSize(n);
  }
  let bagSize = 0;
  if (packed !== undefined) {
    let from = 0;
    for (const end of packed.ends) {
      bagSize += bytesFieldSize(end - from);
      from = end;
    }
    for (const n of packed.rest) bagSize += bytesFieldSize(n.length);
  } else for (const n of r.bag) bagSize += bytesFieldSize(n.length);
  size += bytesFieldSize(bagSize);
  const out = Buffer.allocUnsafe(size);
  let pos = putBytes(out, 0, 10, r.blockHash);
  if (number !== 0n) {
    out[pos++] = 16;
    pos = putUint64(out, pos, number);
  }
  for (let i = 0; i < r.results.length; i++) {
    const x = r.results[i]!;
    out[pos++] = 26;
    pos = putVarint(out, pos, sizes[i]!);
    pos = putBytes(out, pos, 10, x.address);
    if (x.accountRlp !== undefined) pos = putBytes(out, pos, 18, x.accountRlp);
    for (const v of x.slotValues) pos = putBytes(out, pos, 26, v);
    if (x.code.length > 0) pos = putBytes(out, pos, 34, x.code);
  }
  out[pos++] = 34;
  pos = putVarint(out, pos, bagSize);
  if (packed === undefined) for (const n of r.bag) pos = putBytes(out, pos, 10, n);
  else pos = putPacked(out, pos, packed);
  if (pos !== size) throw new Error(`batchGetResponseBytes: wrote ${pos} bytes of ${size}`);
  return out;
}

/** Whether every node of a packed bag is non-empty (nodeBagToProto's check). */
function nonEmptyNodes(p: PackedBag): boolean {
  let from = 0;
  for (const end of p.ends) {
    if (end <= from) return false;
    from = end;
  }
  for (const n of p.rest) if (n.length === 0) return false;
  return true;
}

/**
 * Writes a packed bag's nodes as NodeBag.nodes fields: the buffer copied once, then each node
 * moved right into place (the last first, so nothing is overwritten before it moved) and its
 * tag and length written before it.
 */
function putPacked(out: Buffer, pos: number, p: PackedBag): number {
  const { bytes, ends } = p;
  const n = ends.length;
  out.set(bytes, pos);
  let headers = 0;
  let from = 0;
  for (let i = 0; i < n; i++) {
    headers += 1 + varintSize(ends[i]! - from);
    from = ends[i]!;
  }
  const written = bytes.length + headers;
  let end = bytes.length;
  for (let i = n - 1; i >= 0; i--) {
    const start = i === 0 ? 0 : ends[i - 1]!;
    const len = end - start;
    const to = pos + start + headers; // where the node's bytes go
    out.copyWithin(to, pos + start, pos + end);
    headers -= 1 + varintSize(len);
    let h = pos + start + headers;
    out[h++] = 10;
    putVarint(out, h, len);
    end = start;
  }
  pos += written;
  for (const node of p.rest) pos = putBytes(out, pos, 10, node);
  return pos;
}

function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

/** A length-delimited field of `len` bytes: tag, length, bytes. */
function bytesFieldSize(len: number): number {
  return 1 + varintSize(len) + len;
}

function putVarint(out: Uint8Array, pos: number, n: number): number {
  while (n >= 0x80) {
    out[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[pos++] = n;
  return pos;
}

function uint64Size(n: bigint): number {
  let size = 1;
  for (let v = n; v >= 0x80n; v >>= 7n) size++;
  return size;
}

function putUint64(out: Uint8Array, pos: number, n: bigint): number {
  let v = n;
  while (v >= 0x80n) {
    out[pos++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  out[pos++] = Number(v);
  return pos;
}

function putBytes(out: Uint8Array, pos: number, tag: number, b: Uint8Array): number {
  out[pos++] = tag;
  pos = putVarint(out, pos, b.length);
  out.set(b, pos);
  return pos + b.length;
}
