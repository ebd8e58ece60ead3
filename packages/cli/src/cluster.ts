/**
 * A whole Monsoon network on this machine, from a {@link Topology}: storage processes (the
 * shards cut into groups, each group held by `replicas` processes), then miners (each peered
 * with the ones before it, so they form a full mesh, and sending every block to every storage
 * process), then clients (following every miner, reading from every storage process). Every
 * process listens on 127.0.0.1, port 0, and is ready when it prints its `listening` line; its
 * output goes to `<dir>/logs/<role>-<i>.log`.
 *
 * A process that exits when nobody asked it to is never a silent hang: during start, start()
 * rejects with its log tail (and stops the rest); later, `onFailure` gets the same error.
 *
 * A topology with `regions` in more than one region gets its links emulated (`RegionLinks`,
 * toxiproxy, started first and stopped last): each process is handed the addresses of the
 * processes of its own region as they listen, and of other regions' through their proxy for its
 * region; clients list storage nodes and miners nearest first.
 */
import { access, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ClusterError, ClusterErrorCode } from './clusterError.js';
import { type ClusterGenesis, generateGenesis } from './clusterGenesis.js';
import { DEFAULT_TOXIPROXY, RegionLinks, requireToxiproxy } from './regionLinks.js';
import { bandwidthBetween, regionsInUse, rttBetween } from './regionTopology.js';
import { type LogLine, type ProcessExit, RoleProcess } from './roleProcess.js';
import { defaultRoleScripts, type Role, type RoleScripts, requireRoleScripts } from './roleScripts.js';
import { storageLayout } from './shardLayout.js';
import { parseTopology, type Topology } from './topology.js';

/** Something that happened during {@link Cluster.start}, for a progress display. */
export type ClusterProgress =
  | { readonly kind: 'accounts' | 'genesis'; readonly done: number; readonly total: number }
  | { readonly kind: 'spawned'; readonly name: string; readonly pid: number; readonly logFile: string }
  | { readonly kind: 'listening'; readonly process: ClusterProcess };

/** Options of {@link Cluster.start}; everything but `dir` has a default in {@link defaultClusterOptions}. */
export interface ClusterOptions {
  /**
   * The cluster's directory: `logs/` (one file per process) and `data/` (the storage nodes'
   * data), both emptied at every start (the miners start from genesis, so old blocks would not
   * fit), the generated `genesis.json`, and `cluster.json` (where everything listens, once
   * started). It must be new, empty, or a cluster's directory already (it holds
   * {@link CLUSTER_DIR_MARKER}), so a wrong `dir` never gets its `data/` deleted.
   */
  readonly dir: string;
  /** A geth-style genesis.json to use; without it one is generated with the workload's accounts. */
  readonly genesisFile?: string;
  /** Accounts in a generated genesis (default: the topology's `accounts`). */
  readonly accounts?: number;
  /** Where generated account keys are cached between runs (default `<dir>/cache`). */
  readonly cacheDir?: string;
  /** How long each process may take to print `listening` (a big genesis takes a while to load). */
  readonly startTimeoutMs: number;
  /** How long stop() waits after SIGTERM before it SIGKILLs a process. */
  readonly stopTimeoutMs: number;
  /** Log lines quoted in a failure report. */
  readonly tailLines: number;
  /** The script each role runs (default: this repository's built CLIs). */
  readonly scripts: RoleScripts;
  /** Flags each role's Node starts with (default {@link roleNodeArgs}). */
  readonly nodeArgs?: (role: Role, args: readonly string[]) => readonly string[];
  /** Variables added to each role's environment (default {@link roleEnv}). */
  readonly roleEnv?: (role: Role, index: number, args: readonly string[]) => Readonly<Record<string, string>>;
  /** toxiproxy-server, for a topology with regions (default: where `scripts/toxiproxy.sh` installs it). */
  readonly toxiproxy?: string;
  /** Genesis generation progress, and each process as it is spawned and as it starts listening. */
  readonly onProgress?: (progress: ClusterProgress) => void;
  /** A process exited after start() had resolved (once per process; not during stop()). */
  readonly onFailure?: (error: ClusterError) => void;
  /** Aborts a start in progress: the processes started so far are stopped and start() rejects. */
  readonly signal?: AbortSignal;
}

