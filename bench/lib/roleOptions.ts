/**
 * What a bench's `--role-flag <role>:<node flag>` and `--role-env <role>[-<i>]:<NAME>=<value>`
 * give a cluster: a V8 flag one role's processes start with, a variable one role's (or one
 * process's) environment gets, on top of the cluster's defaults. For A/B runs of V8's and
 * malloc's tunables (soak, e2e). A malformed one is a usage error (exit 2).
 */
import { type ClusterOptions, type Role, roleEnv, roleNodeArgs } from '@monsoon/cli';

/** ClusterOptions' `nodeArgs` and `roleEnv` with the flags and variables asked for added. */
export function roleOptions(
  flags: readonly string[],
  envs: readonly string[],
  extraNodeArgs: readonly string[] = [],
): Required<Pick<ClusterOptions, 'nodeArgs' | 'roleEnv'>> {
  const parsedFlags = flags.map((f) => {
    const at = f.indexOf(':');
    if (at < 1) usage(`--role-flag ${f}: expected <role>:<flag>, e.g. storage:--heap-growing-percent=20`);
    return { role: f.slice(0, at), flag: f.slice(at + 1) };
  });
  const parsedEnvs = envs.map((f) => {
    const m = /^([a-z]+)(?:-(\d+))?:([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(f);
    if (m === null)
      usage(`--role-env ${f}: expected <role>[-<i>]:<NAME>=<value>, e.g. client-1:MALLOC_ARENA_MAX=2`);
    return { role: m[1]!, index: m[2] === undefined ? undefined : Number(m[2]), name: m[3]!, value: m[4]! };
  });
  return {
    nodeArgs: (role: Role, a: readonly string[]) => [
      ...roleNodeArgs(role, a),
      ...parsedFlags.filter((f) => f.role === role).map((f) => f.flag),
      ...extraNodeArgs,
    ],
    roleEnv: (role: Role, i: number, a: readonly string[]) => ({
      ...roleEnv(role, i, a),
      ...Object.fromEntries(
        parsedEnvs.filter((e) => e.role === role && (e.index ?? i) === i).map((e) => [e.name, e.value]),
      ),
    }),
  };
}

function usage(line: string): never {
  console.error(line);
  process.exit(2);
}
