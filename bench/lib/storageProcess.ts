import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * The built storage CLI (`packages/storage-node/dist/cli/main.js`) started with `args` (info
 * logs: the "listening" line is info); resolves with its process and gRPC address once it listens.
 */
export function startStorageProcess(
  args: readonly string[],
): Promise<{ proc: ChildProcess; address: string }> {
  return startListening('packages/storage-node/dist/cli/main.js', args, 'storage');
}

/** The built LevelDB role (`monsoon node leveldb`) started with `args`, once it listens. */
export function startLeveldbProcess(
  args: readonly string[],
): Promise<{ proc: ChildProcess; address: string }> {
  return startListening('packages/storage-node/dist/cli/leveldbMain.js', args, 'leveldb');
}

function startListening(
  script: string,
  args: readonly string[],
  what: string,
): Promise<{ proc: ChildProcess; address: string }> {
  const proc = spawn(process.execPath, [join(root, script), ...args, '--log-level', 'info'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout! });
    lines.on('line', (l) => {
      try {
        const j = JSON.parse(l) as { msg?: string; address?: string };
        if (j.msg === 'listening' && j.address) resolve({ proc, address: j.address });
      } catch {
        // not a log line
      }
    });
    proc.on('exit', (code) => reject(new Error(`${what} process exited with ${code} before listening`)));
  });
}
