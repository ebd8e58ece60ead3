/** Temporary directories and files for tests. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh, empty directory under the OS temp dir, named `<prefix>XXXXXX`. */
export function makeTmpDir(prefix = 'monsoon-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Removes a directory and everything in it (nothing if it is gone). */
export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}

/** A fresh temporary directory and a function that removes it. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await makeTmpDir(prefix);
  return { dir, remove: () => removeDir(dir) };
}

/** The non-empty lines of a (log) file. */
export async function logLines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n').filter((l) => l.length > 0);
}