/**
 * V8 flags a role starts with: a young generation twice V8's default (semi-spaces of 32 MiB, not
 * 16). Every role allocates batch-lived objects (decoded trie nodes, proofs, transactions, gRPC
 * messages) that a 16 MiB semi-space promotes half-done, and old-space collections follow. The
 * default cluster at 100K accounts, A/B alternating with nothing else changed: +5% committed tx/s
 * on a quiet box; 467 and 500 against 407 and 357 tx/s (−10 to −20% CPU per tx) on a loaded one
 * (`NODE_OPTIONS=--max-semi-space-size=32`, bench/results/e2e-semi-space.md). A tiered storage node
 * is left at V8's default: its budget counts RSS, and a bigger young generation is RSS it cannot
 * give back.
 *
 * A client's semi-spaces are 64 MiB: with 2,000 transactions in flight each one's state lives a
 * few hundred ms, longer than the gap between scavenges, and ~45% of what a client allocates
 * outlived two of them at 32 MiB. Clients only, 32 against 64, alternating (load 9-12): client CPU
 * per committed tx 0.286 / 0.304 -> 0.263 / 0.272 ms, 1,764 / 1,483 -> 1,918 / 1,822 tx/s
 * (bench/results/issue17-client12/e2e-semi32v64.txt; 128 cut scavenges further but adds
 * mark-compact time and ~3 x 64 MiB of young generation more).
 *
 * A storage node in memory also compacts its old space at every full collection
 * (`--compact-on-every-full-gc`): its version window's trie nodes have mixed lifetimes, so with
 * V8's default (compact only the most fragmented pages) its committed old space rose 3-5 MiB/min
 * over a flat live old space in a 20-minute soak, and stayed flat with the flag
 * (bench/results/soak-probe/curve.md). Storage's CPU per committed transaction with it, A/B
 * alternating, 30 s each: 0.268 against 0.341 ms, then 0.218 against 0.214 (load 9-15,
 * bench/results/e2e-compact-gc.md): no cost above the box's swing. A tiered node is left at V8's
 * defaults here too (not measured with it).
 *
 * The deployments start roles with the same flags (the Kubernetes containers' `command`, the
 * Ansible units' `monsoon_node_flags`): test/deploy checks both against this function.
 */
export function roleNodeArgs(role: Role, args: readonly string[]): readonly string[] {
  if (role === 'client') return ['--max-semi-space-size=64'];
  if (role !== 'storage') return ['--max-semi-space-size=32'];
  return isTieredStorage(role, args) ? [] : ['--max-semi-space-size=32', '--compact-on-every-full-gc'];
}

/** Whether a role with `args` is a storage node over the tiered backend (`--backend tiered`). */
export function isTieredStorage(role: Role, args: readonly string[]): boolean {
  return role === 'storage' && args.some((a, i) => a === '--backend' && args[i + 1] === 'tiered');
}

/**
 * glibc's malloc settings a tiered storage node starts with (read once, at process start). Its
 * budget counts RSS, and at 1M accounts, 10% (33.7 MiB) a quarter of its anonymous growth was
 * malloc's per-thread arenas (libuv's and LevelDB's threads: +24-27 MiB) and freed memory glibc
 * kept: its trim threshold rises with each large mapped chunk freed (the dynamic mmap threshold).
 * A fixed mmap threshold of 128 KiB (which also holds the trim threshold at its 128 KiB default):
 * bench/tiered.ts's child, 3 pairs alternating at 1M, 10%, load 1-2.5: anonymous growth 70.3-81.3
 * against 82.4-91.1 MiB at the end, peak 85.2-90.6 against 97.9-101.2; not free: 2-6% more CPU a
 * proof, 1.5-4.5% fewer 90/10 proofs/s. Two arenas as well (MALLOC_ARENA_MAX=2) grew 65.3-78.4
 * but cost 44-48 against 40-44 µs a proof (7% fewer proofs/s): not set.
 */
