/**
 * The chain's fixed rules: which Ethereum fork the EVM runs (Shanghai: PUSH0, no blobs), the
 * chain id, a constant base fee (burnt, as in EIP-1559, but not adjusted per block: Monsoon
 * blocks come at a steady interval and the fee market is not what we study) and the reward.
 */
import { type Common, type CustomCrypto, createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common';

export interface ChainRules {
  readonly chainId: bigint;
  /** Paid per gas by every transaction and burnt. */
  readonly baseFeePerGas: bigint;
  /** Paid to the block's miner (coinbase) on top of the priority fees. */
  readonly blockReward: bigint;
  /** Upper bound on a block's gas. */
  readonly gasLimit: bigint;
}

export const defaultChainRules: ChainRules = {
  chainId: 1337n,
  baseFeePerGas: 1_000_000_000n,
  blockReward: 2_000_000_000_000_000_000n,
  gasLimit: 30_000_000n,
};

/** The EVM's fork. */
export const HARDFORK = Hardfork.Shanghai;

/** An ethereumjs Common for the chain; `customCrypto` plugs native keccak / ecrecover in. */
export function makeCommon(chainId: bigint, customCrypto?: CustomCrypto): Common {
  return createCustomCommon({ chainId: Number(chainId) }, Mainnet, {
    hardfork: HARDFORK,
    ...(customCrypto ? { customCrypto } : {}),
  });
}

/**
 * Throws unless `common` runs a fork whose transaction rules this package implements itself
 * (decoding and intrinsic gas in signedTx.ts, fees, refunds and warm sets in blockExecutor.ts):
 * London (EIP-1559) through Shanghai. Later forks change them (blobs, EIP-6780, EIP-7623, …).
 */
export function assertSupportedFork(common: Common): void {
  if (!common.isActivatedEIP(1559) || common.gteHardfork(Hardfork.Cancun)) {
    throw new Error(
      `@monsoon/execution implements the transaction rules of London through Shanghai, found a Common at ${common.hardfork()}`,
    );
  }
}
