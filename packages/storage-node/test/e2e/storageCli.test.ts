/**
 * The `monsoon storage` process itself: refused flags, config and genesis files exit 2 with one
 * clear line on stderr; a --config file works (paths relative to it, flags over it); SIGTERM
 * and SIGINT stop it cleanly (exit 0), ending open SubscribeHeads streams; a data directory
 * written for other shards is refused; a port in use is a failure (exit 1).
 */

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { getShardRootsRequestToProto, getShardRootsResponseFromProto, HEAD } from '@monsoon/protocol';
import {
  genesisJson,
  killAll,
  makeTmpDir,
  removeDir,
  requireBuiltCli,
  runRoleToExit,
  spawnRole,
  startRole,
  writeGenesis,
} from '@monsoon/test-utils';
import { makeGenesis, RefChain } from '../helpers/chain.js';
import { storageClient, unary } from '../helpers/grpcClient.js';

const genesis = makeGenesis(3, 60);
let dir: string;
let genesisFile: string;

beforeAll(async () => {
  requireBuiltCli('storage-node');
  dir = await makeTmpDir();
  genesisFile = await writeGenesis(dir, genesis);
});

afterAll(async () => {
  await killAll();
  if (dir) await removeDir(dir);
});

describe('monsoon storage, refusing to start', () => {
  it('exits 2 with one line naming the problem for bad flags, config or genesis', async () => {
    const bad = async (name: string, content: string) => {
      const f = join(dir, name);
      await writeFile(f, content);
      return f;
    };
    const notJson = await bad('notJson.json', '{"alloc": ');
    const badAddress = await bad(
      'badAddress.json',
      JSON.stringify({ alloc: { '0x1234': { balance: '1' } } }),
    );
    const badConfig = await bad('badConfig.json', JSON.stringify({ genesis: 'genesis.json', shardz: '0-3' }));
    const d = ['--data-dir', join(dir, 'never')];
    const cases: [string[], RegExp][] = [
      [['--genesis', genesisFile, '--bogus', ...d], /^unknown option '--bogus' \(see --help\)$/],
      [[...d], /^BAD_ARGUMENT: --genesis <file> is required/],
      [
        ['--genesis', genesisFile, '--shards', '0-16', ...d],
        /^BAD_ARGUMENT: --shards: expected .* within 0-15 .*found "0-16"$/,
      ],
      [
        ['--genesis', genesisFile, '--shard-count', '17', ...d],
        /^BAD_ARGUMENT: --shard-count: expected 16 \| 256, found "17"$/,
      ],
      [
        ['--genesis', genesisFile, '--fsync', 'sometimes', ...d],
        /^BAD_ARGUMENT: --fsync: expected always \| group \| none/,
      ],
      [
        ['--genesis', genesisFile, '--window', '-1', ...d],
        /^BAD_ARGUMENT: --window: expected an integer >= 1, found "-1"$/,
      ],
      [
        ['--genesis', genesisFile, '--listen', 'localhost', ...d],
        /^BAD_ARGUMENT: --listen "localhost": expected host:port/,
      ],
      [
        ['--genesis', join(dir, 'missing.json'), ...d],
        /^BAD_GENESIS: genesis .*missing\.json: cannot read it \(ENOENT\)$/,
      ],
      [['--genesis', notJson, ...d], /^BAD_GENESIS: genesis .*notJson\.json: not JSON/],
      [
        ['--genesis', badAddress, ...d],
        /^BAD_GENESIS: genesis alloc\[0x1234\] address: expected 20 bytes, found 2$/,
      ],
      [['--config', badConfig, ...d], /^BAD_ARGUMENT: config .*badConfig\.json: unknown option "shardz"/],
      [
        ['--genesis', genesisFile, '--rdma-device', 'rxe0', ...d],
        /^BAD_ARGUMENT: --rdma-device rxe0: needs --export-region/,
      ],
      [
        // No device by that name anywhere (here: no RDMA device at all, or no verbs in the build).
        [
          '--genesis',
          genesisFile,
          '--rdma-device',
          'no-such-dev0',
          '--export-region',
          join(dir, 'r.region'),
          ...d,
        ],
        /^BAD_ARGUMENT: --rdma-device no-such-dev0: .*(RDMA device|verbs|not built)/,
      ],
    ];
    const results = await Promise.all(cases.map(([args]) => runRoleToExit('storage-node', args)));
    results.forEach((r, i) => {
      const lines = r.stderr.trimEnd().split('\n');
      expect({ args: cases[i]![0], code: r.code, lines: lines.length }).toEqual({
        args: cases[i]![0],
        code: 2,
        lines: 1,
      });
      expect(lines[0]).toMatch(/^monsoon storage: /);
      expect(lines[0]!.slice('monsoon storage: '.length)).toMatch(cases[i]![1]);
    });
  });

  it('--help prints the flags and exits 0', async () => {
    const proc = spawnRole('storage-node', ['--help']);
    expect((await proc.exited).code).toBe(0);
  });

  it('refuses a data directory written for other shards (exit 2), and a port in use (exit 1)', async () => {
    const dataDir = join(dir, 'pinned');
    const a = await startRole('storage-node', [
      '--genesis',
      genesisFile,
      '--shards',
      '0-3',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      dataDir,
    ]);
    const other = await runRoleToExit('storage-node', [
      '--genesis',
      genesisFile,
      '--shards',
      '0-4',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      dataDir,
    ]);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(
      /^monsoon storage: BAD_ARGUMENT: data directory .* was written for .* shards 0,1,2,3 of 16; .* shards 0,1,2,3,4 of 16\n$/,
    );
    const taken = await runRoleToExit('storage-node', [
      '--genesis',
      genesisFile,
      '--listen',
      a.address,
      '--data-dir',
      join(dir, 'taken'),
    ]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/^monsoon storage: .*EADDRINUSE.*\n$/);
    a.proc.signal('SIGTERM');
    expect(await a.proc.exited).toEqual({ code: 0, signal: null });
  });
});