export const TIERED_MALLOC_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };

/** The environment a role starts with beyond the cluster's own: a tiered storage node's malloc settings. */
export function roleEnv(
  role: Role,
  _index: number,
  args: readonly string[],
): Readonly<Record<string, string>> {
  return isTieredStorage(role, args) ? TIERED_MALLOC_ENV : {};
}

export const defaultClusterOptions = {
  startTimeoutMs: 120_000,
  stopTimeoutMs: 10_000,
  tailLines: 20,
  scripts: defaultRoleScripts,
  nodeArgs: roleNodeArgs,
  roleEnv,
  toxiproxy: DEFAULT_TOXIPROXY,
} as const satisfies Partial<ClusterOptions>;

/** One process of the cluster and where it listens. */
export interface ClusterProcess {
  readonly role: Role;
  readonly index: number;
  /** `<role>-<index>`. */
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** `http://host:port/metrics` (Prometheus text), when the topology asks for metrics. */
  readonly metrics: string | undefined;
  /** The region it lives in, when the topology has regions. */
  readonly region?: string;
}

/** A process the others dial: storage nodes and miners. */
export interface DialedProcess extends ClusterProcess {
  /** `host:port`, as its own region dials it. */
  readonly address: string;
  /**
   * How each other region dials it, by region name: the `127.0.0.1:port` of its region link
   * (see {@link Cluster.addressFrom}). Only in a topology with processes in several regions.
   */
  readonly from?: Readonly<Record<string, string>>;
}

/** A storage process: its gRPC address (StorageService) and the shards it holds. */
export interface StorageEndpoint extends DialedProcess {
  readonly role: 'storage';
  /** Its `--shards` spec, e.g. `0-7`. */
  readonly shards: string;
}

/** A miner: its gRPC address (MinerService). */
export interface MinerEndpoint extends DialedProcess {
  readonly role: 'miner';
  /** The address its blocks pay. */
  readonly coinbase: string;
}

/** A client: its Ethereum JSON-RPC URL and its gRPC address (ClientService, bulk SendTransactions). */
export interface ClientEndpoint extends ClusterProcess {
  readonly role: 'client';
  /** `http://host:port`. */
  readonly rpc: string;
  /** `host:port`. */
  readonly grpc: string;
}

/** How one process ended in {@link Cluster.stop}. */
export interface StoppedProcess extends ProcessExit {
  readonly name: string;
  readonly pid: number;
  /** It ignored SIGTERM for `stopTimeoutMs` and was SIGKILLed. */
  readonly killed: boolean;
}

/** Miner i's coinbase: 0xc0 00…00 (i+1), an address no workload account has. */
export function minerCoinbase(index: number): string {
  return `0xc0${'00'.repeat(18)}${(index + 1).toString(16).padStart(2, '0')}`;
}

/** A process that printed `listening`, and that line. */
interface Ready {
  readonly info: ClusterProcess;
  readonly line: LogLine;
}

interface Member {
  readonly role: Role;
  readonly index: number;
  readonly proc: RoleProcess;
}

/** A running cluster; see the file comment. */
export class Cluster {
  readonly topology: Topology;
  /** The cluster's directory, absolute. */
  readonly dir: string;
  readonly genesis: ClusterGenesis;
  /** Storage processes, in topology order (replicas of a shard group next to each other). */
  readonly storage: StorageEndpoint[] = [];
  readonly miners: MinerEndpoint[] = [];
  /** Clients; `clients[0].rpc` is the JSON-RPC URL to give a wallet. */
  readonly clients: ClientEndpoint[] = [];
  private readonly opts: ClusterOptions;
  private readonly members: Member[] = [];
  /** toxiproxy, when the topology has processes in more than one region. */
  private links: RegionLinks | undefined;
  private started = false;
  private stopping: Promise<StoppedProcess[]> | undefined;
  private firstFailure: ClusterError | undefined;
  /** Rejects with the first unexpected exit during start (raced against every wait there). */
  private readonly startFailure: Promise<never>;
  private failStart: (e: ClusterError) => void = () => undefined;

