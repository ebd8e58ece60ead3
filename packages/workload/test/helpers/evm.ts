/** An @ethereumjs/vm over a parsed genesis, for running the real token contract in tests. */
import { createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import type { VM } from '@ethereumjs/vm';
import { defaultChainRules, makeCommon, nativeCustomCrypto } from '@monsoon/execution';
import type { Genesis } from '@monsoon/protocol';
import { ReferenceChain } from '@monsoon/workload';

/** The chain's Common with native keccak and ecrecover. */
export function nativeCommon(chainId: bigint = defaultChainRules.chainId): Common {
  return makeCommon(chainId, nativeCustomCrypto);
}

/** A VM whose state is exactly `genesis.alloc`. */
export async function vmFromGenesis(genesis: Genesis): Promise<VM> {
  return (await ReferenceChain.create(genesis)).vm;
}

/** Block 1 on top of the genesis, charging the chain's constant base fee. */
export function nextBlock(common: Common, gasLimit: bigint = defaultChainRules.gasLimit) {
  return createBlock(
    { header: { number: 1n, gasLimit, timestamp: 12n, baseFeePerGas: defaultChainRules.baseFeePerGas } },
    { common },
  );
}
