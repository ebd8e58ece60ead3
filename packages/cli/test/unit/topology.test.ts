import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  bandwidthBetween,
  ClusterError,
  ClusterErrorCode,
  defaultTopology,
  parseTopology,
  readTopology,
  rttBetween,
  storageLayout,
  withStorageTransport,
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
    expect(issues({ miners: { blockGasLimit: 20_999 } })).toEqual([
      'miners.blockGasLimit: expected an integer in [21000, 9007199254740991], found 20999',
    ]);
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

describe('parseTopology: regions', () => {
  const geo = {
    storage: { processes: 4, replicas: 2 },
    miners: { count: 2 },
    clients: { count: 3 },
  };
  /** A 2×2 matrix, row by row. */
  const m2 = (a: number, b: number, c: number, d: number) => [
    [a, b],
    [c, d],
  ];
  const regions = { names: ['us-east', 'eu-west'], rttMs: m2(0, 81, 81, 0) };
  /** The topology with `patch` over its regions. */
  const geoWith = (patch: object) => ({ ...geo, regions: { ...regions, ...patch } });

  it('places every process, round robin where a placement is left out', () => {
    const t = parseTopology(geoWith({}));
    expect(t.regions).toEqual({
      ...regions,
      // Replica r of every shard group in region r.
      storage: ['us-east', 'eu-west', 'us-east', 'eu-west'],
      miners: ['us-east', 'eu-west'],
      clients: ['us-east', 'eu-west', 'us-east'],
    });
    expect(parseTopology(t)).toEqual(t);
    expect(rttBetween(t.regions!, 'eu-west', 'us-east')).toBe(81);
    expect(rttBetween(t.regions!, 'eu-west', 'eu-west')).toBe(0);
    expect(parseTopology({}).regions).toBeUndefined();
  });

  it('takes storage regions per process or per replica of each shard group', () => {
    const perReplica = parseTopology(geoWith({ storage: ['eu-west', 'us-east'] }));
    expect(perReplica.regions!.storage).toEqual(['eu-west', 'us-east', 'eu-west', 'us-east']);
    const perProcess = ['us-east', 'us-east', 'eu-west', 'eu-west'];
    expect(parseTopology(geoWith({ storage: perProcess })).regions!.storage).toEqual(perProcess);
  });

  it('keeps an optional bandwidth matrix; 0 is no limit', () => {
    const t = parseTopology(geoWith({ bandwidthMbps: m2(0, 100, 100, 0) }));
    expect(bandwidthBetween(t.regions!, 'us-east', 'eu-west')).toBe(100);
    const free = parseTopology(geoWith({ bandwidthMbps: m2(0, 0, 0, 0) }));
    expect(bandwidthBetween(free.regions!, 'us-east', 'eu-west')).toBeUndefined();
    expect(bandwidthBetween(parseTopology(geoWith({})).regions!, 'us-east', 'eu-west')).toBeUndefined();
  });

  it('names a process placed in a region that is not listed', () => {
    expect(issues(geoWith({ miners: ['us-east', 'mars'] }))).toEqual([
      'regions.miners[1]: expected a region of regions.names (us-east, eu-west), found "mars"',
    ]);
    expect(issues(geoWith({ clients: ['us-east'] }))).toEqual([
      'regions.clients: expected an array of 3 (one per client) region names, found 1',
    ]);
    expect(issues(geoWith({ storage: ['us-east', 'eu-west', 'us-east'] }))).toEqual([
      'regions.storage: expected an array of 4 (one per storage process) or 2 (one per replica of each shard group) region names, found 3',
    ]);
  });

  it('refuses a matrix that is not symmetric, a negative delay, a delay within a region', () => {
    expect(issues(geoWith({ rttMs: m2(0, 81, 90, 0) }))).toEqual([
      'regions.rttMs[1][0] (eu-west → us-east): expected 81, the same as regions.rttMs[0][1] (the matrix is symmetric), found 90',
    ]);
    expect(issues(geoWith({ rttMs: m2(0, -5, -5, 0) }))).toEqual([
      'regions.rttMs[0][1] (us-east → eu-west): expected an integer in [0, 10000] ms, found -5',
      'regions.rttMs[1][0] (eu-west → us-east): expected an integer in [0, 10000] ms, found -5',
    ]);
    expect(issues(geoWith({ rttMs: m2(2, 81, 81, 0) }))).toEqual([
      "regions.rttMs[0][0] (us-east → us-east): expected 0 (one region's processes talk directly), found 2",
    ]);
    expect(issues(geoWith({ bandwidthMbps: m2(0, -1, 0, 0) }))).toEqual([
      'regions.bandwidthMbps[0][1] (us-east → eu-west): expected a number in [0, 1000000] Mbit/s, found -1',
    ]);
  });

  it('refuses a matrix of the wrong size, and bad or repeated region names', () => {
    expect(issues(geoWith({ rttMs: [[0, 81]] }))).toEqual([
      'regions.rttMs: expected 2 rows of 2 numbers (a row per region of regions.names), found 1 rows',
    ]);
    expect(issues(geoWith({ rttMs: [[0, 81], [81]] }))).toEqual([
      'regions.rttMs[1] (from eu-west): expected 2 numbers, found 1 numbers',
    ]);
    expect(issues(geoWith({ names: ['us-east', 'us-east'] }))).toEqual([
      'regions.names[1]: expected a name not used before, found "us-east" again',
    ]);
    expect(issues(geoWith({ names: ['US East', 'eu-west'] }))).toEqual([
      'regions.names[0]: expected a region name (a lowercase letter, then letters, digits or -, e.g. "us-east"), found "US East"',
    ]);
    expect(issues(geoWith({ names: [], rttMs: [] }))).toEqual([
      'regions.names: expected an array of 1 to 16 region names, found an array',
    ]);
    expect(issues(geoWith({ rtt: 5 }))).toEqual([
      'regions.rtt: unknown key (expected one of names, rttMs, bandwidthMbps, storage, miners, clients)',
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

  it('reads the committed tiered topology: its storage processes run the tiered backend', async () => {
    const t = await readTopology(join(topologies, 'tiered.json'));
    expect(t.storage.args).toEqual(['--backend', 'tiered', '--memory-budget', '64MiB']);
    expect(t.storage.processes).toBe(2);
  });

  it("reads the committed geo topologies: 1 to 4 of RainBlock's regions, every role in each", async () => {
    const names = ['us-east', 'us-west', 'eu-west', 'ap-northeast'];
    for (const n of [1, 2, 3, 4]) {
      const t = await readTopology(join(topologies, `geo-${n}.json`));
      const r = t.regions!;
      expect(r.names).toEqual(names.slice(0, n));
      for (const role of [r.storage, r.miners, r.clients]) expect(new Set(role).size).toBe(n);
      expect(t.accounts).toBeLessThanOrEqual(1_000);
    }
    const geo4 = (await readTopology(join(topologies, 'geo-4.json'))).regions!;
    // The AWS pings the files cite (both directions averaged).
    expect(rttBetween(geo4, 'us-east', 'us-west')).toBe(88);
    expect(rttBetween(geo4, 'us-east', 'eu-west')).toBe(81);
    expect(rttBetween(geo4, 'us-east', 'ap-northeast')).toBe(145);
    expect(rttBetween(geo4, 'us-west', 'ap-northeast')).toBe(89);
    expect(rttBetween(geo4, 'eu-west', 'ap-northeast')).toBe(212);
    expect(rttBetween(geo4, 'us-west', 'eu-west')).toBe(137);
  });
});

describe('withStorageTransport', () => {
  it('shm adds the region export to storage and the transport to clients, once; grpc changes nothing', () => {
    const t = parseTopology({ storage: { processes: 2, args: ['--window', '64'] }, clients: { count: 1 } });
    expect(withStorageTransport(t, 'grpc')).toBe(t);
    const s = withStorageTransport(t, 'shm');
    expect(s.storage.args).toEqual(['--window', '64', '--export-region', 'auto']);
    expect(s.clients.args).toEqual(['--storage-transport', 'shm']);
    expect(withStorageTransport(s, 'shm')).toEqual(s);
  });
});
