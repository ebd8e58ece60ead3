import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh empty directory under the OS temp dir. */
export function makeTmpDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'monsoon-workload-'));
}

/** Removes a directory made by {@link makeTmpDir}. */
export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}
