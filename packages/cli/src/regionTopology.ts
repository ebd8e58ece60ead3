/**
 * The `regions` section of a topology: which region each storage process, miner and client
 * lives in, and the round-trip time (optionally the bandwidth) between every two regions. On one
 * machine the cluster emulates it (`RegionLinks`, toxiproxy): a connection from a process of one
 * region to a process of another goes through a proxy that delays each direction by half the
 * pair's RTT; processes of one region talk directly.
 *
 * ```json
 * "regions": {
 *   "names": ["us-east", "eu-west"],
 *   "rttMs": [[0, 81], [81, 0]],
 *   "storage": ["us-east", "eu-west"],
 *   "miners": ["us-east", "eu-west"],
 *   "clients": ["us-east", "eu-west"]
 * }
 * ```
 */
import type { Checker } from './topologyChecker.js';
import { describe } from './topologyChecker.js';

/** A validated `regions` section (see {@link checkRegions}). */
export interface RegionTopology {
  /** The regions' names (`us-east`); their order indexes the matrices. */
  readonly names: readonly string[];
  /** Round-trip time between regions, ms: `rttMs[a][b]`, symmetric, 0 on the diagonal. */
  readonly rttMs: readonly (readonly number[])[];
  /**
   * Bandwidth of each direction between two regions, Mbit/s, 0 = unlimited; symmetric, 0 on the
   * diagonal. Each proxied link (one target process, one source region) gets the limit of its
   * own, so it caps a process's traffic from a region, not a region pair's in all.
   */
  readonly bandwidthMbps?: readonly (readonly number[])[];
  /** The region of each storage process, in process order (the replicas of a group next to each other). */
  readonly storage: readonly string[];
  /** The region of each miner. */
  readonly miners: readonly string[];
  /** The region of each client. */
  readonly clients: readonly string[];
}

/** Most regions a topology may have. */
export const MAX_REGIONS = 16;
/** Largest round-trip time between two regions, ms. */
export const MAX_RTT_MS = 10_000;
/** Largest bandwidth, Mbit/s. */
export const MAX_BANDWIDTH_MBPS = 1_000_000;

const REGION_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const REGION_KEYS = ['names', 'rttMs', 'bandwidthMbps', 'storage', 'miners', 'clients'];

/** How many processes of each role the rest of the topology asks for. */
export interface RegionCounts {
  readonly storageProcesses: number;
  readonly storageReplicas: number;
  readonly miners: number;
  readonly clients: number;
}

/**
 * Checks a `regions` section against the processes of its topology, noting every problem on `c`
 * (`regions.rttMs[1][0] (us-west → us-east): expected 70, …`). A placement left out spreads the
 * role round robin: miner and client i in region i mod n, replica r of every shard group in
 * region r mod n. Returns undefined when there were problems.
 */
export function checkRegions(c: Checker, value: unknown, counts: RegionCounts): RegionTopology | undefined {
  const before = c.issues.length;
  const r = c.object('regions', value, REGION_KEYS);
  if (r === undefined) return undefined;
  const names = checkNames(c, r.names);
  if (names === undefined) return undefined;
  const rttMs = checkMatrix(c, 'regions.rttMs', r.rttMs, names, {
    max: MAX_RTT_MS,
    integer: true,
    unit: 'ms',
  });
  const bandwidthMbps =
    r.bandwidthMbps === undefined
      ? undefined
      : checkMatrix(c, 'regions.bandwidthMbps', r.bandwidthMbps, names, {
          max: MAX_BANDWIDTH_MBPS,
          integer: false,
          unit: 'Mbit/s',
        });
  const roundRobin = (count: number, of: (i: number) => number) =>
    Array.from({ length: count }, (_, i) => names[of(i) % names.length]!);
  const { storageProcesses, storageReplicas } = counts;
  let storage: readonly string[] | undefined;
  if (r.storage === undefined) {
    storage = roundRobin(storageProcesses, (p) => p % storageReplicas);
  } else {
    // One per process, or one per replica index (the same for every shard group).
    const given = checkPlacement(
      c,
      'regions.storage',
      r.storage,
      names,
      [storageProcesses, storageReplicas],
      () =>
        storageReplicas === storageProcesses
          ? `${storageProcesses} (one per storage process)`
          : `${storageProcesses} (one per storage process) or ${storageReplicas} (one per replica of each shard group)`,
    );
    storage =
      given === undefined || given.length === storageProcesses
        ? given
        : roundRobin(storageProcesses, (p) => names.indexOf(given[p % storageReplicas]!));
  }
  const place = (role: 'miners' | 'clients', count: number, what: string) =>
    r[role] === undefined
      ? roundRobin(count, (i) => i)
      : checkPlacement(c, `regions.${role}`, r[role], names, [count], () => `${count} (one per ${what})`);
  const miners = place('miners', counts.miners, 'miner');
  const clients = place('clients', counts.clients, 'client');
  if (c.issues.length > before || rttMs === undefined || storage === undefined) return undefined;
  if (miners === undefined || clients === undefined) return undefined;
  return {
    names,
    rttMs,
    ...(bandwidthMbps === undefined ? {} : { bandwidthMbps }),
    storage,
    miners,
    clients,
  };
}

