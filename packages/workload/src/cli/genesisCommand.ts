/**
 * `workload genesis --accounts N --seed S --out g.json [--cache-dir DIR] [--chain-id ID]`:
 * derives the accounts (or loads them from the cache, which a later run then reuses) and writes
 * the geth-style genesis the cluster starts from, with progress on a terminal.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { AccountSet } from '../accounts.js';
import { writeGenesisFile } from '../genesisFile.js';
import { ttyProgress } from '../ttyProgress.js';
import { parseChainId, parseCount, UsageError } from './args.js';
import { CLI_DEFAULTS, seedBytes } from './cliDefaults.js';

export const GENESIS_USAGE = `usage: npm run workload -- genesis [options]
  --accounts <n>     accounts to fund (default ${CLI_DEFAULTS.accounts}; 100k, 1M accepted)
  --seed <text>      account seed (default "${CLI_DEFAULTS.seed}"); a run must use the same
  --out <file>       genesis file to write (default ${CLI_DEFAULTS.genesisOut})
  --cache-dir <dir>  account cache, reused by runs (default ${CLI_DEFAULTS.cacheDir})
  --chain-id <id>    chain id (default 1337)`;

/** Runs the genesis command on `args`; resolves with the exit status. */
export async function genesisCommand(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      accounts: { type: 'string' },
      seed: { type: 'string', default: CLI_DEFAULTS.seed },
      out: { type: 'string', default: CLI_DEFAULTS.genesisOut },
      'cache-dir': { type: 'string', default: CLI_DEFAULTS.cacheDir },
      'chain-id': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${GENESIS_USAGE}\n`);
    return 0;
  }
  const count =
    values.accounts === undefined ? CLI_DEFAULTS.accounts : parseCount('--accounts', values.accounts);
  if (count < 2) throw new UsageError(`--accounts: expected at least 2, found ${count}`);
  const chainId =
    values['chain-id'] === undefined ? undefined : parseChainId('--chain-id', values['chain-id']);
  const started = performance.now();
  const accounts = await AccountSet.create({
    seed: seedBytes(values.seed),
    count,
    cacheDir: values['cache-dir'],
    onProgress: ttyProgress('accounts'),
  });
  await mkdir(dirname(values.out), { recursive: true });
  const summary = await writeGenesisFile(
    values.out,
    accounts,
    chainId === undefined ? {} : { chainId },
    ttyProgress('genesis'),
  );
  process.stdout.write(
    `genesis ${values.out}: ${count} accounts (seed "${values.seed}"), ${summary.bytes} bytes, ` +
      `accounts ${accounts.cacheStatus} (${accounts.cacheFile}), ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return 0;
}
