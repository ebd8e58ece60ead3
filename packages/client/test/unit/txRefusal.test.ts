/** Refusals reach JSON-RPC callers in geth's words: no internal code in front, geth's texts for a bad sender. */
import { describe, expect, it } from '@jest/globals';
import { asGethRefusal, MinerRefused, RpcErrorCode, rpcErrorOf, withoutCode } from '@monsoon/client';
import { ExecutionError, ExecutionErrorCode } from '@monsoon/execution';

describe('geth wording', () => {
  it("a miner's reason loses its code: BAD_NONCE: nonce too high … → nonce too high …", () => {
    const e = new MinerRefused('BAD_NONCE: nonce too high: next nonce 3, tx nonce 5');
    expect(e.code).toBe(RpcErrorCode.Server);
    expect(e.message).toBe('nonce too high: next nonce 3, tx nonce 5');
    expect(withoutCode('STALE: BAD_BAG: node missing')).toBe('node missing');
    // Only a leading code goes: text that merely contains a colon stays.
    expect(withoutCode('insufficient funds for gas * price + value: balance 1')).toBe(
      'insufficient funds for gas * price + value: balance 1',
    );
  });

  it('a transaction for another chain is "invalid sender: invalid chain id for signer: have X want Y"', () => {
    const e = asGethRefusal(
      new ExecutionError(ExecutionErrorCode.WrongChain, 'signed for chain 1, expected chain 1337', {
        signedFor: 1n,
        chainId: 1337n,
      }),
    );
    expect(rpcErrorOf(e)?.message).toBe('invalid sender: invalid chain id for signer: have 1 want 1337');
  });

  it('a bad signature is "invalid sender: invalid transaction v, r, s values"; other errors pass through', () => {
    const bad = asGethRefusal(new ExecutionError(ExecutionErrorCode.BadSignature, 'y-parity must be 0 or 1'));
    expect(rpcErrorOf(bad)?.message).toBe('invalid sender: invalid transaction v, r, s values');
    const other = new ExecutionError(
      ExecutionErrorCode.BadTransaction,
      'expected a transaction, found 0 bytes',
    );
    expect(asGethRefusal(other)).toBe(other);
  });
});
