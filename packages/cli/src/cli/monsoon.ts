#!/usr/bin/env node
/**
 * `monsoon` — one command for every role and the local cluster:
 *
 *   monsoon node <storage|leveldb|miner|client> [flags]   one role process (`npm run node -- <role> …`)
 *   monsoon cluster --topology FILE [flags]       a whole network on this machine (`npm run cluster`)
 *
 * Each role's flags, `MONSOON_*` environment variables and `--config` file are the shared role
 * scaffold's (`@monsoon/edge`): `monsoon node <role> --help` lists them. A role is loaded only
 * when asked for, so a storage process never loads the EVM. Unknown commands and roles are one
 * line on stderr and exit 2. A role trims its malloc heap every 30 s (`MONSOON_MALLOC_TRIM_SECONDS`,
 * 0: never; src/nativeHeapTrim.ts).
 */
import { EXIT_USAGE } from '@monsoon/edge';
import { startNativeHeapTrim } from '../nativeHeapTrim.js';

/** The role commands, each from the package that owns the role. */
const ROLES: Readonly<Record<string, () => Promise<(argv: readonly string[]) => Promise<void>>>> = {
  storage: async () => (await import('@monsoon/storage-node')).runStorage,
  leveldb: async () => (await import('@monsoon/storage-node')).runLeveldb,
  miner: async () => (await import('@monsoon/miner')).runMiner,
  client: async () => (await import('@monsoon/client')).runClient,
};

const USAGE = `usage: monsoon node <${Object.keys(ROLES).join('|')}> [flags]   (--help after the role lists its flags)
       monsoon cluster --topology FILE [flags]`;

function usage(line: string): void {
  process.stderr.write(`monsoon: ${line}\n${USAGE}\n`);
  process.exitCode = EXIT_USAGE;
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'node') {
  const [role, ...argv] = rest;
  const load = role === undefined ? undefined : ROLES[role];
  if (load === undefined) {
    usage(role === undefined ? 'expected a role' : `unknown role "${role}"`);
  } else {
    startNativeHeapTrim();
    await (await load())(argv);
  }
} else if (command === 'cluster') {
  process.argv.splice(2, 1);
  await import('./cluster.js');
} else if (command === '--help' || command === '-h' || command === 'help') {
  process.stdout.write(`${USAGE}\n`);
} else {
  usage(command === undefined ? 'expected a command' : `unknown command "${command}"`);
}
