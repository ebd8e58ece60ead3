/**
 * How a geo topology is wired, with fake roles (test/fixtures/fakeRole.mjs, every one "listening"
 * at the same fake addresses) and a real toxiproxy-server (installed into .tools/ on first use):
 * which address each process is handed for each peer, the proxies and their toxics as toxiproxy
 * reports them, and toxiproxy stopped by PID with the cluster. The delay itself, on real roles,
 * is checked in geo.test.ts.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Cluster,
  type ClusterError,
  ClusterErrorCode,
  type ClusterOptions,
  installToxiproxy,
  parseTopology,
  type ToxiproxyProxy,
} from '@monsoon/cli';
import { isAlive, killLeftovers, logLines, tempDir } from '@monsoon/test-utils';

const fake = fileURLToPath(new URL('../fixtures/fakeRole.mjs', import.meta.url));
const args = ['--fake', 'listen'];

let root: { dir: string; remove: () => Promise<void> };
let toxiproxy: string;
const spawned = new Set<number>();
let runs = 0;

beforeAll(async () => {
  toxiproxy = await installToxiproxy();
  root = await tempDir('monsoon-region-links-');
}, 600_000);

afterAll(async () => {
  killLeftovers(spawned);
  await root?.remove();
});

function options(extra: Partial<ClusterOptions> = {}): ClusterOptions {
  return {
    dir: join(root.dir, `run-${runs++}`),
    genesisFile: fake, // never read by a fake role
    startTimeoutMs: 20_000,
    stopTimeoutMs: 2_000,
    tailLines: 20,
    scripts: { storage: [fake], miner: [fake], client: [fake] },
    toxiproxy,
    onProgress: (p) => {
      if (p.kind === 'spawned') spawned.add(p.pid);
    },
    ...extra,
  };
}

/** Two regions 100 ms apart (a third, unused): storage replicas, miners and clients in both. */
const topology = parseTopology({
  name: 'fake-geo',
  metrics: false,
  storage: { processes: 2, replicas: 2, args },
  miners: { count: 2, args },
  clients: { count: 2, args },
  regions: {
    names: ['east', 'west', 'south'],
    rttMs: [
      [0, 100, 30],
      [100, 0, 41],
      [30, 41, 0],
    ],
    bandwidthMbps: [
      [0, 8, 0],
      [8, 0, 0],
      [0, 0, 0],
    ],
    storage: ['east', 'west'],
    miners: ['west', 'east'],
    clients: ['east', 'west'],
  },
});

async function argvOf(logFile: string): Promise<string[]> {
  return JSON.parse((await logLines(logFile))[0]!).argv as string[];
}

function flag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i < 0 ? undefined : argv[i + 1];
}

