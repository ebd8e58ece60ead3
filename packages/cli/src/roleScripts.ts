import { access } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ClusterError, ClusterErrorCode } from './clusterError.js';

/** The three roles a cluster runs. */
export type Role = 'storage' | 'miner' | 'client';

/** The script each role runs as (`node <script> <flags…>`). */
export type RoleScripts = Readonly<Record<Role, string>>;

// From packages/cli/src/ (tests) and packages/cli/dist/ alike, the sibling packages are at ../../.
const script = (pkg: string) => fileURLToPath(new URL(`../../${pkg}/dist/cli/main.js`, import.meta.url));

/** The role CLIs built in this repository (`npm run build`). */
export const defaultRoleScripts: RoleScripts = {
  storage: script('storage-node'),
  miner: script('miner'),
  client: script('client'),
};

/** Throws {@link ClusterErrorCode.NotBuilt} naming every script that is missing. */
export async function requireRoleScripts(scripts: RoleScripts): Promise<void> {
  const missing: string[] = [];
  for (const file of Object.values(scripts)) {
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
