#!/usr/bin/env node
/**
 * Regenerates src/generated/ from ../../protos with `buf generate` and ts-proto, both from
 * npm (buf ships its binary in @bufbuild/buf-linux-x64 etc., ts-proto is a JS protoc plugin),
 * so it runs offline with no protoc and no install script. Options live in ../buf.gen.yaml.
 *
 *   node packages/protocol/scripts/generate.mjs              # rewrite src/generated/ (npm run proto:gen)
 *   node packages/protocol/scripts/generate.mjs --base DIR   # write DIR/src/generated/ instead
 *
 * `--base` is what test/unit/generatedIsFresh.test.ts uses to compare a fresh generation with
 * the committed one. The output is deterministic: same protos + same pinned versions = same bytes.
 */
import { spawnSync } from 'node:child_process';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const rootDir = resolve(pkgDir, '../..');

const args = process.argv.slice(2);
let base = pkgDir;
if (args.length === 2 && args[0] === '--base') base = resolve(args[1]);
else if (args.length !== 0) {
  console.error(`usage: generate.mjs [--base DIR]; got: ${args.join(' ')}`);
  process.exit(2);
}

// buf finds the `local: protoc-gen-ts_proto` plugin on PATH, as npm scripts would set it up.
const env = {
  ...process.env,
  PATH: [join(rootDir, 'node_modules', '.bin'), process.env.PATH].join(delimiter),
};
const res = spawnSync(
  'buf',
  ['generate', join(rootDir, 'protos'), '--template', join(pkgDir, 'buf.gen.yaml'), '--output', base],
  { env, stdio: 'inherit' },
);
if (res.error) {
  console.error(`could not run buf (is @bufbuild/buf installed? run npm install): ${res.error.message}`);
  process.exit(1);
}
process.exit(res.status ?? 1);
