/**
 * A generated transaction signed again under another nonce. The driver needs it when a sender's
 * transaction is refused: the refused nonce was never used, so each of that sender's later
 * transactions must move one nonce down to be valid, while the traffic generator (which owns the
 * nonces) keeps counting from where it was.
 */
import type { Common } from '@ethereumjs/common';
import { decodeTransaction, txInfo } from '@monsoon/execution';
import { type SignedTransaction, signTransaction, type TxFields } from '../signTransaction.js';
import { WorkloadError, WorkloadErrorCode } from '../workloadError.js';

/**
 * `raw` (a legacy or EIP-1559 transfer or call, as the generator makes them, for `common`'s
 * chain) with its nonce replaced by `nonce`, signed with `privateKey`. Every other field is kept,
 * so the transaction does what it did.
 */
export function resignWithNonce(
  raw: Uint8Array,
  nonce: bigint,
  privateKey: Uint8Array,
  common: Common,
): SignedTransaction {
  const info = txInfo(decodeTransaction(raw, common));
  if (info.to === undefined || (info.type !== 0 && info.type !== 2)) {
    throw new WorkloadError(
      WorkloadErrorCode.BadOptions,
      `transaction to re-sign: expected a legacy or EIP-1559 call, found type ${info.type}${info.to === undefined ? ' creating a contract' : ''}`,
      { type: info.type },
    );
  }
  const base = {
    chainId: common.chainId(),
    nonce,
    gasLimit: info.gasLimit,
    to: info.to,
    value: info.value,
    data: info.data,
  };
  const fields: TxFields =
    info.type === 2
      ? {
          type: 'eip1559',
          ...base,
          maxFeePerGas: info.maxFeePerGas,
          maxPriorityFeePerGas: info.maxPriorityFeePerGas,
        }
      : { type: 'legacy', ...base, gasPrice: info.maxFeePerGas };
  return signTransaction(fields, privateKey);
}
