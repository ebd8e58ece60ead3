/** What the client could not do reaches JSON-RPC callers as geth's -32000 with the reason, not as an internal error. */
import { describe, expect, it } from '@jest/globals';
import { ClientError, ClientErrorCode, RpcErrorCode, rpcErrorOf } from '@monsoon/client';

describe('rpcErrorOf', () => {
  it.each([ClientErrorCode.StaleRetries, ClientErrorCode.MinerUnavailable, ClientErrorCode.BadProof])(
    '%s → -32000 with its reason',
    (code) => {
      const e = rpcErrorOf(new ClientError(code, 'the reason'));
      expect(e?.code).toBe(RpcErrorCode.Server);
      expect(e?.message).toBe('the reason');
    },
  );

  it('an unknown error is left to the caller (internal)', () => {
    expect(rpcErrorOf(new Error('boom'))).toBeUndefined();
  });
});
