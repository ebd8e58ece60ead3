/**
 * A cluster's genesis when none is given: the workload's accounts (keys cached on disk, so the
 * second start of a 1M-account cluster does not derive them again) funded with ether and
 * MonsoonToken, written as `genesis.json` with the workload's default chain options.
 */
import { AccountSet, defaultGenesisOptions, writeGenesisFile } from '@monsoon/workload';

/** Where a cluster's genesis came from. */
export interface ClusterGenesis {
  /** The genesis.json every process loads. */
  readonly file: string;
  /**
   * For a generated genesis, the accounts in it: `AccountSet.create({ seed: utf8(seed), count })`
   * gives their keys. Undefined for a genesis file given by the caller.
   */
  readonly accounts?: { readonly seed: string; readonly count: number };
  /** For a generated genesis, its chain id. */
  readonly chainId?: bigint;
}

/** Long steps of a generation: deriving the account keys, then writing the file. */
export type GenesisProgress = (step: 'accounts' | 'genesis', done: number, total: number) => void;

/** Writes the genesis of `count` accounts under `seed` to `file`. */
export async function generateGenesis(
  file: string,
  opts: {
    seed: string;
    count: number;
    cacheDir: string;
    minDifficulty?: bigint;
    /** The block gas limit (default: the workload's genesis default, Ethereum's 30M). */
    gasLimit?: bigint;
    onProgress?: GenesisProgress;
  },
): Promise<ClusterGenesis> {
  const { seed, count, cacheDir, onProgress } = opts;
  const accounts = await AccountSet.create({
    seed: new TextEncoder().encode(seed),
    count,
    cacheDir,
    onProgress: onProgress && ((done, total) => onProgress('accounts', done, total)),
  });
  await writeGenesisFile(
    file,
    accounts,
    {
      ...(opts.minDifficulty !== undefined ? { minDifficulty: opts.minDifficulty } : {}),
      ...(opts.gasLimit !== undefined ? { gasLimit: opts.gasLimit } : {}),
    },
    onProgress && ((done, total) => onProgress('genesis', done, total)),
  );
  return { file, accounts: { seed, count }, chainId: defaultGenesisOptions.chainId };
}
