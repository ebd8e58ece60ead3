/**
 * What the workload CLI assumes when a flag is left out. A run must use the same accounts as the
 * genesis the cluster started from: the same `--accounts` and `--seed` (and chain id) that
 * `workload genesis` was given, so the defaults here are shared by both commands.
 */
export const CLI_DEFAULTS = {
  accounts: 100_000,
  seed: 'monsoon',
  cacheDir: 'data/accounts',
  genesisOut: 'data/genesis.json',
  out: 'data/workload',
  concurrency: 256,
  duration: '60s',
  drainTimeout: '30s',
} as const;

/** The account seed's bytes: the UTF-8 of the `--seed` string. */
export function seedBytes(seed: string): Uint8Array {
  return new TextEncoder().encode(seed);
}