  private constructor(topology: Topology, dir: string, genesis: ClusterGenesis, opts: ClusterOptions) {
    this.topology = topology;
    this.dir = dir;
    this.genesis = genesis;
    this.opts = opts;
    this.startFailure = new Promise<never>((_, reject) => {
      this.failStart = reject;
    });
    this.startFailure.catch(() => undefined);
  }

  /**
   * Starts every process of `topology` in dependency order and resolves once all are listening.
   * Rejects with a {@link ClusterError} — the failed process's log tail in its message — after
   * stopping whatever it had started.
   */
  static async start(
    topology: Topology,
    options: Partial<ClusterOptions> & Pick<ClusterOptions, 'dir'>,
  ): Promise<Cluster> {
    const opts: ClusterOptions = { ...defaultClusterOptions, ...options };
    const t = parseTopology(topology, `topology ${JSON.stringify(topology.name)}`);
    checkOptions(opts);
    await requireRoleScripts(opts.scripts);
    if (t.regions !== undefined && regionsInUse(t.regions).length > 1)
      await requireToxiproxy(opts.toxiproxy ?? DEFAULT_TOXIPROXY);
    const dir = resolve(opts.dir);
    await prepareDir(dir);

    let genesis: ClusterGenesis;
    if (opts.genesisFile !== undefined) {
      const file = resolve(opts.genesisFile);
      try {
        await access(file);
      } catch (e) {
        throw new ClusterError(
          ClusterErrorCode.BadOptions,
          `genesisFile: expected a readable file, found ${(e as Error).message}`,
          { genesisFile: file },
          e,
        );
      }
      genesis = { file };
    } else {
      const onProgress = opts.onProgress;
      genesis = await generateGenesis(join(dir, 'genesis.json'), {
        seed: t.seed,
        count: opts.accounts ?? t.accounts,
        cacheDir: resolve(opts.cacheDir ?? join(dir, 'cache')),
        // The chain's difficulty rule is what the topology's miners seal at (0: no work, said explicitly).
        minDifficulty: BigInt(t.miners.difficulty),
        gasLimit: BigInt(t.miners.blockGasLimit),
        ...(onProgress ? { onProgress: (kind, done, total) => onProgress({ kind, done, total }) } : {}),
      });
    }

    const cluster = new Cluster(t, dir, genesis, opts);
    try {
      await cluster.launch();
      await writeFile(join(dir, 'cluster.json'), `${JSON.stringify(cluster.describe(), null, 2)}\n`);
      // A process that died after its own wait but before this point has nobody to tell yet.
      if (cluster.firstFailure !== undefined) throw cluster.firstFailure;
    } catch (e) {
      await cluster.stop();
      throw e;
    }
    cluster.started = true;
    return cluster;
  }

  /** Every process, storage first, then miners, then clients. */
  get processes(): ClusterProcess[] {
    return [...this.storage, ...this.miners, ...this.clients];
  }

  /** The toxiproxy emulating the links between regions, when the topology has processes in several. */
  get regionLinks(): RegionLinks | undefined {
    return this.links;
  }

  /**
   * The address a process of `region` dials `target` at: its own address from its own region
   * (or when there are no regions), else its region link's. Throws BAD_OPTIONS for a region
   * that holds no process.
   */
  addressFrom(target: DialedProcess, region: string | undefined): string {
    if (region === undefined || target.region === undefined || target.region === region)
      return target.address;
    const link = target.from?.[region];
    if (link === undefined) {
      const used = this.topology.regions === undefined ? [] : regionsInUse(this.topology.regions);
      throw new ClusterError(
        ClusterErrorCode.BadOptions,
        `region: expected one that holds a process (${used.join(', ')}), found ${JSON.stringify(region)}`,
        { region, target: target.name },
      );
    }
    return link;
  }

  /** The first unexpected exit, if any process has failed. */
  get failure(): ClusterError | undefined {
    return this.firstFailure;
  }

