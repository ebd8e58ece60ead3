import type { Common } from '@ethereumjs/common';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';

/** A 21,000-gas EIP-1559 value transfer signed with `key`, encoded as a Submit carries it. */
export function signedTransfer(
  common: Common,
  key: Uint8Array,
  nonce: bigint,
  to: Uint8Array,
  value: bigint,
): Uint8Array {
  return createFeeMarket1559Tx(
    {
      nonce,
      to,
      value,
      gasLimit: 21_000n,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    },
    { common },
  )
    .sign(key)
    .serialize();
}
