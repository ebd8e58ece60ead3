/**
 * Builds the addon: `cargo build --release` (crates from crates.io, versions pinned by
 * Cargo.lock), then copies the library to build/evm.node where src/loadEvm.ts looks for it.
 * Without cargo it says so and exits 0: @monsoon/execution then runs @ethereumjs/evm only.
 * MONSOON_SKIP_EVM_BUILD=1 skips the build the same way.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (process.env.MONSOON_SKIP_EVM_BUILD === '1') {
  console.log(
    '@monsoon/evm: MONSOON_SKIP_EVM_BUILD=1, not built (the EVM engine falls back to @ethereumjs/evm)',
  );
  process.exit(0);
}
const probe = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
if (probe.status !== 0) {
  console.log('@monsoon/evm: cargo not found, not built (the EVM engine falls back to @ethereumjs/evm)');
  process.exit(0);
}
const build = spawnSync('cargo', ['build', '--release', '--locked'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const lib =
  { darwin: 'libmonsoon_evm.dylib', win32: 'monsoon_evm.dll' }[process.platform] ?? 'libmonsoon_evm.so';
const from = join(root, 'target', 'release', lib);
if (!existsSync(from)) {
  console.error(`@monsoon/evm: cargo finished but ${from} is not there`);
  process.exit(1);
}
mkdirSync(join(root, 'build'), { recursive: true });
// Copied beside it, then renamed over it: a process running the old library keeps its file.
// Copying over it in place rewrites pages a running process has mapped, which kills that
// process (SIGSEGV or SIGBUS) the next time it runs code of the addon, at the latest at exit.
const to = join(root, 'build', 'evm.node');
copyFileSync(from, `${to}.${process.pid}.tmp`);
renameSync(`${to}.${process.pid}.tmp`, to);
console.log('@monsoon/evm: built build/evm.node');
