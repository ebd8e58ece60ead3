/**
 * The links between the regions of a geo topology, on one machine: this kernel has no netem, so
 * the delay is added in user space by one toxiproxy-server on 127.0.0.1. Every process that
 * another region dials gets one proxy per source region, whose latency toxics delay each
 * direction by half the pair's round-trip time (bandwidth toxics cap it, when the topology asks);
 * the dialers in that region are handed the proxy's address instead of the process's.
 *
 * toxiproxy's API can't listen on port 0, so a free port is picked and, should another process
 * take it first, picked again; the server is known to be ours by a sentinel proxy of a random
 * name it loads from its start-up config. Its proxies do listen on port 0 (the API answers with
 * the bound address). The server is stopped by PID, like the roles.
 */
import { randomBytes } from 'node:crypto';
import { access, constants, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ClusterError, ClusterErrorCode } from './clusterError.js';
import { type ProcessExit, RoleProcess } from './roleProcess.js';

/** The toxiproxy release the links are built and tested with. */
export const TOXIPROXY_VERSION = 'v2.5.0';

/** Where `scripts/toxiproxy.sh` installs toxiproxy-server: `<repository>/.tools/bin/`. */
export const DEFAULT_TOXIPROXY = fileURLToPath(
  new URL('../../../.tools/bin/toxiproxy-server', import.meta.url),
);

/** Options of {@link RegionLinks.start}; defaults in {@link defaultRegionLinksOptions}. */
export interface RegionLinksOptions {
  /** The toxiproxy-server executable. */
  readonly binary: string;
  /** Its output (truncated first). */
  readonly logFile: string;
  /** Where its start-up config (the sentinel proxy) is written. */
  readonly configFile: string;
  /** How long the server may take to answer its API, per attempt. */
  readonly startTimeoutMs: number;
  /** Ports tried for the API: a port found free may be taken before toxiproxy binds it. */
  readonly portAttempts: number;
  /** Deadline of each API request. */
  readonly requestTimeoutMs: number;
  /** Log lines quoted when it fails. */
  readonly tailLines: number;
}

export const defaultRegionLinksOptions = {
  binary: DEFAULT_TOXIPROXY,
  startTimeoutMs: 30_000,
  portAttempts: 5,
  requestTimeoutMs: 10_000,
  tailLines: 20,
} as const satisfies Partial<RegionLinksOptions>;

/** One link: a process (`upstream`) as the processes of another region dial it (`listen`). */
export interface RegionLink {
  /** The proxy's name, `<process>.from-<region>`. */
  readonly name: string;
  /** `127.0.0.1:port`: what the other region is handed. */
  readonly listen: string;
  /** The process's own address. */
  readonly upstream: string;
  /** The region pair's round-trip time: ⌊rtt/2⌋ ms added towards the process, the rest back. */
  readonly rttMs: number;
  /** Each direction's bandwidth, Mbit/s, when capped. */
  readonly bandwidthMbps?: number;
}

/** A toxic as toxiproxy's API shows it. */
export interface ToxiproxyToxic {
  readonly name: string;
  readonly type: string;
  readonly stream: 'upstream' | 'downstream';
  readonly toxicity: number;
  readonly attributes: Readonly<Record<string, number>>;
}

/** A proxy as toxiproxy's API shows it (`GET /proxies`). */
export interface ToxiproxyProxy {
  readonly name: string;
  readonly listen: string;
  readonly upstream: string;
  readonly enabled: boolean;
  readonly toxics: readonly ToxiproxyToxic[];
}

/** Throws {@link ClusterErrorCode.NotBuilt} unless `binary` is an executable file. */
export async function requireToxiproxy(binary: string): Promise<void> {
  try {
    await access(binary, constants.X_OK);
  } catch {
    throw new ClusterError(
      ClusterErrorCode.NotBuilt,
      `expected toxiproxy-server ${TOXIPROXY_VERSION} at ${binary} to emulate the topology's regions, found nothing executable: run scripts/toxiproxy.sh`,
      { missing: [binary] },
    );
  }
}

/** A port nobody listens on right now (the OS's pick for port 0, released again). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A running toxiproxy-server and the links it has made; see the file comment. */
export class RegionLinks {
  /** `http://127.0.0.1:port`, its API. */
  readonly api: string;
  readonly process: RoleProcess;
  private readonly opts: RegionLinksOptions;

  private constructor(api: string, proc: RoleProcess, opts: RegionLinksOptions) {
    this.api = api;
    this.process = proc;
    this.opts = opts;
  }

