/**
 * The committed lockfile is what `npm install` writes: a fresh clone must not rewrite it.
 * Resolves the lockfile again from the manifests alone (no node_modules, no install scripts;
 * metadata from npm's cache where it has it) in a scratch folder and compares the bytes.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from '@jest/globals';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const scratch = mkdtempSync(join(tmpdir(), 'monsoon-lock-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

it('package-lock.json is exactly what npm install writes for these manifests', () => {
  copyFileSync(join(root, 'package.json'), join(scratch, 'package.json'));
  copyFileSync(join(root, 'package-lock.json'), join(scratch, 'package-lock.json'));
  for (const group of ['native', 'packages']) {
    for (const name of readdirSync(join(root, group))) {
      const manifest = join(root, group, name, 'package.json');
      mkdirSync(join(scratch, group, name), { recursive: true });
      copyFileSync(manifest, join(scratch, group, name, 'package.json'));
    }
  }
  execFileSync(
    'npm',
    ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'],
    { cwd: scratch, stdio: 'pipe' },
  );
  const written = readFileSync(join(scratch, 'package-lock.json'), 'utf8');
  const committed = readFileSync(join(root, 'package-lock.json'), 'utf8');
  // On a mismatch, run `npm install` at the root and commit the lockfile it writes.
  expect(written === committed).toBe(true);
});
