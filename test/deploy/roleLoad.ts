/**
 * The roles' own option parsing, as `monsoon node <role>` does it (`loadRoleOptions` of the shared
 * scaffold: flags over MONSOON_* environment over a --config file, then the role's checks and its
 * genesis), applied to what a deployment gives a process: a refusal here is a process that would
 * exit 2 on start.
 */
import { clientRole } from '@monsoon/client';
import { COMMON_ROLE_OPTIONS, envOf, loadRoleOptions, type RoleSpec } from '@monsoon/edge';
import { minerRole } from '@monsoon/miner';
import { storageRole } from '@monsoon/storage-node';

/** The role specs by the name `monsoon node <name>` takes. */
export const ROLE_SPECS: Readonly<Record<string, RoleSpec<unknown>>> = {
  storage: storageRole as RoleSpec<unknown>,
  miner: minerRole as RoleSpec<unknown>,
  client: clientRole as RoleSpec<unknown>,
};

/** The role named `name`, or an error naming the roles there are. */
export function roleSpec(name: string | undefined): RoleSpec<unknown> {
  const spec = name === undefined ? undefined : ROLE_SPECS[name];
  if (spec === undefined) {
    throw new Error(`role: expected one of ${Object.keys(ROLE_SPECS).join(', ')}, found ${String(name)}`);
  }
  return spec;
}

/** The MONSOON_* variables a role reads (MONSOON_CONFIG included). */
export function roleEnvNames(spec: RoleSpec<unknown>): Set<string> {
  return new Set([...COMMON_ROLE_OPTIONS, ...spec.options].map((o) => envOf(o.name)));
}

/** What the role would start with, given `argv` (after the role's name) and `env`; throws its refusal. */
export async function loadRole(
  spec: RoleSpec<unknown>,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ config: unknown; advertise?: string }> {
  // The scaffold reports a refusal on stderr and in process.exitCode, as the process would.
  const exitCode = process.exitCode;
  const write = process.stderr.write;
  let refusal = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    refusal += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    const loaded = await loadRoleOptions(spec, argv, env);
    if (loaded === undefined)
      throw new Error(`monsoon node ${spec.role} ${argv.join(' ')}: ${refusal.trim()}`);
    return loaded;
  } finally {
    process.stderr.write = write;
    process.exitCode = exitCode;
  }
}
