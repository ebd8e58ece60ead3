#!/usr/bin/env node
// `npm run bench -- <name> [args…]` runs bench/dist/<name>.js (built by `npm run build`).
// With no name it lists the benchmarks.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'bench', 'dist');
const names = existsSync(dist)
  ? readdirSync(dist)
      .filter((f) => f.endsWith('.js'))
      .map((f) => f.slice(0, -3))
  : [];
const [name, ...args] = process.argv.slice(2);
if (!name || !names.includes(name)) {
  if (name) console.error(`unknown benchmark "${name}"`);
  console.error(`usage: npm run bench -- <${names.join('|') || 'run npm run build first'}> [options]`);
  process.exit(name ? 2 : 0);
}
const r = spawnSync(
  process.execPath,
  ['--expose-gc', '--max-old-space-size=16384', join(dist, `${name}.js`), ...args],
  {
    stdio: 'inherit',
    cwd: root,
  },
);
process.exit(r.status ?? 1);
