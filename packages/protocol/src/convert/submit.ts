/** Converters for the miner's Submit: transactions with their bag in, one result per transaction out. */
import { type SubmitRequest, type SubmitResponse, type TxResult, TxStatus } from '../domain/submit.js';
import type * as pb from '../generated/monsoon/miner/v1/miner.js';
import { Status } from '../generated/monsoon/miner/v1/miner.js';
import { ProtocolErrorCode } from '../protocolError.js';
import { badEnum, consistent, eachIn, fail, fixed, fixedList, HASH_LENGTH, nonEmptyList } from './checks.js';
import { nodeBagFromProto, nodeBagToProto } from './common.js';

const TO_PROTO: Readonly<Record<TxStatus, Status>> = {
  [TxStatus.Accepted]: Status.STATUS_ACCEPTED,
  [TxStatus.Invalid]: Status.STATUS_INVALID,
  [TxStatus.Stale]: Status.STATUS_STALE,
};

export function txStatusToProto(s: TxStatus, field = 'status'): Status {
  const p = TO_PROTO[s];
  if (p === undefined) badEnum(field, `one of ${Object.values(TxStatus).join(', ')}`, String(s));
  return p;
}

/** STATUS_UNSPECIFIED (never sent on purpose) and values unknown to this version are refused. */
export function txStatusFromProto(s: Status, field = 'status'): TxStatus {
  switch (s) {
    case Status.STATUS_ACCEPTED:
      return TxStatus.Accepted;
    case Status.STATUS_INVALID:
      return TxStatus.Invalid;
    case Status.STATUS_STALE:
      return TxStatus.Stale;
    default:
      return badEnum(field, 'STATUS_ACCEPTED, STATUS_INVALID or STATUS_STALE', Status[s] ?? String(s));
  }
}

/** The checked fields of a result, with its (already converted) status, named relative to it (see eachIn). */
function txResult(
  r: pb.TxResult | TxResult,
  status: TxStatus,
): { txHash: Uint8Array; status: TxStatus; reason: string; staleKeys: Uint8Array[] } {
  const staleKeys = fixedList(r.staleKeys, HASH_LENGTH, 'staleKeys');
  if (status !== TxStatus.Stale && staleKeys.length > 0)
    fail(
      ProtocolErrorCode.Inconsistent,
      'staleKeys',
      'no stale keys unless the status is STALE',
      `${staleKeys.length} keys with status ${status}`,
    );
  return { txHash: fixed(r.txHash, HASH_LENGTH, 'txHash'), status, reason: r.reason, staleKeys };
}

/** Bytes of one sender key in `senderKeys`: x‖y. */
export const SENDER_KEY_LENGTH = 64;

/**
 * `keys` (empty: none), which must hold one 64-byte key per transaction: SubmitRequest's and
 * SendTransactionsRequest's `sender_keys`. Throws ProtocolError otherwise.
 */
export function senderKeys(keys: Uint8Array, transactions: number): Uint8Array {
  return fixed(keys, SENDER_KEY_LENGTH * transactions, 'senderKeys');
}

export function submitRequestToProto(r: SubmitRequest): pb.SubmitRequest {
  const transactions = nonEmptyList(r.transactions, 'transactions');
  return {
    transactions,
    bag: nodeBagToProto(r.bag),
    prefetchedRoot: fixed(r.prefetchedRoot, HASH_LENGTH, 'prefetchedRoot'),
    senderKeys:
      r.senderKeys === undefined ? new Uint8Array(0) : senderKeys(r.senderKeys, transactions.length),
  };
}

export function submitRequestFromProto(r: pb.SubmitRequest): SubmitRequest {
  const transactions = nonEmptyList(r.transactions, 'transactions');
  const out = {
    transactions,
    bag: nodeBagFromProto(r.bag),
    prefetchedRoot: fixed(r.prefetchedRoot, HASH_LENGTH, 'prefetchedRoot'),
  };
  return r.senderKeys.length === 0
    ? out
    : { ...out, senderKeys: senderKeys(r.senderKeys, transactions.length) };
}

export function submitResponseToProto(r: SubmitResponse): pb.SubmitResponse {
  return {
    results: eachIn(r.results, 'results', (x) => {
      const c = txResult(x, x.status);
      return { ...c, status: txStatusToProto(c.status, 'status') };
    }),
  };
}

/** With the request, also checks there is one result per submitted transaction. */
export function submitResponseFromProto(r: pb.SubmitResponse, request?: SubmitRequest): SubmitResponse {
  if (request !== undefined) {
    consistent(
      r.results.length === request.transactions.length,
      'results',
      `one result per transaction (${request.transactions.length})`,
      `${r.results.length} results`,
    );
  }
  return {
    results: eachIn(r.results, 'results', (x) => txResult(x, txStatusFromProto(x.status, 'status'))),
  };
}