  /** Where everything listens, as plain JSON (what `cluster.json` holds). */
  describe(): Record<string, unknown> {
    return {
      name: this.topology.name,
      dir: this.dir,
      rpc: this.clients.map((c) => c.rpc),
      genesis: {
        file: this.genesis.file,
        ...(this.genesis.accounts ? { accounts: this.genesis.accounts } : {}),
        ...(this.genesis.chainId !== undefined ? { chainId: Number(this.genesis.chainId) } : {}),
      },
      clients: this.clients,
      miners: this.miners,
      storage: this.storage,
      ...(this.topology.regions && { regions: { ...this.topology.regions, ...this.linksInfo() } }),
    };
  }

  /**
   * Stops every process: SIGTERM to the clients, then the miners, then the storage processes,
   * each group waited for (SIGKILL after `stopTimeoutMs`) before the next, then toxiproxy. Safe
   * to call more than once; every call resolves with how each process ended.
   */
  stop(): Promise<StoppedProcess[]> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  private async stopAll(): Promise<StoppedProcess[]> {
    const stopped: StoppedProcess[] = [];
    for (const role of ['client', 'miner', 'storage'] as const) {
      const group = this.members.filter((m) => m.role === role);
      const ends = await Promise.all(
        group.map(async ({ proc }) => ({
          name: proc.name,
          pid: proc.pid,
          ...(await proc.terminate(this.opts.stopTimeoutMs)),
        })),
      );
      stopped.push(...ends);
    }
    const links = this.links;
    if (links !== undefined) {
      stopped.push({
        name: links.process.name,
        pid: links.process.pid,
        ...(await links.terminate(this.opts.stopTimeoutMs)),
      });
    }
    return stopped;
  }

  /** Where toxiproxy runs, for `cluster.json` (an operator may have to stop it by PID). */
  private linksInfo(): Record<string, unknown> {
    if (this.links === undefined) return {};
    const { pid, logFile } = this.links.process;
    return { toxiproxy: { pid, api: this.links.api, logFile } };
  }

  /** toxiproxy, when processes live in more than one region: started before any of them. */
  private async startLinks(): Promise<void> {
    const regions = this.topology.regions;
    if (regions === undefined || regionsInUse(regions).length < 2) return;
    this.throwIfAborted();
    const links = await RegionLinks.start({
      binary: this.opts.toxiproxy ?? DEFAULT_TOXIPROXY,
      logFile: join(this.dir, 'logs', 'toxiproxy.log'),
      configFile: join(this.dir, 'data', 'toxiproxy.json'),
      startTimeoutMs: this.opts.startTimeoutMs,
      tailLines: this.opts.tailLines,
    });
    this.opts.onProgress?.({
      kind: 'spawned',
      name: links.process.name,
      pid: links.process.pid,
      logFile: links.process.logFile,
    });
    if (this.stopping !== undefined) {
      // stop() came while it was starting and has not seen it.
      await links.terminate(this.opts.stopTimeoutMs);
      this.throwIfAborted();
    }
    this.links = links;
    this.watch(links.process);
  }

  /** `{ from }`: a region link to `address` from every other region that holds a process. */
  private async linksTo(p: ClusterProcess, address: string): Promise<Pick<DialedProcess, 'from'>> {
    const regions = this.topology.regions;
    if (this.links === undefined || regions === undefined || p.region === undefined) return {};
    const from: Record<string, string> = {};
    for (const other of regionsInUse(regions)) {
      if (other === p.region) continue;
      const link = await this.links.link(
        `${p.name}.from-${other}`,
        address,
        rttBetween(regions, p.region, other),
        bandwidthBetween(regions, p.region, other),
      );
      from[other] = link.listen;
    }
    return { from };
  }

  /** `targets` as a process of `region` dials them, the nearest first (the order kept among equals). */
  private nearestFirst(targets: readonly DialedProcess[], region: string | undefined): string {
    const regions = this.topology.regions;
    const rtt = (t: DialedProcess) =>
      regions === undefined || region === undefined || t.region === undefined
        ? 0
        : rttBetween(regions, region, t.region);
    return [...targets]
      .sort((a, b) => rtt(a) - rtt(b))
      .map((t) => this.addressFrom(t, region))
      .join(',');
  }

