/**
 * What the pre-execution tests share: the chain they sign for, a signed EIP-1559 transaction
 * decoded as the client decodes it, and a RemoteState over one storage stand-in (every level in
 * bags: compactLevels 0).
 */
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { RemoteState, ShardedStorage } from '@monsoon/client';
import { decodeSignedTx, defaultChainRules, makeCommon, type SignedTx } from '@monsoon/execution';

export const rules = { ...defaultChainRules, chainId: 1337n };
export const common = makeCommon(rules.chainId);

/** A transaction signed with `key` and decoded; 3 gwei max fee, a 1 wei tip unless given. */
export function signedTx(
  key: Uint8Array,
  f: { nonce: bigint; to: Uint8Array; value: bigint; gasLimit: bigint; data?: Uint8Array; tip?: bigint },
): SignedTx {
  const raw = createFeeMarket1559Tx(
    {
      nonce: f.nonce,
      to: f.to,
      value: f.value,
      data: f.data ?? new Uint8Array(0),
      gasLimit: f.gasLimit,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: f.tip ?? 1n,
    },
    { common },
  )
    .sign(key)
    .serialize();
  return decodeSignedTx(raw, common);
}

/** A RemoteState reading from the storage stand-in at `address`. */
export async function remoteOver(address: string): Promise<RemoteState> {
  return new RemoteState(await ShardedStorage.connect([address]), {
    compactLevels: 0,
    maxCachedNodes: 1_000_000,
  });
}
