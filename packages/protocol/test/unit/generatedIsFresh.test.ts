/**
 * The committed src/generated/ is exactly what `npm run proto:gen` makes from protos/ today, and
 * the protos pass `buf lint` (Buf's STANDARD rules, minus the exceptions in protos/buf.yaml).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

const PKG = fileURLToPath(new URL('../..', import.meta.url));
const ROOT = join(PKG, '../..');
const COMMITTED = join(PKG, 'src/generated');

/** Every file under `dir`, as paths relative to it, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/** "line N: committed `…`, fresh `…`" for the first line where two texts differ. */
function firstDifference(committed: string, fresh: string): string {
  const a = committed.split('\n');
  const b = fresh.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `line ${i + 1}: committed ${JSON.stringify(a[i] ?? '<end of file>')}, fresh ${JSON.stringify(b[i] ?? '<end of file>')}`;
}

describe('generated code', () => {
  let base: string;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'monsoon-protocol-gen-'));
  });

  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('is what `npm run proto:gen` makes from protos/ now', async () => {
    const run = spawnSync(process.execPath, [join(PKG, 'scripts/generate.mjs'), '--base', base], {
      encoding: 'utf8',
    });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    const fresh = join(base, 'src/generated');

    const committedFiles = await listFiles(COMMITTED);
    const freshFiles = await listFiles(fresh);
    const problems: string[] = [];
    for (const f of freshFiles.filter((f) => !committedFiles.includes(f)))
      problems.push(`${f}: not committed`);
    for (const f of committedFiles.filter((f) => !freshFiles.includes(f)))
      problems.push(`${f}: no longer generated`);
    for (const f of freshFiles.filter((f) => committedFiles.includes(f))) {
      const [a, b] = await Promise.all([
        readFile(join(COMMITTED, f), 'utf8'),
        readFile(join(fresh, f), 'utf8'),
      ]);
      if (a !== b) problems.push(`${f}: differs at ${firstDifference(a, b)}`);
    }
    const hint =
      problems.length === 0
        ? ''
        : `src/generated/ is stale; run \`npm run proto:gen\` and commit the result.\n  ${problems.join('\n  ')}`;
    expect(hint).toBe('');
    expect(committedFiles).toEqual([
      'monsoon/client/v1/client.ts',
      'monsoon/common/v1/common.ts',
      'monsoon/miner/v1/miner.ts',
      'monsoon/storage/v1/storage.ts',
    ]);
  });

  it('comes from protos that pass buf lint', () => {
    const run = spawnSync(join(ROOT, 'node_modules/.bin/buf'), ['lint', join(ROOT, 'protos')], {
      encoding: 'utf8',
    });
    expect({ status: run.status, out: run.stdout + run.stderr }).toEqual({ status: 0, out: '' });
  });
});