  /**
   * Starts toxiproxy-server with its API on a free port of 127.0.0.1 and resolves once that API
   * answers as this server. Rejects with NOT_BUILT (no binary), PROCESS_EXITED or START_TIMEOUT
   * (with its log tail), having stopped the server.
   */
  static async start(
    options: Partial<RegionLinksOptions> & Pick<RegionLinksOptions, 'logFile' | 'configFile'>,
  ): Promise<RegionLinks> {
    const opts: RegionLinksOptions = { ...defaultRegionLinksOptions, ...options };
    await requireToxiproxy(opts.binary);
    const sentinel = `monsoon-${randomBytes(8).toString('hex')}`;
    // Never enabled, so it listens nowhere: it only tells this server from any other.
    await writeFile(
      opts.configFile,
      `${JSON.stringify([{ name: sentinel, listen: '127.0.0.1:0', upstream: '127.0.0.1:9', enabled: false }])}\n`,
    );
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const proc = RoleProcess.spawn({
        name: 'toxiproxy',
        script: opts.binary,
        runner: 'exec',
        args: ['-host', '127.0.0.1', '-port', String(port), '-config', opts.configFile],
        logFile: opts.logFile,
        tailLines: opts.tailLines,
      });
      const links = new RegionLinks(`http://127.0.0.1:${port}`, proc, opts);
      try {
        await links.answering(sentinel);
        return links;
      } catch (e) {
        await proc.terminate(1_000);
        const taken = proc.tail().some((l) => l.includes('address already in use'));
        if (!taken || attempt >= opts.portAttempts) throw e;
      }
    }
  }

  /** Resolves once the API lists `sentinel`; rejects if the process exits or the time is up. */
  private async answering(sentinel: string): Promise<void> {
    const deadline = Date.now() + this.opts.startTimeoutMs;
    let exited: ProcessExit | undefined;
    void this.process.exited.then((exit) => {
      exited = exit;
    });
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      if (exited !== undefined) throw this.process.exitError(exited, 'before its API answered');
      try {
        const res = await fetch(`${this.api}/proxies/${sentinel}`, { signal: AbortSignal.timeout(1_000) });
        await res.arrayBuffer();
        if (res.ok) return;
      } catch {
        // Not listening yet (or someone else's server, which never lists the sentinel).
      }
      if (Date.now() > deadline) {
        const { pid, logFile } = this.process;
        throw new ClusterError(
          ClusterErrorCode.StartTimeout,
          `toxiproxy (pid ${pid}): expected its API to answer at ${this.api} within ${this.opts.startTimeoutMs} ms, found no answer (its log: ${logFile})`,
          { name: 'toxiproxy', pid, logFile, tail: this.process.tail() },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /**
   * A proxy named `name` in front of `upstream`, listening on a port of its own, that adds
   * ⌊rttMs/2⌋ ms to what goes towards `upstream` and the rest to what comes back (and caps each
   * direction at `bandwidthMbps`, when given).
   */
  async link(name: string, upstream: string, rttMs: number, bandwidthMbps?: number): Promise<RegionLink> {
    const proxy = (await this.request('POST', '/proxies', {
      name,
      listen: '127.0.0.1:0',
      upstream,
      enabled: true,
    })) as ToxiproxyProxy;
    const towards = Math.floor(rttMs / 2);
    const toxics: Omit<ToxiproxyToxic, 'toxicity'>[] = [
      {
        name: 'latency-upstream',
        type: 'latency',
        stream: 'upstream',
        attributes: { latency: towards, jitter: 0 },
      },
      {
        name: 'latency-downstream',
        type: 'latency',
        stream: 'downstream',
        attributes: { latency: rttMs - towards, jitter: 0 },
      },
    ];
    if (bandwidthMbps !== undefined) {
      // toxiproxy's rate is in KB/s (1,000 bytes): 1 Mbit/s = 125 KB/s.
      const rate = Math.max(1, Math.round(bandwidthMbps * 125));
      for (const stream of ['upstream', 'downstream'] as const) {
        toxics.push({ name: `bandwidth-${stream}`, type: 'bandwidth', stream, attributes: { rate } });
      }
    }
    for (const toxic of toxics) {
      await this.request('POST', `/proxies/${encodeURIComponent(name)}/toxics`, { ...toxic, toxicity: 1 });
    }
    return {
      name,
      listen: proxy.listen,
      upstream,
      rttMs,
      ...(bandwidthMbps === undefined ? {} : { bandwidthMbps }),
    };
  }

  /** Every proxy the server has, with its toxics (the sentinel included). */
  async proxies(): Promise<ToxiproxyProxy[]> {
    return Object.values((await this.request('GET', '/proxies')) as Record<string, ToxiproxyProxy>);
  }

  /** SIGTERM, SIGKILL after `timeoutMs`; how it ended. */
  terminate(timeoutMs: number): Promise<ProcessExit & { readonly killed: boolean }> {
    return this.process.terminate(timeoutMs);
  }

  private async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const what = `toxiproxy ${method} ${path}`;
    let res: Response;
    try {
      res = await fetch(`${this.api}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
        signal: AbortSignal.timeout(this.opts.requestTimeoutMs),
      });
    } catch (e) {
      throw new ClusterError(
        ClusterErrorCode.RegionLink,
        `${what}: expected an answer from ${this.api}, found ${(e as Error).message}`,
        { method, path, api: this.api },
        e,
      );
    }
    const text = await res.text();
    if (!res.ok) {
      throw new ClusterError(
        ClusterErrorCode.RegionLink,
        `${what}: expected a 2xx answer, found ${res.status} ${text.trim()}`,
        { method, path, status: res.status, body: text },
      );
    }
    return JSON.parse(text) as unknown;
  }
}
