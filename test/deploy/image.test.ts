/**
 * The container image (Dockerfile, .dockerignore) and the deployment scripts, checked with no
 * docker engine: hadolint lints the Dockerfile, shellcheck the scripts, and the stages, the user
 * and the entry point are read from the Dockerfile itself.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { INSTALL_TIMEOUT_MS, installDeployTools, ROOT, run, TOOL } from './deployTools.js';
import { dockerignoreRules, dockerStages, isDockerIgnored } from './dockerfile.js';

beforeAll(installDeployTools, INSTALL_TIMEOUT_MS);

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

interface HadolintFinding {
  code: string;
  level: string;
  line: number;
  message: string;
}

function hadolint(text: string): { status: number | null; findings: HadolintFinding[] } {
  // Every finding counts, down to style.
  const r = run(TOOL.hadolint, ['--format', 'json', '--failure-threshold', 'style', '-'], { input: text });
  return { status: r.status, findings: JSON.parse(r.stdout) as HadolintFinding[] };
}

describe('Dockerfile', () => {
  it('passes hadolint with no finding at any level', () => {
    const { status, findings } = hadolint(dockerfile);
    expect(findings).toEqual([]);
    expect(status).toBe(0);
  });

  it('is really linted: hadolint flags a Dockerfile with known mistakes', () => {
    const { status, findings } = hadolint(
      'FROM node:latest\nRUN cd /app && npm install left-pad\nUSER root\nCMD node main.js\n',
    );
    expect(status).not.toBe(0);
    expect(findings.map((f) => f.code)).toEqual(
      expect.arrayContaining(['DL3007', 'DL3003', 'DL3002', 'DL3025']),
    );
  });

  const stages = dockerStages(dockerfile);
  const build = stages.find((s) => s.name === 'build');
  const runtime = stages.at(-1)!;
  const args = (s: typeof runtime, keyword: string) =>
    s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);

  it('builds in a stage of its own: npm install, the addon against the image’s Node headers, the build, dev dependencies pruned', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(build).toBeDefined();
    const script = args(build!, 'RUN').join(' && ');
    const steps = ['npm install', 'node-gyp rebuild', 'npm run build:ts', 'npm prune --omit=dev'];
    const at = steps.map((s) => script.indexOf(s));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    // The headers come from the build image's Node, not this machine's /usr.
    expect(script).toMatch(/--nodedir="?\$\{?NODE_HEADERS_DIR/);
    expect(args(build!, 'ARG')).toContain('NODE_HEADERS_DIR=/usr/local');
  });

  it('builds the revm addon with cargo in its own stage and checks the build stage loads it', () => {
    const evm = stages.find((s) => s.name === 'evm');
    expect(evm).toBeDefined();
    expect(evm!.from).toMatch(/^rust:/);
    expect(args(evm!, 'RUN').join(' ')).toContain('cargo build --release --locked');
    expect(args(build!, 'COPY')).toContain('--from=evm /evm/evm.node native/evm/build/evm.node');
    // The build stage proves the library loads under the image's Node before pruning.
    expect(args(build!, 'RUN').join(' ')).toContain('evmUnavailable');
  });

  it('runs every role from one runtime stage, as a non-root numeric user, through `monsoon node`', () => {
    expect(runtime).not.toBe(build);
    expect(args(runtime, 'COPY').every((a) => a.startsWith('--from=build '))).toBe(true);
    const user = args(runtime, 'USER').at(-1);
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    const entrypoint = JSON.parse(args(runtime, 'ENTRYPOINT').at(-1)!) as string[];
    expect(entrypoint).toEqual(['node', 'packages/cli/dist/cli/monsoon.js', 'node']);
    // The entry point the image runs is the one @monsoon/cli builds.
    expect(existsSync(join(ROOT, 'packages/cli/src/cli/monsoon.ts'))).toBe(true);
    expect(args(runtime, 'ENV').join(' ')).toContain('MONSOON_DATA_DIR=/var/lib/monsoon');
  });
});

describe('.dockerignore', () => {
  const rules = dockerignoreRules(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));
  // Tracked and new (not git-ignored) files: what a clone has to build from.
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f !== '' && existsSync(join(ROOT, f)));

  it('sends every file the build needs', () => {
    const needed = files.filter((f) =>
      /^(package(-lock)?\.json|tsconfig[^/]*\.json|protos\/.*|(packages|native)\/[^/]+\/(src\/.*|package\.json|tsconfig\.json|binding\.gyp|Cargo\.(toml|lock)|build\.rs)|bench\/(?!results\/).*|deploy\/topologies\/.*)$/.test(
        f,
      ),
    );
    expect(needed.length).toBeGreaterThan(100);
    expect(needed.filter((f) => isDockerIgnored(rules, f))).toEqual([]);
  });

  it('leaves out what is built or installed in the image, or local to a machine', () => {
    for (const p of [
      'node_modules/jest/package.json',
      'packages/cli/node_modules/x/index.js',
      'packages/cli/dist/cli/monsoon.js',
      'native/keccak/build/Release/keccak.node',
      'packages/edge/tsconfig.tsbuildinfo',
      '.tools/bin/kustomize',
      '.git/HEAD',
      'data/main/result.json',
      'deploy/k8s/base/kustomization.yaml',
    ]) {
      expect([p, isDockerIgnored(rules, p)]).toEqual([p, true]);
    }
  });
});

describe('scripts', () => {
  it.each(['scripts/deploy-tools.sh', 'scripts/setup-system.sh', 'deploy/build-release.sh'])(
    '%s passes shellcheck',
    (script) => {
      const r = run(TOOL.shellcheck, ['--format', 'gcc', join(ROOT, script)]);
      expect(r.stdout).toBe('');
      expect(r.status).toBe(0);
    },
  );

  it('shellcheck really runs: it flags an unquoted expansion', () => {
    const r = run(TOOL.shellcheck, ['--format', 'gcc', '-'], { input: '#!/bin/bash\nrm -rf $1/tmp\n' });
    expect(r.status).not.toBe(0);
    expect(r.stdout).toContain('SC2086');
  });
});
