import type { Genesis } from '@monsoon/protocol';

/** A genesis in which each of `addresses` holds 1000 ether and nothing else. */
export function fundedGenesis(addresses: readonly Uint8Array[], chainId: bigint, gasLimit: bigint): Genesis {
  return {
    chainId,
    difficulty: 0n,
    gasLimit,
    timestamp: 1_700_000_000n,
    extraData: new Uint8Array(0),
    coinbase: new Uint8Array(20),
    nonce: new Uint8Array(8),
    alloc: addresses.map((address) => ({
      address,
      nonce: 0n,
      balance: 10n ** 21n,
      code: new Uint8Array(0),
      storage: [],
    })),
  };
}