describe('a geo topology on one machine', () => {
  it('hands each process its own region directly and the other through a delaying proxy', async () => {
    const cluster = await Cluster.start(topology, options());
    try {
      const [s0, s1] = cluster.storage;
      const [m0, m1] = cluster.miners;
      expect([s0!.region, s1!.region, m0!.region, m1!.region]).toEqual(['east', 'west', 'west', 'east']);
      expect(cluster.clients.map((c) => c.region)).toEqual(['east', 'west']);
      // One link per dialed process and other region in use (not "south", which holds none).
      expect(Object.keys(s0!.from!)).toEqual(['west']);
      expect(Object.keys(m0!.from!)).toEqual(['east']);
      expect(cluster.addressFrom(s0!, 'east')).toBe(s0!.address);
      expect(cluster.addressFrom(s0!, 'west')).toBe(s0!.from!.west);
      expect(s0!.from!.west).not.toBe(s0!.address);
      expect(() => cluster.addressFrom(s0!, 'south')).toThrow(
        /expected one that holds a process \(east, west\)/,
      );

      // miner-1 (east) dials miner-0 (west) through miner-0's link from east.
      const miner1 = await argvOf(m1!.logFile);
      expect(flag(miner1, '--peers')).toBe(m0!.from!.east);
      expect(flag(miner1, '--storage')).toBe([s0!.address, s1!.from!.east].join(','));
      // client-1 (west): its own region's replica and miner first.
      const client1 = await argvOf(cluster.clients[1]!.logFile);
      expect(flag(client1, '--storage')).toBe([s1!.address, s0!.from!.west].join(','));
      expect(flag(client1, '--miners')).toBe([m0!.address, m1!.from!.west].join(','));
      const client0 = await argvOf(cluster.clients[0]!.logFile);
      expect(flag(client0, '--miners')).toBe([m1!.address, m0!.from!.east].join(','));

      // toxiproxy's own view: 50 ms each way (100 ms RTT), 8 Mbit/s = 1,000 KB/s each way.
      const proxies = new Map(
        (await cluster.regionLinks!.proxies()).map((p): [string, ToxiproxyProxy] => [p.name, p]),
      );
      expect([...proxies.keys()].filter((n) => !n.startsWith('monsoon-')).sort()).toEqual([
        'miner-0.from-east',
        'miner-1.from-west',
        'storage-0.from-west',
        'storage-1.from-east',
      ]);
      const link = proxies.get('storage-0.from-west')!;
      expect(link).toMatchObject({ listen: s0!.from!.west, upstream: s0!.address, enabled: true });
      expect(
        link.toxics.map((t) => [t.type, t.stream, t.attributes.latency ?? t.attributes.rate]).sort(),
      ).toEqual([
        ['bandwidth', 'downstream', 1_000],
        ['bandwidth', 'upstream', 1_000],
        ['latency', 'downstream', 50],
        ['latency', 'upstream', 50],
      ]);
      expect(cluster.describe().regions).toMatchObject({
        names: ['east', 'west', 'south'],
        toxiproxy: { pid: cluster.regionLinks!.process.pid, api: cluster.regionLinks!.api },
      });
    } finally {
      const stopped = await cluster.stop();
      expect(stopped.at(-1)).toMatchObject({ name: 'toxiproxy', code: 0, killed: false });
      expect(isAlive(cluster.regionLinks!.process.pid)).toBe(false);
    }
  });

  it('splits an odd RTT so the two directions add up to it', async () => {
    const odd = parseTopology({
      ...topology,
      regions: {
        ...topology.regions!,
        rttMs: [
          [0, 101, 30],
          [101, 0, 41],
          [30, 41, 0],
        ],
      },
    });
    const { bandwidthMbps: _, ...noBandwidth } = odd.regions!;
    const cluster = await Cluster.start({ ...odd, regions: noBandwidth }, options());
    try {
      const link = (await cluster.regionLinks!.proxies()).find((p) => p.name === 'miner-1.from-west')!;
      const latency = Object.fromEntries(link.toxics.map((t) => [t.stream, t.attributes.latency]));
      expect(latency).toEqual({ upstream: 50, downstream: 51 });
    } finally {
      await cluster.stop();
    }
  });

  it('starts no toxiproxy when every process is in one region', async () => {
    const one = parseTopology({
      ...topology,
      regions: {
        names: ['east', 'west'],
        rttMs: [
          [0, 100],
          [100, 0],
        ],
        storage: ['east', 'east'],
        miners: ['east', 'east'],
        clients: ['east', 'east'],
      },
    });
    const cluster = await Cluster.start(one, options({ toxiproxy: join(root.dir, 'no-such-binary') }));
    try {
      expect(cluster.regionLinks).toBeUndefined();
      expect(cluster.storage[0]!.from).toBeUndefined();
      expect(cluster.addressFrom(cluster.storage[0]!, 'east')).toBe(cluster.storage[0]!.address);
    } finally {
      await cluster.stop();
    }
  });

  it('refuses to start without toxiproxy, before spawning anything', async () => {
    const missing = join(root.dir, 'no-such-binary');
    let count = 0;
    const error = (await Cluster.start(
      topology,
      options({
        toxiproxy: missing,
        onProgress: (p) => {
          if (p.kind === 'spawned') count++;
        },
      }),
    ).catch((e: unknown) => e)) as ClusterError;
    expect(error.code).toBe(ClusterErrorCode.NotBuilt);
    expect(error.message).toContain(`toxiproxy-server v2.5.0 at ${missing}`);
    expect(error.message).toContain('run scripts/toxiproxy.sh');
    expect(count).toBe(0);
  });
});
