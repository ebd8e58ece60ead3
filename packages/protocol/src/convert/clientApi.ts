/** Converters for ClientService. */
import type { RefusedBy, SendResult } from '../domain/clientApi.js';
import type * as pb from '../generated/monsoon/client/v1/client.js';
import { badEnum, fixed, nonEmptyList } from './checks.js';

const REFUSERS: readonly RefusedBy[] = ['client', 'miner', 'stale'];

export function sendTransactionsRequestToProto(
  transactions: readonly Uint8Array[],
): pb.SendTransactionsRequest {
  return { transactions: nonEmptyList(transactions, 'transactions') };
}

export function sendTransactionsRequestFromProto(r: pb.SendTransactionsRequest): Uint8Array[] {
  return nonEmptyList(r.transactions, 'transactions');
}

export function sendResultsToProto(results: readonly SendResult[]): pb.SendTransactionsResponse {
  return {
    results: results.map((r, i) => ({
      txHash: fixed(r.txHash, 32, `results[${i}].txHash`),
      accepted: r.accepted,
      error: r.accepted ? '' : r.error,
      refusedBy: r.accepted || 'fateUnknown' in r ? '' : r.refusedBy,
      fateUnknown: !r.accepted && 'fateUnknown' in r,
    })),
  };
}

export function sendResultsFromProto(r: pb.SendTransactionsResponse): SendResult[] {
  return r.results.map((x, i) => {
    const txHash = fixed(x.txHash, 32, `results[${i}].txHash`);
    if (x.accepted) return { txHash, accepted: true };
    if (x.fateUnknown) return { txHash, accepted: false, error: x.error, fateUnknown: true };
    const by = x.refusedBy as RefusedBy;
    if (!REFUSERS.includes(by))
      badEnum(`results[${i}].refusedBy`, REFUSERS.join(' | '), JSON.stringify(x.refusedBy));
    return { txHash, accepted: false, error: x.error, refusedBy: by };
  });
}
