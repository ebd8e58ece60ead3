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
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
if (res.status !== 0) process.exit(res.status ?? 1);

// The gRPC serializers ts-proto writes, `Buffer.from(X.encode(value).finish())`, encode through a
// fresh writer and copy the result twice; src/encodeMessage.ts encodes through one writer per
// process and copies once. Each generated file that has serializers imports it (src/generated/
// monsoon/<package>/v1/ is four levels below src/).
const SERIALIZE = /Buffer\.from\((\w+)\.encode\(value\)\.finish\(\)\)/g;
// And the deserializers decode from a plain Uint8Array view of the frame grpc-js hands them: every
// bytes field is then a plain Uint8Array already, where a Buffer's fields were each viewed again
// by the converters (checks.ts `plain`), a second object per field of every message.
const DESERIALIZE = /(\w+)\.decode\(value\)/g;
const WIRE_IMPORT = 'import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";\n';
const generated = join(base, 'src', 'generated');
for (const e of readdirSync(generated, { recursive: true, withFileTypes: true })) {
  if (!e.isFile() || !e.name.endsWith('.ts')) continue;
  const file = join(e.parentPath, e.name);
  const text = readFileSync(file, 'utf8');
  if (text.search(SERIALIZE) === -1) continue;
  if (!text.includes(WIRE_IMPORT)) {
    console.error(`${file}: no "${WIRE_IMPORT.trim()}" line to import encodeToBuffer after`);
    process.exit(1);
  }
  writeFileSync(
    file,
    text
      .replace(SERIALIZE, 'encodeToBuffer($1, value)')
      .replace(DESERIALIZE, '$1.decode(plainView(value))')
      .replace(
        WIRE_IMPORT,
        `${WIRE_IMPORT}import { encodeToBuffer, plainView } from "../../../../encodeMessage.js";\n`,
      ),
  );
}
