/**
 * What the repository's solc scripts share: compiling one contract with the npm `solc` package
 * (the Emscripten build, so offline, no native solc; a dependency of @monsoon/workload) and
 * writing a generated TypeScript module formatted by the repository's biome.
 * Used by scripts/compile.mjs (MonsoonToken) and packages/execution/test/fixtures/compileCancunProbe.mjs.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
/** The repository's root folder. */
export const rootDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Compiles `contract` of `source` (named `sourceName`) with `settings`, selecting `outputs`;
 * throws with solc's messages on any error, and hands warnings to `onWarning`. Returns the
 * contract's output, solc's version and the source's sha256.
 */
export function compileContract({ sourceName, source, contract, settings, outputs, onWarning }) {
  const solc = require('solc');
  const input = {
    language: 'Solidity',
    sources: { [sourceName]: { content: source } },
    settings: { ...settings, outputSelection: { [sourceName]: { [contract]: outputs } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const problems = output.errors ?? [];
  const errors = problems.filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  for (const w of problems) onWarning?.(w.formattedMessage);
  return {
    output: output.contracts[sourceName][contract],
    solcVersion: solc.version(),
    sourceSha256: `0x${createHash('sha256').update(source, 'utf8').digest('hex')}`,
  };
}

/** `text` formatted by the repository's biome as `outFile` would be, or as it is when biome is not installed. */
export function formatted(text, outFile) {
  const biome = join(rootDir, 'node_modules', '.bin', 'biome');
  const res = spawnSync(biome, ['format', `--stdin-file-path=${relative(rootDir, outFile)}`], {
    cwd: rootDir,
    input: text,
    encoding: 'utf8',
  });
  if (res.status === 0 && res.stdout) return res.stdout;
  console.error(`biome format unavailable (${res.error?.message ?? res.stderr}); writing unformatted`);
  return text;
}
