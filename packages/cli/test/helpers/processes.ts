/** What the cluster's e2e tests check about processes: alive or not, by PID. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** True while a process with this PID exists (signal 0 checks without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGKILLs whatever of `pids` is still alive: the safety net of an afterAll, by PID. */
export function killLeftovers(pids: Iterable<number>): void {
  for (const pid of pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
}

/** The lines of a log file. */
export async function logLines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n').filter((l) => l.length > 0);
}

/** A fresh temporary directory and a function that removes it. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
