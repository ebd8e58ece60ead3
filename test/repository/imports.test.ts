/**
 * Every import is declared: for each workspace under packages/ and native/, every bare specifier
 * its `src/` imports is in its `dependencies` (or peer/optional dependencies), and every one its
 * `test/` imports is there or in `devDependencies`; and every workspace package its `src/`
 * imports is a project reference in its tsconfig.json (so `tsc -b` builds it first). A package
 * that works only because a sibling or the root happens to install what it uses breaks the day
 * that changes.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE = /\.(?:[cm]?ts|[cm]?js)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', 'build']);
const BUILTINS = new Set(builtinModules);

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** Every source file under `dir` (recursively), skipping installed and built folders. */
function sourceFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return SKIP_DIRS.has(name) ? [] : sourceFiles(path);
    return SOURCE.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `code` without its comments (an import in a doc comment's example is not an import). */
function withoutComments(code: string): string {
  let out = '';
  let quote: string | undefined;
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (quote !== undefined) {
      out += c;
      if (c === '\\') out += code[++i] ?? '';
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'" || c === '`') {
      quote = c;
      out += c;
    } else if (c === '/' && code[i + 1] === '/') {
      while (i < code.length && code[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && code[i + 1] === '*') {
      const end = code.indexOf('*/', i + 2);
      i = end < 0 ? code.length : end + 1;
    } else {
      out += c;
    }
  }
  return out;
}

const SPECIFIERS = [
  /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g, // import x from 'y', export { x } from 'y'
  /\bimport\s*['"]([^'"]+)['"]/g, // import 'y'
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g, // import('y')
  /\brequire(?:\.resolve)?\(\s*['"]([^'"]+)['"]\s*\)/g, // require('y'), require.resolve('y')
  /\bcreateRequire\([^)]*\)\.resolve\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** The packages a file imports by bare specifier (`@scope/name` or `name`), builtins left out. */
function importedPackages(code: string): Set<string> {
  const text = withoutComments(code);
  const found = new Set<string>();
  for (const re of SPECIFIERS) {
    for (const m of text.matchAll(re)) {
      const spec = m[1]!;
      if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:') || spec.startsWith('#'))
        continue;
      const parts = spec.split('/');
      const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
      if (!BUILTINS.has(name)) found.add(name);
    }
  }
  return found;
}

function workspaces(): { dir: string; manifest: Manifest }[] {
  return ['packages', 'native'].flatMap((group) =>
    readdirSync(join(root, group))
      .map((name) => join(root, group, name))
      .filter((dir) => {
        try {
          return statSync(join(dir, 'package.json')).isFile();
        } catch {
          return false;
        }
      })
      .map((dir) => ({
        dir,
        manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest,
      })),
  );
}

/** `file imports 'x', which is not in <where>` for each undeclared import of `files`. */
function undeclared(files: string[], self: string, declared: Set<string>, where: string): string[] {
  return files.flatMap((file) =>
    [...importedPackages(readFileSync(file, 'utf8'))]
      .filter((name) => name !== self && !declared.has(name))
      .map((name) => `${relative(root, file)} imports '${name}', which is not in ${where}`),
  );
}

describe('importedPackages', () => {
  it('finds every kind of bare import, and none in comments, relative paths or builtins', () => {
    const code = [
      "import a from 'alpha';",
      "import type { B } from '@scope/beta/sub';",
      "export { c } from 'gamma';",
      "import 'delta/register';",
      "const e = await import('epsilon');",
      "const f = require('zeta'); require.resolve('eta');",
      "createRequire(import.meta.url).resolve('theta');",
      "import { x } from './local.js'; import fs from 'node:fs'; import path from 'path';",
      "// import z from 'commented';",
      "/** ```ts\n * import w from 'in-a-doc-example';\n * ``` */",
      "const s = 'a string // with slashes'; import iota from 'iota';",
    ].join('\n');
    expect([...importedPackages(code)].sort()).toEqual(
      ['@scope/beta', 'alpha', 'delta', 'epsilon', 'eta', 'gamma', 'iota', 'theta', 'zeta'].sort(),
    );
  });
});

describe('every import is declared in its package.json', () => {
  const all = workspaces();

  it('finds the workspaces', () => {
    expect(all.map((w) => w.manifest.name)).toEqual(
      expect.arrayContaining([
        '@monsoon/util',
        '@monsoon/dsm-tree',
        '@monsoon/test-utils',
        '@monsoon/keccak',
      ]),
    );
  });

  it.each(all.map((w) => [w.manifest.name, w] as const))('%s', (_name, { dir, manifest }) => {
    const runtime = new Set(
      [manifest.dependencies, manifest.peerDependencies, manifest.optionalDependencies].flatMap((d) =>
        Object.keys(d ?? {}),
      ),
    );
    const dev = new Set([...runtime, ...Object.keys(manifest.devDependencies ?? {})]);
    const problems = [
      ...undeclared(sourceFiles(join(dir, 'src')), manifest.name, runtime, 'dependencies'),
      ...undeclared(sourceFiles(join(dir, 'test')), manifest.name, dev, 'dependencies or devDependencies'),
    ];
    expect(problems).toEqual([]);
  });

  it.each(all.map((w) => [w.manifest.name, w] as const))(
    '%s: its tsconfig references what its src imports',
    (_name, { dir, manifest }) => {
      const byName = new Map(all.map((w) => [w.manifest.name, w.dir]));
      const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8')) as {
        references?: { path: string }[];
      };
      const referenced = new Set((tsconfig.references ?? []).map((r) => join(dir, r.path)));
      const imported = new Set(
        sourceFiles(join(dir, 'src')).flatMap((f) => [...importedPackages(readFileSync(f, 'utf8'))]),
      );
      const missing = [...imported]
        .filter((name) => name !== manifest.name && byName.has(name) && !referenced.has(byName.get(name)!))
        .map(
          (name) =>
            `${relative(root, dir)}/tsconfig.json does not reference ${relative(dir, byName.get(name)!)} (${name})`,
        );
      expect(missing).toEqual([]);
    },
  );
});
