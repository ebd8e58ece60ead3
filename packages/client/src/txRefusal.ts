/**
 * Refusals of a sent transaction in geth's words, as wallets and libraries match them
 * (core/error.go, core/txpool/errors.go, core/types: "nonce too low: next nonce 5, tx nonce 3",
 * "invalid sender: invalid chain id for signer: have 1 want 1337", …). Monsoon's coded errors
 * start their messages with a code (`BAD_NONCE: …`) that JSON-RPC callers never see.
 */
import { ExecutionError, ExecutionErrorCode, isExecutionError } from '@monsoon/execution';

/** A leading `CODE: ` as Monsoon's coded errors put it (e.g. `BAD_NONCE: `), one or more times. */
const CODE_PREFIX = /^(?:[A-Z][A-Z0-9_]*: )+/;

/**
 * A reason without the internal code(s) it starts with: a miner answers
 * `BAD_NONCE: nonce too high: …`; a JSON-RPC caller reads `nonce too high: …`.
 */
export function withoutCode(reason: string): string {
  return reason.replace(CODE_PREFIX, '');
}

/**
 * A decode or sender-recovery refusal as geth's pool words it: a wrong chain id or a bad
 * signature is geth's ErrInvalidSender ("invalid sender: …" with types.ErrInvalidChainId or
 * types.ErrInvalidSig); anything else is returned as it is.
 */
export function asGethRefusal(e: unknown): unknown {
  if (isExecutionError(e, ExecutionErrorCode.WrongChain)) {
    const { signedFor, chainId } = e.meta as { signedFor?: bigint; chainId?: bigint };
    return new ExecutionError(
      e.code,
      `invalid sender: invalid chain id for signer: have ${signedFor} want ${chainId}`,
      { ...e.meta },
      e,
    );
  }
  if (isExecutionError(e, ExecutionErrorCode.BadSignature)) {
    return new ExecutionError(e.code, 'invalid sender: invalid transaction v, r, s values', { ...e.meta }, e);
  }
  return e;
}