describe('monsoon storage, running', () => {
  it('takes a --config file (paths relative to it, flags over it) and stops on SIGINT with exit 0', async () => {
    const confDir = join(dir, 'conf');
    await mkdir(confDir, { recursive: true });
    // Dense enough that every first-nibble subtree branches (see the README on sparse 256-shard states).
    const dense = makeGenesis(4, 400);
    await writeFile(join(confDir, 'genesis.json'), JSON.stringify(genesisJson(dense)));
    await writeFile(
      join(confDir, 'storage.json'),
      JSON.stringify({
        genesis: 'genesis.json',
        'shard-count': 256,
        shards: '0-127',
        dataDir: 'data',
        listen: '127.0.0.1:1',
      }),
    );
    const { proc, address, line } = await startRole('storage-node', [
      '--config',
      join(confDir, 'storage.json'),
      '--listen',
      '127.0.0.1:0',
    ]);
    expect(line).toMatchObject({
      shards: '0-127',
      shardCount: 256,
      dataDir: join(confDir, 'data'),
      fsync: 'always',
      head: 0,
    });
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(address).not.toBe('127.0.0.1:1');
    const client = storageClient(address);
    const roots = getShardRootsResponseFromProto(
      await unary(client, client.getShardRoots, getShardRootsRequestToProto({ at: HEAD })),
    );
    client.close();
    expect(roots.shardCount).toBe(256);
    expect(roots.roots.map((r) => r.shard)).toEqual(Array.from({ length: 128 }, (_, i) => i));
    expect(toHex(roots.blockHash)).toBe(toHex(new RefChain(dense, 256).genesisHash));

    proc.signal('SIGINT');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    expect(proc.lines.map((l) => l.msg).slice(-2)).toEqual(['shutting down', 'stopped']);
  });

  it('on SIGTERM ends open SubscribeHeads streams and exits 0 without waiting out the shutdown timeout', async () => {
    const { proc, address } = await startRole('storage-node', [
      '--genesis',
      genesisFile,
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'term'),
    ]);
    const client = storageClient(address);
    const stream = client.subscribeHeads({});
    const first = new Promise((resolve) => stream.once('data', resolve));
    const ended = new Promise<string>((resolve) => {
      stream.on('end', () => resolve('end'));
      stream.on('error', (e) => resolve(`error ${e.message}`));
    });
    stream.on('data', () => {});
    await first;
    proc.signal('SIGTERM');
    expect(await ended).toBe('end');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    client.close();
    expect(proc.lines.some((l) => l.msg === 'shutdown timed out; cutting off calls in progress')).toBe(false);
  });
});
