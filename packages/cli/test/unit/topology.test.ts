import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ClusterError,
  ClusterErrorCode,
  defaultTopology,
  parseTopology,
  readTopology,
  storageLayout,
} from '@monsoon/cli';

const topologies = fileURLToPath(new URL('../../../../deploy/topologies/', import.meta.url));

/** The BAD_TOPOLOGY issues parseTopology reports for `doc`. */
function issues(doc: unknown): string[] {
  try {
    parseTopology(doc, 'test.json');
  } catch (e) {
    expect(e).toBeInstanceOf(ClusterError);
    expect((e as ClusterError).code).toBe(ClusterErrorCode.BadTopology);
    expect((e as ClusterError).message).toContain('test.json');
    return (e as ClusterError).meta.issues as string[];
  }
  throw new Error('expected the topology to be refused');
}

describe('parseTopology', () => {
  it('fills every key left out with its default', () => {
    expect(parseTopology({})).toEqual(defaultTopology);
    const t = parseTopology({ miners: { count: 2 }, storage: { processes: 4, replicas: 2 } });
    expect(t.miners).toEqual({ ...defaultTopology.miners, count: 2 });
    expect(t.storage).toEqual({ ...defaultTopology.storage, processes: 4, replicas: 2 });
    expect(t.clients).toEqual(defaultTopology.clients);
  });

  it('takes a parsed topology back unchanged', () => {
    const t = parseTopology({
      name: 'x',
      shardCount: 256,
      storage: { processes: 3, fsync: 'none', args: ['--window', '8'] },
    });
    expect(parseTopology(t)).toEqual(t);
  });

  it('names unknown keys, at the top and inside a role', () => {
    expect(issues({ minners: { count: 1 } })).toEqual([
      expect.stringMatching(/^minners: unknown key \(expected one of .*miners.*\)$/),
    ]);
    expect(issues({ storage: { replica: 2 } })).toEqual([
      'storage.replica: unknown key (expected one of processes, replicas, fsync, args)',
    ]);
  });

  it('says what was expected and what was found', () => {
    expect(issues({ miners: { count: 0 } })).toEqual([
      'miners.count: expected an integer in [1, 16], found 0',
    ]);
    expect(issues({ clients: { count: 1.5 } })).toEqual([
      'clients.count: expected an integer in [0, 64], found 1.5',
    ]);
    expect(issues({ accounts: '100' })).toEqual([
      'accounts: expected an integer in [1, 100000000], found "100"',
    ]);
    expect(issues({ shardCount: 32 })).toEqual(['shardCount: expected 16 | 256, found 32']);
    expect(issues({ storage: { fsync: 'sometimes' } })).toEqual([
      'storage.fsync: expected "always" | "group" | "none", found "sometimes"',
    ]);
    expect(issues({ logLevel: 'loud' })).toEqual([
      expect.stringMatching(/^logLevel: expected "fatal" \| .*found "loud"$/),
    ]);
    expect(issues({ metrics: 'yes' })).toEqual(['metrics: expected true or false, found "yes"']);
    expect(issues({ seed: '' })).toEqual(['seed: expected a non-empty string, found ""']);
    expect(issues({ miners: 3 })).toEqual(['miners: expected an object, found 3']);
    expect(issues([])).toEqual(['expected an object, found an array']);
  });

  it('bounds storage processes by the shards and the replicas', () => {
    expect(issues({ storage: { processes: 17 } })).toEqual([
      'storage.processes: expected an integer in [1, 16], found 17',
    ]);
    expect(issues({ storage: { processes: 3, replicas: 2 } })).toEqual([
      'storage.processes: expected a multiple of storage.replicas (2), found 3',
    ]);
    expect(parseTopology({ storage: { processes: 32, replicas: 2 } }).storage.processes).toBe(32);
  });

  it('refuses extra flags the cluster sets itself', () => {
    expect(issues({ storage: { args: ['--listen', '127.0.0.1:1'] } })).toEqual([
      "storage.args: --listen is set by the cluster, it can't be in args",
    ]);
    expect(issues({ clients: { args: ['--rpc=127.0.0.1:8545'] } })).toEqual([
      "clients.args: --rpc is set by the cluster, it can't be in args",
    ]);
    expect(issues({ miners: { args: ['--max-block-txs', 100] } })).toEqual([
      'miners.args: expected an array of strings, found an array',
    ]);
    expect(parseTopology({ miners: { args: ['--max-block-txs', '100'] } }).miners.args).toEqual([
      '--max-block-txs',
      '100',
    ]);
  });

  it('reports every problem of a document at once', () => {
    const found = issues({ shardCount: 8, miners: { count: -1, blockIntervalMs: 0 }, extra: true });
    expect(found.map((i) => i.slice(0, i.indexOf(':')))).toEqual([
      'extra',
      'shardCount',
      'miners.count',
      'miners.blockIntervalMs',
    ]);
  });
});

describe('readTopology', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'monsoon-topology-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('names the topology after its file unless it has a name', async () => {
    await writeFile(join(dir, 'tiny.json'), '{"miners":{"count":1}}');
    expect((await readTopology(join(dir, 'tiny.json'))).name).toBe('tiny');
    await writeFile(join(dir, 'named.json'), '{"name":"other"}');
    expect((await readTopology(join(dir, 'named.json'))).name).toBe('other');
  });

  it('refuses a file that is missing, not JSON or not valid, naming the file', async () => {
    await expect(readTopology(join(dir, 'missing.json'))).rejects.toThrow(
      /missing\.json: expected a readable/,
    );
    await writeFile(join(dir, 'broken.json'), '{"miners":');
    await expect(readTopology(join(dir, 'broken.json'))).rejects.toThrow(
      /broken\.json: expected JSON, found/,
    );
    await writeFile(join(dir, 'bad.json'), '{"clients":{"count":"two"}}');
    await expect(readTopology(join(dir, 'bad.json'))).rejects.toThrow(
      /bad\.json: clients\.count: expected an integer in \[0, 64\], found "two"/,
    );
  });

  it('reads the committed topologies: small for tests, default for the main job', async () => {
    const small = await readTopology(join(topologies, 'small.json'));
    expect(small.name).toBe('small');
    expect(storageLayout(small.storage, small.shardCount)).toEqual(['0-7', '8-15']);
    expect([small.miners.count, small.clients.count]).toEqual([1, 1]);
    expect(small.accounts).toBeLessThanOrEqual(1_000);

    const main = await readTopology(join(topologies, 'default.json'));
    expect(main.shardCount).toBe(16);
    expect([main.miners.count, main.clients.count, main.accounts]).toEqual([1, 2, 100_000]);
    expect(main.miners.blockIntervalMs).toBe(1_000);
  });
});