function checkNames(c: Checker, value: unknown): string[] | undefined {
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_REGIONS) {
    c.issues.push(
      `regions.names: expected an array of 1 to ${MAX_REGIONS} region names, found ${describe(value)}`,
    );
    return undefined;
  }
  const names: string[] = [];
  value.forEach((name, i) => {
    if (typeof name !== 'string' || !REGION_NAME.test(name)) {
      c.issues.push(
        `regions.names[${i}]: expected a region name (a lowercase letter, then letters, digits or -, e.g. "us-east"), found ${describe(name)}`,
      );
    } else if (names.includes(name)) {
      c.issues.push(
        `regions.names[${i}]: expected a name not used before, found ${JSON.stringify(name)} again`,
      );
    }
    names.push(String(name));
  });
  return names;
}

/**
 * A square matrix of numbers over `names`: every entry in [0, max] (an integer if asked), 0 on
 * the diagonal (one region's processes talk directly), `m[b][a]` equal to `m[a][b]`.
 */
function checkMatrix(
  c: Checker,
  path: string,
  value: unknown,
  names: readonly string[],
  kind: { readonly max: number; readonly integer: boolean; readonly unit: string },
): number[][] | undefined {
  const n = names.length;
  if (!Array.isArray(value) || value.length !== n) {
    const found = Array.isArray(value) ? `${value.length} rows` : describe(value);
    c.issues.push(
      `${path}: expected ${n} rows of ${n} numbers (a row per region of regions.names), found ${found}`,
    );
    return undefined;
  }
  const before = c.issues.length;
  const m: number[][] = [];
  value.forEach((row: unknown, a) => {
    if (!Array.isArray(row) || row.length !== n) {
      const found = Array.isArray(row) ? `${row.length} numbers` : describe(row);
      c.issues.push(`${path}[${a}] (from ${names[a]}): expected ${n} numbers, found ${found}`);
      m.push([]);
      return;
    }
    m.push(
      row.map((v: unknown, b) => {
        const at = `${path}[${a}][${b}] (${names[a]} → ${names[b]})`;
        const ok = typeof v === 'number' && Number.isFinite(v) && (!kind.integer || Number.isInteger(v));
        if (!ok || v < 0 || v > kind.max) {
          c.issues.push(
            `${at}: expected ${kind.integer ? 'an integer' : 'a number'} in [0, ${kind.max}] ${kind.unit}, found ${describe(v)}`,
          );
          return 0;
        }
        if (a === b && v !== 0) {
          c.issues.push(`${at}: expected 0 (one region's processes talk directly), found ${v}`);
        }
        return v;
      }),
    );
  });
  if (c.issues.length > before) return undefined;
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < a; b++) {
      if (m[a]![b] !== m[b]![a]) {
        c.issues.push(
          `${path}[${a}][${b}] (${names[a]} → ${names[b]}): expected ${m[b]![a]}, the same as ${path}[${b}][${a}] (the matrix is symmetric), found ${m[a]![b]}`,
        );
      }
    }
  }
  return c.issues.length > before ? undefined : m;
}

/** An array of known region names, of one of the `lengths`. */
function checkPlacement(
  c: Checker,
  path: string,
  value: unknown,
  names: readonly string[],
  lengths: readonly number[],
  expected: () => string,
): string[] | undefined {
  if (!Array.isArray(value) || !lengths.includes(value.length)) {
    const found = Array.isArray(value) ? String(value.length) : describe(value);
    c.issues.push(`${path}: expected an array of ${expected()} region names, found ${found}`);
    return undefined;
  }
  const before = c.issues.length;
  value.forEach((name: unknown, i) => {
    if (typeof name !== 'string' || !names.includes(name)) {
      c.issues.push(
        `${path}[${i}]: expected a region of regions.names (${names.join(', ')}), found ${describe(name)}`,
      );
    }
  });
  return c.issues.length > before ? undefined : (value as string[]);
}

/** The RTT between two regions of `regions`, ms (0 within one region). */
export function rttBetween(regions: RegionTopology, a: string, b: string): number {
  return regions.rttMs[regions.names.indexOf(a)]![regions.names.indexOf(b)]!;
}

/** The bandwidth of each direction between two regions, Mbit/s; undefined = unlimited. */
export function bandwidthBetween(regions: RegionTopology, a: string, b: string): number | undefined {
  const mbps = regions.bandwidthMbps?.[regions.names.indexOf(a)]?.[regions.names.indexOf(b)];
  return mbps === undefined || mbps === 0 ? undefined : mbps;
}

/** The regions that hold at least one process, in `names` order: where links are needed from. */
export function regionsInUse(regions: RegionTopology): string[] {
  const used = new Set([...regions.storage, ...regions.miners, ...regions.clients]);
  return regions.names.filter((name) => used.has(name));
}
