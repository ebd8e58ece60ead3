/**
 * The offline checkers of the deployment artifacts, as scripts/deploy-tools.sh installs them in
 * `.tools/` (kustomize; a Python venv with kubernetes-validate, ansible-core, hadolint, shellcheck),
 * and small ways to run them from the tests.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

const TOOLS = join(ROOT, '.tools');
const VENV_BIN = join(TOOLS, 'venv', 'bin');

/** Paths of the installed tools. */
export const TOOL = {
  kustomize: join(TOOLS, 'bin', 'kustomize'),
  kubernetesValidate: join(VENV_BIN, 'kubernetes-validate'),
  ansiblePlaybook: join(VENV_BIN, 'ansible-playbook'),
  ansibleInventory: join(VENV_BIN, 'ansible-inventory'),
  hadolint: join(VENV_BIN, 'hadolint'),
  shellcheck: join(VENV_BIN, 'shellcheck'),
  python: join(VENV_BIN, 'python'),
} as const;

/** How long a fresh machine may take to install them (kustomize compiles from source). */
export const INSTALL_TIMEOUT_MS = 20 * 60_000;

/** What a finished tool run gave. */
export interface ToolRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a tool to completion; ansible needs a UTF-8 locale, which CI machines may not set. */
export function run(
  file: string,
  args: readonly string[],
  opts: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {},
): ToolRun {
  const r = spawnSync(file, args, {
    cwd: opts.cwd ?? ROOT,
    input: opts.input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8', ...opts.env },
  });
  if (r.error !== undefined) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A run that must succeed: its stdout, or an error carrying its output. */
export function runOk(file: string, args: readonly string[], opts: Parameters<typeof run>[2] = {}): string {
  const r = run(file, args, opts);
  if (r.status !== 0) {
    throw new Error(
      `${file} ${args.join(' ')}: expected exit 0, found ${r.status}\n${r.stdout}\n${r.stderr}`,
    );
  }
  return r.stdout;
}

/**
 * Installs the tools (idempotent: quick when they are there), showing its progress on this
 * terminal. Call from `beforeAll` with {@link INSTALL_TIMEOUT_MS}.
 */
export function installDeployTools(): void {
  const r = spawnSync('bash', [join(ROOT, 'scripts', 'deploy-tools.sh')], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: INSTALL_TIMEOUT_MS,
  });
  if (r.error !== undefined) throw r.error;
  if (r.status !== 0) throw new Error(`scripts/deploy-tools.sh: expected exit 0, found ${r.status}`);
}

/** Every document of a YAML stream, as plain JSON values (PyYAML from the tools' venv). */
export function parseYamlStream(text: string): unknown[] {
  const out = runOk(
    TOOL.python,
    [
      '-c',
      'import json,sys,yaml; json.dump([d for d in yaml.safe_load_all(sys.stdin) if d is not None], sys.stdout)',
    ],
    { input: text },
  );
  return JSON.parse(out) as unknown[];
}