  /** The region of a role's process `index`, when the topology has regions. */
  private regionOf(role: Role, index: number): string | undefined {
    const r = this.topology.regions;
    return r === undefined
      ? undefined
      : { storage: r.storage, miner: r.miners, client: r.clients }[role][index];
  }

  private async launch(): Promise<void> {
    const t = this.topology;
    await this.startLinks();
    const common = (role: Role) => [
      '--genesis',
      this.genesis.file,
      '--log-level',
      t.logLevel,
      ...(t.metrics ? ['--metrics', '127.0.0.1:0'] : []),
      ...(role === 'storage' ? t.storage.args : role === 'miner' ? t.miners.args : t.clients.args),
    ];

    const layout = storageLayout(t.storage, t.shardCount);
    const storage = layout.map((shards, i) =>
      this.spawn('storage', i, [
        ...common('storage'),
        '--shards',
        shards,
        '--shard-count',
        String(t.shardCount),
        '--listen',
        '127.0.0.1:0',
        '--data-dir',
        join(this.dir, 'data', `storage-${i}`),
        '--fsync',
        t.storage.fsync,
      ]),
    );
    for (const [i, { info, line }] of (await this.listening(storage)).entries()) {
      const address = String(line.address);
      const from = await this.linksTo(info, address);
      this.storage.push({ ...info, role: 'storage', address, shards: layout[i]!, ...from });
    }

    // One at a time: each dials the ones before it (peering is two-way), a full mesh.
    for (let i = 0; i < t.miners.count; i++) {
      const region = this.regionOf('miner', i);
      const peers = this.miners.map((m) => this.addressFrom(m, region));
      const coinbase = minerCoinbase(i);
      const member = this.spawn('miner', i, [
        ...common('miner'),
        '--listen',
        '127.0.0.1:0',
        '--storage',
        this.nearestFirst(this.storage, region),
        ...(peers.length > 0 ? ['--peers', peers.join(',')] : []),
        '--coinbase',
        coinbase,
        '--retention',
        String(t.miners.retention),
        '--difficulty',
        String(t.miners.difficulty),
        '--block-interval',
        String(t.miners.blockIntervalMs),
        '--shard-count',
        String(t.shardCount),
      ]);
      const [{ info, line }] = (await this.listening([member])) as [Ready];
      const address = String(line.address);
      const from = await this.linksTo(info, address);
      this.miners.push({ ...info, role: 'miner', address, coinbase, ...from });
    }

    const clients = Array.from({ length: t.clients.count }, (_, i) =>
      this.spawn('client', i, [
        ...common('client'),
        '--miners',
        this.nearestFirst(this.miners, this.regionOf('client', i)),
        '--storage',
        this.nearestFirst(this.storage, this.regionOf('client', i)),
        '--rpc',
        '127.0.0.1:0',
        '--grpc',
        '127.0.0.1:0',
        '--compact-levels',
        String(t.miners.retention),
      ]),
    );
    for (const { info, line } of await this.listening(clients)) {
      this.clients.push({ ...info, role: 'client', rpc: String(line.rpc), grpc: String(line.grpc) });
    }
  }

  private spawn(role: Role, index: number, args: string[]): Member {
    this.throwIfAborted();
    const name = `${role}-${index}`;
    const proc = RoleProcess.spawn({
      name,
      script: this.opts.scripts[role][0],
      args: [...this.opts.scripts[role].slice(1), ...args],
      nodeArgs: (this.opts.nodeArgs ?? roleNodeArgs)(role, args),
      env: (this.opts.roleEnv ?? roleEnv)(role, index, args),
      logFile: join(this.dir, 'logs', `${name}.log`),
      tailLines: this.opts.tailLines,
    });
    const member = { role, index, proc };
    this.members.push(member);
    this.watch(proc);
    this.opts.onProgress?.({ kind: 'spawned', name, pid: proc.pid, logFile: proc.logFile });
    return member;
  }

