/**
 * The cluster's process handling, with a fake role script (test/fixtures/fakeRole.mjs) in place
 * of the real CLIs, so start order, flags, failure reports, timeouts, aborts and stops are
 * checked in milliseconds: real processes, real signals, no network.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CLUSTER_DIR_MARKER,
  Cluster,
  type ClusterError,
  ClusterErrorCode,
  type ClusterOptions,
  type ClusterProgress,
  parseTopology,
  roleNodeArgs,
  type Topology,
} from '@monsoon/cli';
import { isAlive, killLeftovers, logLines, tempDir } from '@monsoon/test-utils';

const fake = fileURLToPath(new URL('../fixtures/fakeRole.mjs', import.meta.url));
const scripts = { storage: [fake], miner: [fake], client: [fake] } as const;

let root: { dir: string; remove: () => Promise<void> };
let genesisFile: string;
const spawned = new Set<number>();
let runs = 0;

beforeAll(async () => {
  root = await tempDir('monsoon-cluster-fake-');
  genesisFile = join(root.dir, 'genesis.json');
  await writeFile(genesisFile, '{}');
});

afterAll(async () => {
  killLeftovers(spawned);
  await root.remove();
});

/** A topology whose roles run the fake in the given modes. */
function topology(
  modes: { storage?: string; miner?: string; client?: string },
  shape: object = {},
): Topology {
  const args = (mode = 'listen') => ['--fake', mode];
  return parseTopology({
    name: 'fake',
    metrics: false,
    ...shape,
    storage: { ...(shape as { storage?: object }).storage, args: args(modes.storage) },
    miners: { ...(shape as { miners?: object }).miners, args: args(modes.miner) },
    clients: { ...(shape as { clients?: object }).clients, args: args(modes.client) },
  });
}

/** Options for a run in a directory of its own; every spawned PID is remembered. */
function options(extra: Partial<ClusterOptions> = {}): ClusterOptions & { events: ClusterProgress[] } {
  const events: ClusterProgress[] = [];
  return {
    dir: join(root.dir, `run-${runs++}`),
    genesisFile,
    startTimeoutMs: 10_000,
    stopTimeoutMs: 2_000,
    tailLines: 20,
    scripts,
    ...extra,
    events,
    onProgress: (p) => {
      events.push(p);
      if (p.kind === 'spawned') spawned.add(p.pid);
      extra.onProgress?.(p);
    },
  };
}

/** The MALLOC_* variables a live process was started with (its /proc/<pid>/environ). */
function mallocEnvOf(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter((kv) => kv.startsWith('MALLOC_'))
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

const pidsOf = (events: ClusterProgress[]) => events.flatMap((e) => (e.kind === 'spawned' ? [e.pid] : []));

/** The flags a fake process was started with (its log's first line). */
async function argvOf(logFile: string): Promise<string[]> {
  return JSON.parse((await logLines(logFile))[0]!).argv as string[];
}

function flag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i < 0 ? undefined : argv[i + 1];
}

