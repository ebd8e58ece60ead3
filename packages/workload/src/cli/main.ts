#!/usr/bin/env node
/**
 * `npm run workload -- …` (`monsoon-workload …`): `genesis` writes the genesis and the account
 * cache; `run` (the default) drives a load run and writes its reports. A bad flag is one line
 * on stderr and exit 2; a cluster that cannot be reached, exit 1.
 */
import { isWorkloadError, WorkloadErrorCode } from '../workloadError.js';
import { UsageError } from './args.js';
import { GENESIS_USAGE, genesisCommand } from './genesisCommand.js';
import { RUN_USAGE, runCommand } from './runCommand.js';

const argv = process.argv.slice(2);
const [first, ...rest] = argv;
const command = first === 'genesis' || first === 'run' ? first : 'run';
const args = first === 'genesis' || first === 'run' ? rest : argv;

let status: number;
try {
  status = command === 'genesis' ? await genesisCommand(args) : await runCommand(args);
} catch (e) {
  const usage =
    e instanceof UsageError ||
    isWorkloadError(e, WorkloadErrorCode.BadOptions) ||
    (e as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
    (e as { code?: unknown }).code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ||
    (e as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL';
  process.stderr.write(`workload ${command}: ${(e as Error).message}\n`);
  if (usage) process.stderr.write(`${command === 'genesis' ? GENESIS_USAGE : RUN_USAGE}\n`);
  status = usage ? 2 : 1;
}
process.exitCode = status;
// Everything is closed by now; should a stray handle keep the process alive, do not hang.
setTimeout(() => process.exit(status), 2_000).unref();
