/** An @ethereumjs/vm over a parsed genesis, for running the real token contract in tests. */
import { createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { Address, createAccount } from '@ethereumjs/util';
import { createVM, type VM } from '@ethereumjs/vm';
import { defaultChainRules, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import type { Genesis } from '@monsoon/protocol';
import secp256k1 from 'secp256k1';

/**
 * ethereumjs' CustomCrypto with native keccak and ecrecover, so that recovering thousands of
 * senders through `getSenderAddress()` takes a second, not a minute.
 */
export const nativeCrypto = {
  keccak256: (data: Uint8Array): Uint8Array => keccak.keccak256(data),
  ecrecover: (hash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array => {
    const recid = v === 0n || v === 1n ? v : chainId === undefined ? v - 27n : v - 35n - 2n * chainId;
    const sig = new Uint8Array(64);
    sig.set(r, 32 - r.length);
    sig.set(s, 64 - s.length);
    return secp256k1.ecdsaRecover(sig, Number(recid), hash, false).subarray(1);
  },
};

/** The chain's Common with {@link nativeCrypto}. */
export function nativeCommon(chainId: bigint = defaultChainRules.chainId): Common {
  return makeCommon(chainId, nativeCrypto);
}

/** A VM whose state is exactly `genesis.alloc`. */
export async function vmFromGenesis(genesis: Genesis): Promise<VM> {
  const common = nativeCommon(genesis.chainId);
  const stateManager = new MerkleStateManager({ common });
  for (const a of genesis.alloc) {
    const address = new Address(a.address);
    await stateManager.putAccount(address, createAccount({ nonce: a.nonce, balance: a.balance }));
    if (a.code.length > 0) await stateManager.putCode(address, a.code);
    for (const [slot, value] of a.storage) await stateManager.putStorage(address, slot, value);
  }
  return createVM({ common, stateManager });
}

/** Block 1 on top of the genesis, charging the chain's constant base fee. */
export function nextBlock(common: Common, gasLimit: bigint = defaultChainRules.gasLimit) {
  return createBlock(
    { header: { number: 1n, gasLimit, timestamp: 12n, baseFeePerGas: defaultChainRules.baseFeePerGas } },
    { common },
  );
}
