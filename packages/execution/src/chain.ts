/**
 * The chain's fixed rules: the Ethereum fork its EVM runs (one setting for the whole chain,
 * chosen by the genesis config as geth chooses it; Shanghai when the genesis names none), the
 * chain id, a constant base fee (burnt, as in EIP-1559, but not adjusted per block: Monsoon
 * blocks come at a steady interval and the fee market is not what we study) and the reward.
 *
 * What each fork means here, beyond what @ethereumjs/evm does for it:
 * - Cancun: transient storage (EIP-1153, cleared after every transaction), MCOPY, SELFDESTRUCT
 *   deleting only contracts made in the same transaction (EIP-6780), BLOBBASEFEE (1 wei: no
 *   blob was ever included, so the excess blob gas stays 0). Blob transactions (type 3) are
 *   refused with geth's text for a type its pool does not take. The EIP-4788 beacon-root
 *   system call is a no-op, by decision: Monsoon has no beacon chain and its headers carry no
 *   parent beacon block root to record, and a miner executes only what transactions' witnesses
 *   cover, which would not include a system contract's storage. The KZG point-evaluation
 *   precompile (0x0a) has no KZG library behind it: a call to it fails the transaction.
 * - Prague: the EIP-7623 calldata floor, the BLS12-381 precompiles (EIP-2537). Not done: EIP-7702
 *   set-code transactions (type 4) are refused like blob transactions; the EIP-2935 history and
 *   EIP-7002 / EIP-7251 request system calls are no-ops, for the same reasons as EIP-4788.
 * - Osaka: the EIP-7825 transaction gas limit cap, CLZ, P256VERIFY, the EIP-7823/7883 MODEXP
 *   rules (all but the cap are @ethereumjs/evm's).
 */
import { type Common, type CustomCrypto, createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common';
import { FORKS, type Fork, type Genesis, minDifficultyOf } from '@monsoon/protocol';
import { ExecutionError, ExecutionErrorCode } from './executionError.js';

export { FORKS, type Fork, forkAtLeast } from '@monsoon/protocol';

export interface ChainRules {
  readonly chainId: bigint;
  /** The EVM's fork, from the genesis on: what both engines execute. */
  readonly fork: Fork;
  /** Paid per gas by every transaction and burnt. */
  readonly baseFeePerGas: bigint;
  /** Paid to the block's miner (coinbase) on top of the priority fees. */
  readonly blockReward: bigint;
  /** Upper bound on a block's gas. */
  readonly gasLimit: bigint;
  /**
   * The least difficulty of a block after the genesis (the genesis' `config.monsoon.minDifficulty`,
   * 1 when it sets none). The in-process default is 0 (no work), for tests and benchmarks.
   */
  readonly minDifficulty: bigint;
}

export const defaultChainRules: ChainRules = {
  chainId: 1337n,
  fork: 'shanghai',
  baseFeePerGas: 1_000_000_000n,
  blockReward: 2_000_000_000_000_000_000n,
  gasLimit: 30_000_000n,
  minDifficulty: 0n,
};

/**
 * The rules of the chain `genesis` starts: its chain id, fork, gas limit, difficulty rule and
 * (when it gives one) base fee, the rest from `base`.
 */
export function chainRulesOf(genesis: Genesis, base: ChainRules = defaultChainRules): ChainRules {
  return {
    ...base,
    chainId: genesis.chainId,
    fork: genesis.fork ?? base.fork,
    gasLimit: genesis.gasLimit,
    baseFeePerGas: genesis.baseFeePerGas ?? base.baseFeePerGas,
    minDifficulty: minDifficultyOf(genesis),
  };
}

/**
 * An ethereumjs Common for the chain: `chain` is its rules (chain id and fork), or a bare chain
 * id for the default fork. `customCrypto` plugs native keccak / ecrecover in.
 */
export function makeCommon(
  chain: bigint | Pick<ChainRules, 'chainId' | 'fork'>,
  customCrypto?: CustomCrypto,
): Common {
  const { chainId, fork } =
    typeof chain === 'bigint' ? { chainId: chain, fork: defaultChainRules.fork } : chain;
  return createCustomCommon({ chainId: Number(chainId) }, Mainnet, {
    hardfork: fork,
    ...(customCrypto ? { customCrypto } : {}),
  });
}

/**
 * Throws an ExecutionError UNSUPPORTED_FORK unless `common` runs a fork whose transaction rules
 * this package implements itself (decoding and intrinsic gas in signedTx.ts, fees, refunds,
 * floors and warm sets in blockExecutor.ts): London (EIP-1559) through Osaka, with the limits
 * the file's comment lists.
 */
export function assertSupportedFork(common: Common): void {
  const fork = common.hardfork();
  const supported =
    common.gteHardfork(Hardfork.London) && (fork === Hardfork.Osaka || !common.gteHardfork(Hardfork.Osaka));
  if (!supported) {
    throw new ExecutionError(
      ExecutionErrorCode.UnsupportedFork,
      `@monsoon/execution implements the transaction rules of ${FORKS[0]} through ${FORKS[FORKS.length - 1]}, found a Common at ${fork}`,
      { fork },
    );
  }
}