  /** Reports `proc` exiting when nobody asked it to: to start() while starting, then to `onFailure`. */
  private watch(proc: RoleProcess): void {
    void proc.exited.then((exit) => {
      if (this.stopping !== undefined) return;
      const error = proc.exitError(
        exit,
        this.started ? 'while the cluster was running' : 'while the cluster was starting',
      );
      this.firstFailure ??= error;
      if (this.started) this.opts.onFailure?.(error);
      else this.failStart(error);
    });
  }

  /** The `listening` lines of `procs`, unless any process of the cluster fails or the start is aborted first. */
  private async listening(members: readonly Member[]): Promise<Ready[]> {
    const signal = this.opts.signal;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(abortedError());
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => undefined);
    try {
      this.throwIfAborted();
      return await Promise.race([
        Promise.all(
          members.map(async (member) => {
            const line = await member.proc.waitListening(this.opts.startTimeoutMs);
            const info = describeProcess(member, line, this.regionOf(member.role, member.index));
            this.opts.onProgress?.({ kind: 'listening', process: info });
            return { info, line };
          }),
        ),
        this.startFailure,
        aborted,
      ]);
    } finally {
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
    }
  }

  private throwIfAborted(): void {
    if (this.opts.signal?.aborted) throw abortedError();
    if (this.stopping !== undefined) {
      throw new ClusterError(ClusterErrorCode.Aborted, 'the cluster is stopping: no process is started', {});
    }
  }
}

function abortedError(): ClusterError {
  return new ClusterError(
    ClusterErrorCode.Aborted,
    'start aborted: every process started so far is stopped',
    {},
  );
}

function describeProcess({ role, index, proc }: Member, line: LogLine, region?: string): ClusterProcess {
  return {
    role,
    index,
    name: proc.name,
    pid: proc.pid,
    logFile: proc.logFile,
    metrics: metricsUrl(line.metrics),
    ...(region === undefined ? {} : { region }),
  };
}

/** A `metrics` field of a listening line (`host:port` or a URL) as `http://host:port/metrics`. */
function metricsUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  const base = /^https?:\/\//.test(value) ? value : `http://${value}`;
  return base.endsWith('/metrics') ? base : `${base.replace(/\/$/, '')}/metrics`;
}

/** The file that makes a directory a cluster's, which a start may empty `logs/` and `data/` of. */
export const CLUSTER_DIR_MARKER = '.monsoon-cluster';

async function prepareDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const entries = await readdir(dir);
  if (entries.length > 0 && !entries.includes(CLUSTER_DIR_MARKER)) {
    throw new ClusterError(
      ClusterErrorCode.BadOptions,
      `dir ${dir}: expected a new or empty directory or a cluster's (with ${CLUSTER_DIR_MARKER}), found ${entries.length} entries and no ${CLUSTER_DIR_MARKER}`,
      { dir },
    );
  }
  await writeFile(
    join(dir, CLUSTER_DIR_MARKER),
    'made by @monsoon/cli: logs/ and data/ are emptied at every start\n',
  );
  await rm(join(dir, 'cluster.json'), { force: true });
  for (const sub of ['logs', 'data']) {
    await rm(join(dir, sub), { recursive: true, force: true });
    await mkdir(join(dir, sub));
  }
}

function checkOptions(o: ClusterOptions): void {
  const bad = (field: string, expected: string, found: unknown): never => {
    throw new ClusterError(
      ClusterErrorCode.BadOptions,
      `${field}: expected ${expected}, found ${String(found)}`,
      {
        field,
        found,
      },
    );
  };
  if (typeof o.dir !== 'string' || o.dir.length === 0) bad('dir', 'a directory', o.dir);
  for (const field of ['startTimeoutMs', 'stopTimeoutMs', 'tailLines'] as const) {
    if (!Number.isSafeInteger(o[field]) || o[field] < 1) bad(field, 'a positive integer', o[field]);
  }
  if (o.accounts !== undefined && (!Number.isSafeInteger(o.accounts) || o.accounts < 1)) {
    bad('accounts', 'a positive integer', o.accounts);
  }
}
