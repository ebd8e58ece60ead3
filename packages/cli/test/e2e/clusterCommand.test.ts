/**
 * `npm run cluster` (the built packages/cli/dist/cli/cluster.js) as a user runs it: the small
 * topology comes up and prints the JSON-RPC URL first; SIGTERM stops everything and exits 0; a
 * process that dies takes the cluster down with its log tail on stderr and exit 1; a cluster
 * SIGKILLed leaves no role process behind (each watches a pipe from it); bad flags
 * and topologies are one line on stderr and exit 2.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isAlive, killLeftovers, tempDir, until } from '@monsoon/test-utils';

/** Exited: no such process, or a zombie waiting to be reaped. */
function gone(pid: number): boolean {
  if (!isAlive(pid)) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

const CLI = fileURLToPath(new URL('../../dist/cli/cluster.js', import.meta.url));
const SMALL = fileURLToPath(new URL('../../../../deploy/topologies/small.json', import.meta.url));

let root: { dir: string; remove: () => Promise<void> };
const pids = new Set<number>();
let runs = 0;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  root = await tempDir('monsoon-cluster-cli-');
});

afterAll(async () => {
  killLeftovers(pids);
  await root?.remove();
});

interface Run {
  child: ChildProcess;
  stdout: string[];
  stderr: () => string;
  exit: Promise<number | null>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  pids.add(child.pid!);
  const stdout: string[] = [];
  let stderr = '';
  createInterface({ input: child.stdout! }).on('line', (l) => stdout.push(l));
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stdout, stderr: () => stderr, exit };
}

/** Starts the small cluster; resolves once the table is printed, with the processes' PIDs. */
async function startSmall(): Promise<{ r: Run; dir: string; pids: number[] }> {
  const dir = join(root.dir, `run-${runs++}`);
  const r = run(['--topology', SMALL, '--dir', dir, '--cache-dir', join(root.dir, 'cache')]);
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (r.stdout.includes('Ctrl-C to stop.')) resolve();
    };
    r.child.stdout!.on('data', () => setImmediate(check));
    void r.exit.then((code) => reject(new Error(`cluster exited (${code}) before it was up: ${r.stderr()}`)));
  });
  const described = JSON.parse(await readFile(join(dir, 'cluster.json'), 'utf8')) as {
    clients: Array<{ pid: number }>;
    miners: Array<{ pid: number }>;
    storage: Array<{ pid: number }>;
  };
  const started = [...described.clients, ...described.miners, ...described.storage].map((p) => p.pid);
  for (const pid of started) pids.add(pid);
  return { r, dir, pids: started };
}

describe('npm run cluster', () => {
  it('prints the JSON-RPC URL first, serves it, and stops everything on SIGTERM', async () => {
    const { r, pids: started } = await startSmall();
    const first = /^JSON-RPC {2}(http:\/\/127\.0\.0\.1:\d+) {2}\(client-0\)$/.exec(r.stdout[0]!);
    expect(first).not.toBeNull();
    const res = await fetch(first![1]!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    });
    expect((await res.json()) as object).toMatchObject({ result: expect.stringMatching(/^0x/) });
    expect(started).toHaveLength(4);
    for (const pid of started) expect(isAlive(pid)).toBe(true);

    r.child.kill('SIGTERM');
    expect(await r.exit).toBe(0);
    expect(r.stderr()).toContain('stopped 4 processes');
    for (const pid of started) expect(isAlive(pid)).toBe(false);
  });

  it('tears the cluster down with the log tail of a process that dies, and exits 1', async () => {
    const { r, dir, pids: started } = await startSmall();
    const miner = JSON.parse(await readFile(join(dir, 'cluster.json'), 'utf8')).miners[0] as { pid: number };
    process.kill(miner.pid, 'SIGKILL');
    expect(await r.exit).toBe(1);
    expect(r.stderr()).toMatch(
      /miner-0 \(pid \d+\) was killed by SIGKILL while the cluster was running; last \d+ lines of .*miner-0\.log:\n {2}\| \{/,
    );
    for (const pid of started) expect(isAlive(pid)).toBe(false);
  });

  it('leaves no role process behind when the cluster itself is SIGKILLed', async () => {
    const { r, pids: started } = await startSmall();
    r.child.kill('SIGKILL');
    await r.exit;
    // Each role notices its stdin pipe close and stops (a zombie no one reaps yet counts as gone).
    await until(() => started.every(gone), { what: 'every role process to exit', timeoutMs: 40_000 });
  });

  it('refuses bad flags and bad topologies with one line and exit 2', async () => {
    const noTopology = run([]);
    expect(await noTopology.exit).toBe(2);
    expect(noTopology.stderr()).toMatch(
      /^monsoon cluster: required option '--topology <file>' not specified \(see --help\)\n$/,
    );

    const badAccounts = run(['--topology', SMALL, '--accounts', 'many']);
    expect(await badAccounts.exit).toBe(2);
    expect(badAccounts.stderr()).toContain('--accounts: expected an integer ≥ 1, found "many"');

    const both = run(['--topology', SMALL, '--workload', '10s', '--rate', '100', '--concurrency', '10']);
    expect(await both.exit).toBe(2);
    expect(both.stderr()).toContain('--rate and --concurrency: expected one of them');
    const noWorkload = run(['--topology', SMALL, '--rate', '100']);
    expect(await noWorkload.exit).toBe(2);
    expect(noWorkload.stderr()).toContain('--rate: only with --workload');

    const file = join(root.dir, 'typo.json');
    await writeFile(file, JSON.stringify({ miners: { cout: 1 } }));
    const typo = run(['--topology', file]);
    expect(await typo.exit).toBe(2);
    expect(typo.stderr()).toMatch(/typo\.json: miners\.cout: unknown key \(expected one of count, /);
  });
});