describe('Cluster with fake roles', () => {
  it('starts storage, then miners one by one, then clients, wired to each other, and stops them in reverse', async () => {
    const opts = options();
    const t = topology(
      {},
      { storage: { processes: 4, replicas: 2 }, miners: { count: 2, retention: 3 }, clients: { count: 2 } },
    );
    const cluster = await Cluster.start(t, opts);
    const order = opts.events.flatMap((e) => (e.kind === 'spawned' ? [e.name] : []));
    expect(order.slice(0, 4).sort()).toEqual(['storage-0', 'storage-1', 'storage-2', 'storage-3']);
    expect(order.slice(4)).toEqual(['miner-0', 'miner-1', 'client-0', 'client-1']);
    expect(cluster.processes.map((p) => p.name)).toEqual([
      'storage-0',
      'storage-1',
      'storage-2',
      'storage-3',
      'miner-0',
      'miner-1',
      'client-0',
      'client-1',
    ]);
    expect(cluster.clients[0]).toMatchObject({
      rpc: 'http://127.0.0.1:2',
      grpc: '127.0.0.1:3',
      metrics: 'http://127.0.0.1:4/metrics',
    });
    expect(cluster.storage.map((s) => s.shards)).toEqual(['0-7', '0-7', '8-15', '8-15']);
    for (const p of cluster.processes) expect(isAlive(p.pid)).toBe(true);

    const storageArgv = await argvOf(cluster.storage[2]!.logFile);
    expect(flag(storageArgv, '--shards')).toBe('8-15');
    expect(flag(storageArgv, '--listen')).toBe('127.0.0.1:0');
    expect(flag(storageArgv, '--data-dir')).toBe(join(cluster.dir, 'data', 'storage-2'));
    expect(flag(storageArgv, '--genesis')).toBe(genesisFile);
    expect(flag(storageArgv, '--metrics')).toBeUndefined();
    const [m0, m1] = await Promise.all(cluster.miners.map((m) => argvOf(m.logFile)));
    expect(flag(m0!, '--peers')).toBeUndefined();
    expect(flag(m1!, '--peers')).toBe(cluster.miners[0]!.address);
    expect(flag(m1!, '--storage')!.split(',')).toHaveLength(4);
    expect(flag(m1!, '--retention')).toBe('3');
    expect(flag(m0!, '--coinbase')).not.toBe(flag(m1!, '--coinbase'));
    const c1 = await argvOf(cluster.clients[1]!.logFile);
    expect(flag(c1, '--miners')!.split(',')).toHaveLength(2);
    expect(flag(c1, '--storage')!.split(',')).toHaveLength(4);
    expect(flag(c1, '--compact-levels')).toBe('3');

    const stopped = await cluster.stop();
    expect(stopped.map((s) => s.name.split('-')[0])).toEqual([
      'client',
      'client',
      'miner',
      'miner',
      'storage',
      'storage',
      'storage',
      'storage',
    ]);
    expect(stopped.every((s) => s.code === 0 && !s.killed)).toBe(true);
    for (const p of cluster.processes) expect(isAlive(p.pid)).toBe(false);
    expect(await cluster.stop()).toBe(stopped);
  });

  it("starts each role's Node with the young generation roleNodeArgs gives it (not a tiered storage node)", async () => {
    const execArgvOf = async (logFile: string) =>
      JSON.parse((await logLines(logFile))[0]!).execArgv as string[];
    const t = parseTopology({
      name: 'fake',
      metrics: false,
      storage: { processes: 2, args: ['--fake', 'listen', '--backend', 'tiered'] },
      miners: { args: ['--fake', 'listen'] },
      clients: { args: ['--fake', 'listen'] },
    });
    const cluster = await Cluster.start(t, options());
    try {
      for (const p of cluster.miners)
        expect(await execArgvOf(p.logFile)).toEqual(['--max-semi-space-size=32']);
      for (const p of cluster.clients)
        expect(await execArgvOf(p.logFile)).toEqual(['--max-semi-space-size=64']);
      for (const p of cluster.storage) expect(await execArgvOf(p.logFile)).toEqual([]);
      // The tiered storage processes (only they) run with TIERED_MALLOC_ENV: glibc reads it at start.
      const own = mallocEnvOf(process.pid);
      for (const p of cluster.processes)
        expect([p.name, mallocEnvOf(p.pid)]).toEqual([
          p.name,
          p.role === 'storage' ? { ...own, MALLOC_MMAP_THRESHOLD_: '131072' } : own,
        ]);
    } finally {
      await cluster.stop();
    }
    const memory = await Cluster.start(
      topology({}),
      options({ nodeArgs: (role) => [`--title=monsoon-${role}`] }),
    );
    try {
      expect(await execArgvOf(memory.storage[0]!.logFile)).toEqual(['--title=monsoon-storage']);
      expect(mallocEnvOf(memory.storage[0]!.pid)).toEqual(mallocEnvOf(process.pid));
    } finally {
      await memory.stop();
    }
    expect(roleNodeArgs('storage', ['--backend', 'memory'])).toEqual([
      '--max-semi-space-size=32',
      '--compact-on-every-full-gc',
    ]);
    expect(roleNodeArgs('miner', [])).toEqual(['--max-semi-space-size=32']);
    expect(roleNodeArgs('client', [])).toEqual(['--max-semi-space-size=64']);
  });

  it("adds roleEnv's variables to each role's environment, one process's apart", async () => {
    const envOf = async (logFile: string) =>
      JSON.parse((await logLines(logFile))[0]!).env as Record<string, string>;
    const cluster = await Cluster.start(
      topology({}, { clients: { count: 2 } }),
      options({
        roleEnv: (role, i) => ({
          MONSOON_TEST_ROLE: role,
          ...(role === 'client' && i === 1 ? { MONSOON_TEST_ONE: 'client-1' } : {}),
        }),
      }),
    );
    try {
      expect(await envOf(cluster.storage[0]!.logFile)).toEqual({ MONSOON_TEST_ROLE: 'storage' });
      expect(await envOf(cluster.clients[0]!.logFile)).toEqual({ MONSOON_TEST_ROLE: 'client' });
      expect(await envOf(cluster.clients[1]!.logFile)).toEqual({
        MONSOON_TEST_ROLE: 'client',
        MONSOON_TEST_ONE: 'client-1',
      });
    } finally {
      await cluster.stop();
    }
  });

  it('rejects a start when a process exits, with its log tail, and stops what was started', async () => {
    const opts = options();
    const start = Cluster.start(topology({ miner: 'crash' }), opts);
    const error = (await start.catch((e: unknown) => e)) as ClusterError;
    expect(error.code).toBe(ClusterErrorCode.ProcessExited);
    expect(error.message).toMatch(/^PROCESS_EXITED: miner-0 \(pid \d+\) exited with code 3 /);
    expect(error.message).toContain('fake role: crashing on purpose');
    const tail = error.meta.tail as string[];
    expect(tail).toHaveLength(20);
    expect(tail.at(-1)).toBe('fake role: crashing on purpose');
    expect(tail).toEqual((await logLines(error.meta.logFile as string)).slice(-20));
    expect(opts.events.some((e) => e.kind === 'spawned' && e.name === 'client-0')).toBe(false);
    for (const pid of pidsOf(opts.events)) expect(isAlive(pid)).toBe(false);
  });

  it('gives up on a process that never listens (which ignores SIGTERM, too)', async () => {
    const opts = options({ startTimeoutMs: 2_000, stopTimeoutMs: 200 });
    const error = (await Cluster.start(topology({ storage: 'silent' }), opts).catch(
      (e: unknown) => e,
    )) as ClusterError;
    expect(error.code).toBe(ClusterErrorCode.StartTimeout);
    expect(error.message).toMatch(
      /storage-0 \(pid \d+\) printed no "listening" line within 2000 ms; last 20 lines of /,
    );
    expect(error.message).toContain('{"msg":"line","i":25}');
    for (const pid of pidsOf(opts.events)) expect(isAlive(pid)).toBe(false);
  });

  it('stops a start aborted through its signal', async () => {
    const abort = new AbortController();
    const opts = options({
      signal: abort.signal,
      onProgress: (p) => {
        if (p.kind === 'spawned') abort.abort();
      },
    });
    const error = (await Cluster.start(topology({ storage: 'silent' }), opts).catch(
      (e: unknown) => e,
    )) as ClusterError;
    expect(error.code).toBe(ClusterErrorCode.Aborted);
    expect(opts.events.some((e) => e.kind === 'spawned' && e.name === 'miner-0')).toBe(false);
    for (const pid of pidsOf(opts.events)) expect(isAlive(pid)).toBe(false);
  });

  it('reports a process that dies after the start, once, with its log tail', async () => {
    const failures: ClusterError[] = [];
    let failed: () => void = () => undefined;
    const reported = new Promise<void>((resolve) => {
      failed = resolve;
    });
    const cluster = await Cluster.start(
      topology({}),
      options({
        onFailure: (e) => {
          failures.push(e);
          failed();
        },
      }),
    );
    expect(cluster.failure).toBeUndefined();
    process.kill(cluster.miners[0]!.pid, 'SIGKILL');
    await reported;
    expect(failures).toHaveLength(1);
    expect(cluster.failure).toBe(failures[0]);
    expect(failures[0]!.message).toMatch(
      /^PROCESS_EXITED: miner-0 \(pid \d+\) was killed by SIGKILL while the cluster was running; last 20 lines/,
    );
    expect(failures[0]!.meta.tail).toContain('{"msg":"line","i":25}');
    const stopped = await cluster.stop();
    expect(stopped.find((s) => s.name === 'miner-0')).toMatchObject({ signal: 'SIGKILL', killed: false });
    expect(stopped.filter((s) => s.name !== 'miner-0').every((s) => s.code === 0)).toBe(true);
    expect(failures).toHaveLength(1);
    for (const p of cluster.processes) expect(isAlive(p.pid)).toBe(false);
  });

  it('SIGKILLs a process that ignores SIGTERM for stopTimeoutMs', async () => {
    const cluster = await Cluster.start(topology({ miner: 'stubborn' }), options({ stopTimeoutMs: 300 }));
    const stopped = await cluster.stop();
    expect(stopped.find((s) => s.name === 'miner-0')).toMatchObject({ killed: true, signal: 'SIGKILL' });
    expect(stopped.filter((s) => s.killed)).toHaveLength(1);
    for (const p of cluster.processes) expect(isAlive(p.pid)).toBe(false);
  });

  it("empties only a directory that is new, empty or already a cluster's", async () => {
    const opts = options();
    await Cluster.start(topology({}), opts).then((c) => c.stop());
    await writeFile(join(opts.dir, 'logs', 'old.log'), 'old');
    await Cluster.start(topology({}), opts).then((c) => c.stop());
    expect(existsSync(join(opts.dir, 'logs', 'old.log'))).toBe(false);

    const foreign = join(root.dir, 'someone-elses');
    await mkdir(join(foreign, 'data'), { recursive: true });
    await writeFile(join(foreign, 'data', 'precious'), 'keep me');
    await expect(Cluster.start(topology({}), options({ dir: foreign }))).rejects.toMatchObject({
      code: ClusterErrorCode.BadOptions,
      message: expect.stringContaining(`no ${CLUSTER_DIR_MARKER}`),
    });
    expect(existsSync(join(foreign, 'data', 'precious'))).toBe(true);
  });

  it('refuses to start when a role CLI is not built', async () => {
    const opts = options({ scripts: { ...scripts, miner: [join(root.dir, 'nowhere.js')] } });
    await expect(Cluster.start(topology({}), opts)).rejects.toMatchObject({
      code: ClusterErrorCode.NotBuilt,
      message: expect.stringContaining('npm run build'),
    });
    expect(pidsOf(opts.events)).toEqual([]);
  });
});
