import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ClusterError, ClusterErrorCode } from './clusterError.js';

/** The installer of this repository: `scripts/toxiproxy.sh`. */
export const TOXIPROXY_INSTALLER = fileURLToPath(new URL('../../../scripts/toxiproxy.sh', import.meta.url));

/**
 * Makes sure toxiproxy-server is installed (`scripts/toxiproxy.sh`: built once with Go into
 * `.tools/bin`, found there afterwards) and resolves with its path, for what starts a geo
 * topology on a fresh clone (tests, benchmarks). Rejects with NOT_BUILT and the installer's
 * output when it can't be installed (no Go, no module proxy).
 */
export function installToxiproxy(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [TOXIPROXY_INSTALLER], { timeout: 600_000 }, (error, stdout, stderr) => {
      const binary = stdout.trim().split('\n').at(-1) ?? '';
      if (error === null && binary.length > 0) {
        resolve(binary);
        return;
      }
      reject(
        new ClusterError(
          ClusterErrorCode.NotBuilt,
          `expected ${TOXIPROXY_INSTALLER} to install toxiproxy-server, found ${error?.message ?? 'no path printed'}: ${stderr.trim()}`,
          { installer: TOXIPROXY_INSTALLER, stderr },
          error ?? undefined,
        ),
      );
    });
  });
}
