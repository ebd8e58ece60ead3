import { access } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ClusterError, ClusterErrorCode } from './clusterError.js';

/** The three roles a cluster runs. */
export type Role = 'storage' | 'miner' | 'client';

/** What each role runs as: a script and the arguments before the role's flags (`node <script> <args…> <flags…>`). */
export type RoleScripts = Readonly<Record<Role, readonly [script: string, ...args: string[]]>>;

/**
 * The `monsoon` command of this package (`monsoon node <role> …`), built by `npm run build`.
 * From `src/` (tests) and `dist/` alike, `../dist/cli/monsoon.js` is the built entry.
 */
export const MONSOON_BIN = fileURLToPath(new URL('../dist/cli/monsoon.js', import.meta.url));

/** Every role through the one entry every operator uses: `monsoon node <role>`. */
export const defaultRoleScripts: RoleScripts = {
  storage: [MONSOON_BIN, 'node', 'storage'],
  miner: [MONSOON_BIN, 'node', 'miner'],
  client: [MONSOON_BIN, 'node', 'client'],
};

/** Throws {@link ClusterErrorCode.NotBuilt} naming every script that is missing. */
export async function requireRoleScripts(scripts: RoleScripts): Promise<void> {
  const missing: string[] = [];
  for (const file of new Set(Object.values(scripts).map(([script]) => script))) {
    try {
      await access(file);
    } catch {
      missing.push(file);
    }
  }
  if (missing.length > 0) {
    throw new ClusterError(
      ClusterErrorCode.NotBuilt,
      `expected the role CLIs to be built, found ${missing.join(', ')} missing: run \`npm run build\` first`,
      { missing },
    );
  }
}
