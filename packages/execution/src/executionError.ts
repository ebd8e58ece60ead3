import { CodedError } from '@monsoon/dsm-tree';

/** Why a transaction, a bag or a block could not be executed. */
export enum ExecutionErrorCode {
  /** Raw bytes that are not a transaction of a supported type, or fields out of range. */
  BadTransaction = 'BAD_TRANSACTION',
  /** A signature that does not recover to a public key (or is malleable, high s). */
  BadSignature = 'BAD_SIGNATURE',
  /** A transaction signed for another chain. */
  WrongChain = 'WRONG_CHAIN',
  /** The sender's nonce is not the transaction's. */
  BadNonce = 'BAD_NONCE',
  /** The sender cannot pay gas × price + value. */
  InsufficientFunds = 'INSUFFICIENT_FUNDS',
  /** Gas limit below the intrinsic gas, or above the block's. */
  BadGas = 'BAD_GAS',
  /** Execution needed a trie node or code that is neither in the top layer nor in the bag. */
  MissingNode = 'MISSING_NODE',
  /** A bag node that does not hash-link into the tree, or a bag over the size limit. */
  BadBag = 'BAD_BAG',
  /** A block that is not what it claims (roots, gas, parent, proof of work). */
  BadBlock = 'BAD_BLOCK',
  /** A Common (or chain rules) at a fork whose rules this package does not implement. */
  UnsupportedFork = 'UNSUPPORTED_FORK',
}

/** The one error type of the execution package. */
export class ExecutionError extends CodedError<ExecutionErrorCode> {}

/** True when `e` is an ExecutionError, optionally of the given code. */
export function isExecutionError(e: unknown, code?: ExecutionErrorCode): e is ExecutionError {
  return e instanceof ExecutionError && (code === undefined || e.code === code);
}
