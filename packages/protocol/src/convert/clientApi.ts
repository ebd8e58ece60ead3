/** Converters for ClientService. */
import type { RefusedBy, SendResult, SendTransactionsRequest } from '../domain/clientApi.js';
import type * as pb from '../generated/monsoon/client/v1/client.js';
import { badEnum, eachIn, fixed, nonEmptyList } from './checks.js';
import { senderKeys } from './submit.js';

const REFUSERS: readonly RefusedBy[] = ['client', 'miner', 'stale'];

export function sendTransactionsRequestToProto(r: SendTransactionsRequest): pb.SendTransactionsRequest {
  const transactions = nonEmptyList(r.transactions, 'transactions');
  return {
    transactions,
    senderKeys:
      r.senderKeys === undefined ? new Uint8Array(0) : senderKeys(r.senderKeys, transactions.length),
  };
}

/** Throws ProtocolError (INVALID_ARGUMENT at the edge) for sender keys that are not 64 bytes a transaction. */
export function sendTransactionsRequestFromProto(r: pb.SendTransactionsRequest): SendTransactionsRequest {
  const transactions = nonEmptyList(r.transactions, 'transactions');
  return r.senderKeys.length === 0
    ? { transactions }
    : {
        transactions,
        senderKeys: senderKeys(r.senderKeys, transactions.length),
      };
}

export function sendResultsToProto(results: readonly SendResult[]): pb.SendTransactionsResponse {
  return {
    results: eachIn(results, 'results', (r) => ({
      txHash: fixed(r.txHash, 32, 'txHash'),
      accepted: r.accepted,
      error: r.accepted ? '' : r.error,
      refusedBy: r.accepted || 'fateUnknown' in r ? '' : r.refusedBy,
      fateUnknown: !r.accepted && 'fateUnknown' in r,
    })),
  };
}

export function sendResultsFromProto(r: pb.SendTransactionsResponse): SendResult[] {
  return eachIn(r.results, 'results', (x) => {
    const txHash = fixed(x.txHash, 32, 'txHash');
    if (x.accepted) return { txHash, accepted: true };
    if (x.fateUnknown) return { txHash, accepted: false, error: x.error, fateUnknown: true };
    const by = x.refusedBy as RefusedBy;
    if (!REFUSERS.includes(by)) badEnum('refusedBy', REFUSERS.join(' | '), JSON.stringify(x.refusedBy));
    return { txHash, accepted: false, error: x.error, refusedBy: by };
  });
}
