/**
 * The checks that make a transaction certainly fail before any EVM runs: the ones a miner
 * applies before executing and a client applies to refuse a transaction at once (with geth's
 * messages). They mirror @ethereumjs/vm's runTx, in its order, so both say the same.
 */
import { Capability, type TypedTransaction } from '@ethereumjs/tx';
import type { Account } from '@monsoon/dsm-tree';
import { bytesEqual, EMPTY_CODE_HASH } from '@monsoon/dsm-tree';
import type { ChainRules } from './chain.js';
import { ExecutionError, ExecutionErrorCode } from './executionError.js';
import { type ExecutableTx, executableTx, isEthereumjsTx } from './signedTx.js';

/** The fee split of a transaction under a base fee: what it pays per gas, and the miner's part. */
export interface TxFees {
  /** Paid per gas used. */
  readonly gasPrice: bigint;
  /** The part of gasPrice that goes to the block's miner (the rest is burnt). */
  readonly priorityFee: bigint;
}

export function txFees(tx: TypedTransaction | ExecutableTx, baseFee: bigint): TxFees {
  if (!isEthereumjsTx(tx)) {
    // EIP-1559's rule; for legacy and EIP-2930 (both caps the gas price) it gives the price.
    let priorityFee = tx.maxFeePerGas - baseFee;
    if (tx.maxPriorityFeePerGas < priorityFee) priorityFee = tx.maxPriorityFeePerGas;
    return { gasPrice: priorityFee + baseFee, priorityFee };
  }
  if (tx.supports(Capability.EIP1559FeeMarket)) {
    const priorityFee = (tx as { getEffectivePriorityFee(b: bigint): bigint }).getEffectivePriorityFee(
      baseFee,
    );
    return { gasPrice: priorityFee + baseFee, priorityFee };
  }
  const gasPrice = (tx as { gasPrice: bigint }).gasPrice;
  return { gasPrice, priorityFee: gasPrice - baseFee };
}

/**
 * Throws the ExecutionError that running `tx` from `sender` (whose account is `account`) would
 * end in before executing anything, or returns its fees. `gasLeft` is the block's remaining gas.
 */
export function checkTransaction(
  transaction: TypedTransaction | ExecutableTx,
  account: Account | undefined,
  rules: ChainRules,
  gasLeft: bigint,
): TxFees {
  const tx = executableTx(transaction);
  if (tx.gasLimit > gasLeft) {
    throw new ExecutionError(
      ExecutionErrorCode.BadGas,
      `gas limit reached: the transaction's gas limit ${tx.gasLimit} is above the ${gasLeft} left in the block`,
      { gasLimit: tx.gasLimit, gasLeft },
    );
  }
  const intrinsic = tx.intrinsicGas;
  if (tx.gasLimit < intrinsic) {
    throw new ExecutionError(
      ExecutionErrorCode.BadGas,
      `intrinsic gas too low: have ${tx.gasLimit}, want ${intrinsic}`,
      { gasLimit: tx.gasLimit, intrinsic },
    );
  }
  if (tx.gasLimit < tx.floorGas) {
    throw new ExecutionError(
      ExecutionErrorCode.BadGas,
      `insufficient gas for floor data gas cost: have ${tx.gasLimit}, want ${tx.floorGas}`,
      { gasLimit: tx.gasLimit, floor: tx.floorGas },
    );
  }
  const maxFee = tx.maxFeePerGas;
  if (maxFee < rules.baseFeePerGas) {
    throw new ExecutionError(
      ExecutionErrorCode.BadGas,
      `max fee per gas less than block base fee: maxFeePerGas: ${maxFee}, baseFee: ${rules.baseFeePerGas}`,
      { maxFee, baseFee: rules.baseFeePerGas },
    );
  }
  if (account !== undefined && !bytesEqual(account.codeHash, EMPTY_CODE_HASH)) {
    throw new ExecutionError(ExecutionErrorCode.BadTransaction, 'sender not an eoa (EIP-3607)');
  }
  const nonce = account?.nonce ?? 0n;
  if (tx.nonce !== nonce) {
    throw new ExecutionError(
      ExecutionErrorCode.BadNonce,
      `nonce too ${tx.nonce < nonce ? 'low' : 'high'}: next nonce ${nonce}, tx nonce ${tx.nonce}`,
      { expected: nonce, found: tx.nonce },
    );
  }
  const balance = account?.balance ?? 0n;
  const cost = tx.gasLimit * maxFee + tx.value;
  if (balance < cost) {
    throw new ExecutionError(
      ExecutionErrorCode.InsufficientFunds,
      `insufficient funds for gas * price + value: balance ${balance}, tx cost ${cost}, overshot ${cost - balance}`,
      { balance, cost },
    );
  }
  return txFees(transaction, rules.baseFeePerGas);
}
