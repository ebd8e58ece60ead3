/**
 * The workload CLI's two commands in-process: `genesis` writes the genesis and the account
 * cache a run then loads; `run` drives a fake cluster and writes the three reports.
 */
import { readFile, stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { parseGenesis } from '@monsoon/protocol';
import { makeTmpDir, removeDir } from '@monsoon/test-utils';
import { bytesToHex } from '@monsoon/util';
import { AccountSet, type LoadResult } from '@monsoon/workload';
import { UsageError } from '../../src/cli/args.js';
import { genesisCommand } from '../../src/cli/genesisCommand.js';
import { runCommand } from '../../src/cli/runCommand.js';
import { startFakeCluster } from '../helpers/driverFakes.js';

let dir: string;
let stdout: string[];

beforeAll(async () => {
  dir = await makeTmpDir();
  stdout = [];
  jest
    .spyOn(process.stdout, 'write')
    .mockImplementation((s: string | Uint8Array) => stdout.push(String(s)) > 0);
});

afterAll(async () => {
  jest.restoreAllMocks();
  await removeDir(dir);
});

describe('workload genesis, then workload run', () => {
  it('writes a genesis whose accounts a run loads from the cache, and reports the run', async () => {
    const common = ['--accounts', '30', '--seed', 'cli test', '--cache-dir', `${dir}/accounts`];
    expect(await genesisCommand([...common, '--out', `${dir}/chain/genesis.json`])).toBe(0);
    const genesis = parseGenesis(JSON.parse(await readFile(`${dir}/chain/genesis.json`, 'utf8')));
    const accounts = await AccountSet.create({
      seed: new TextEncoder().encode('cli test'),
      count: 30,
      cacheDir: `${dir}/accounts`,
    });
    expect(accounts.cacheStatus).toBe('loaded');
    expect(genesis.chainId).toBe(1337n);
    // The 30 accounts and the token contract.
    expect(genesis.alloc).toHaveLength(31);
    const funded = new Set(genesis.alloc.map((a) => bytesToHex(a.address)));
    for (let i = 0; i < 30; i++) expect(funded.has(bytesToHex(accounts.address(i)))).toBe(true);

    const cluster = await startFakeCluster(accounts);
    try {
      const status = await runCommand([
        ...common,
        '--clients',
        cluster.clients[0]!.address,
        '--miner',
        cluster.miner.address,
        '--concurrency',
        '8',
        '--count',
        '60',
        '--batch-interval',
        '2ms',
        '--out',
        `${dir}/out`,
      ]);
      expect(status).toBe(0);
    } finally {
      await cluster.close();
    }
    const result = JSON.parse(await readFile(`${dir}/out/result.json`, 'utf8')) as LoadResult;
    expect(result.counts.committed).toBe(60);
    expect(result.config).toMatchObject({ mode: 'closed', concurrency: 8, count: 60, accounts: 30 });
    expect(result.config.meta).toEqual({ seed: 'cli test', accountCache: 'loaded' });
    expect((await stat(`${dir}/out/chart.svg`)).size).toBeGreaterThan(0);
    const summary = await readFile(`${dir}/out/summary.md`, 'utf8');
    expect(stdout.join('')).toContain(summary);
  });

  it('refuses contradictory or missing flags with a usage error', async () => {
    const base = ['--clients', '127.0.0.1:1', '--miner', '127.0.0.1:2'];
    await expect(runCommand([...base, '--rate', '10', '--concurrency', '3'])).rejects.toThrow(UsageError);
    await expect(runCommand([...base, '--duration', '1s', '--count', '3'])).rejects.toThrow(UsageError);
    await expect(runCommand(['--miner', '127.0.0.1:2'])).rejects.toThrow(/--clients/);
    await expect(runCommand([...base, '--tx-type', 'eip4844'])).rejects.toThrow(/--tx-type/);
    await expect(runCommand([...base, '--bogus'])).rejects.toThrow(/bogus/);
    await expect(genesisCommand(['--accounts', '1'])).rejects.toThrow(/--accounts/);
  });
});
