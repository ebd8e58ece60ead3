/**
 * `monsoon node <role>`: the one entry every role is started through (the built bin, as an
 * operator, a systemd unit or a container runs it). Each role starts from flags, `MONSOON_*`
 * environment variables and a `--config` file, says where it listens and what it advertises,
 * serves (a JSON-RPC call through the client reaches storage and the miner), and stops on
 * SIGTERM with exit 0; bad commands, roles and flags are one line on stderr and exit 2.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isAlive, killLeftovers, tempDir } from '@monsoon/test-utils';
import { MONSOON_BIN } from '../../src/roleScripts.js';

const RICH = `0x${'ab'.repeat(20)}`;
const started: ChildProcess[] = [];
let root: { dir: string; remove: () => Promise<void> };
let genesis: string;

beforeAll(async () => {
  root = await tempDir('monsoon-node-');
  genesis = join(root.dir, 'genesis.json');
  await writeFile(
    genesis,
    JSON.stringify({
      config: { chainId: 1337, monsoon: { minDifficulty: 0 } },
      difficulty: '0x0',
      gasLimit: '0x1c9c380',
      // Accounts under more than one first nibble: 16 shards need at least two.
      alloc: Object.fromEntries(
        ['ab', 'cd', 'ef', '12'].map((b) => [`0x${b.repeat(20)}`, { balance: '0x3635c9adc5dea00000' }]),
      ),
    }),
  );
});

afterAll(async () => {
  killLeftovers(started.map((p) => p.pid!).filter((pid) => pid !== undefined));
  await root?.remove();
});

/** Runs `monsoon <args>` to its end. */
function runToExit(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MONSOON_BIN, ...args], { env: { ...process.env, ...env } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

interface Running {
  readonly child: ChildProcess;
  readonly listening: Record<string, unknown>;
  readonly exited: Promise<number | null>;
}

/** Starts `monsoon node <role> <args>` and waits for its `listening` line. */
function startRole(role: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Running> {
  const child = spawn(process.execPath, [MONSOON_BIN, 'node', role, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const o = JSON.parse(line) as Record<string, unknown>;
        if (o.msg === 'listening') resolve({ child, listening: o, exited });
      }
    });
    void exited.then((code) => reject(new Error(`${role} exited ${code} before listening: ${err}`)));
  });
}

describe('monsoon node, refusing', () => {
  it('refuses unknown commands, roles, flags and bad values with one line and exit 2', async () => {
    const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
      [['launch'], {}, /^monsoon: unknown command "launch"$/],
      [['node', 'validator'], {}, /^monsoon: unknown role "validator"$/],
      [['node', 'storage', '--bogus'], {}, /^monsoon storage: unknown option '--bogus' \(see --help\)$/],
      [['node', 'miner'], {}, /^monsoon miner: BAD_ARGUMENT: --genesis <file> is required/],
      [
        ['node', 'miner', '--genesis', 'g.json', '--peers', '127.0.0.1:1,nohost'],
        {},
        /^monsoon miner: BAD_ARGUMENT: --peers "nohost": expected host:port/,
      ],
      [
        ['node', 'client', '--genesis', 'g.json', '--miners', '127.0.0.1:1'],
        {},
        /^monsoon client: BAD_ARGUMENT: --storage: expected at least one host:port$/,
      ],
      [
        ['node', 'client', '--genesis', 'g.json'],
        { MONSOON_LOG_LEVEL: 'loud' },
        /^monsoon client: BAD_ARGUMENT: --log-level: expected fatal \| error .*, found "loud"$/,
      ],
      [
        ['node', 'miner', '--genesis', join('/nonexistent', 'g.json')],
        {},
        /^monsoon miner: BAD_ARGUMENT: genesis \/nonexistent\/g\.json: cannot read it \(ENOENT\)$/,
      ],
      [
        ['node', 'storage', '--config', join('/nonexistent', 'c.json')],
        {},
        /^monsoon storage: BAD_ARGUMENT: config \/nonexistent\/c\.json: cannot read it \(ENOENT\)$/,
      ],
    ];
    const results = await Promise.all(cases.map(([args, env]) => runToExit(args, env)));
    results.forEach((r, i) => {
      expect({ args: cases[i]![0], code: r.code }).toEqual({ args: cases[i]![0], code: 2 });
      expect(r.stderr.split('\n')[0]).toMatch(cases[i]![2]);
    });
  });

  it("lists a role's flags, the shared ones included, with --help (exit 0)", async () => {
    const child = spawn(process.execPath, [MONSOON_BIN, 'node', 'miner', '--help']);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    for (const flag of [
      '--config',
      '--log-level',
      '--advertise',
      '--genesis',
      '--peers',
      '--block-interval',
    ]) {
      expect(out).toContain(flag);
    }
  });
});

describe('monsoon node, serving', () => {
  it('starts storage, miner and client from flags, env and a config file; they serve; SIGTERM stops each with 0', async () => {
    const config = join(root.dir, 'storage.json');
    // Paths in a config file are relative to it; the environment sets the listen address.
    await writeFile(
      config,
      JSON.stringify({ genesis: 'genesis.json', 'data-dir': 'storage', fsync: 'none' }),
    );
    const storage = await startRole(
      'storage',
      ['--config', config, '--advertise', 'storage-0.monsoon.internal:50051'],
      {
        MONSOON_LISTEN: '127.0.0.1:0',
      },
    );
    const storageAt = String(storage.listening.address);
    expect(storageAt).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(storage.listening).toMatchObject({
      role: 'storage',
      advertise: 'storage-0.monsoon.internal:50051',
      dataDir: join(root.dir, 'storage'),
      fsync: 'none',
    });

    const miner = await startRole('miner', [
      '--genesis',
      genesis,
      '--listen',
      '127.0.0.1:0',
      '--storage',
      storageAt,
      '--block-interval',
      '100',
    ]);
    const minerAt = String(miner.listening.address);
    // Without --advertise, a concrete bound address is what peers use.
    expect(miner.listening.advertise).toBe(minerAt);

    const client = await startRole('client', ['--genesis', genesis, '--rpc', '127.0.0.1:0'], {
      MONSOON_MINERS: minerAt,
      MONSOON_STORAGE: storageAt,
    });
    const rpc = String(client.listening.rpc);
    const call = async (method: string, params: unknown[]) => {
      const res = await fetch(rpc, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return ((await res.json()) as { result: unknown }).result;
    };
    expect(await call('eth_chainId', [])).toBe('0x539');
    expect(await call('eth_getBalance', [RICH, 'latest'])).toBe('0x3635c9adc5dea00000');

    for (const r of [client, miner, storage]) {
      r.child.kill('SIGTERM');
      expect(await r.exited).toBe(0);
      expect(isAlive(r.child.pid!)).toBe(false);
    }
  }, 60_000);
});
