/**
 * Storage node processes for e2e tests: the built CLI (`dist/cli/main.js`) spawned with real
 * flags, its JSON log lines parsed as they arrive, ready when it prints `listening`. Every
 * process started here is remembered so `killAll()` (in afterAll) can SIGKILL it by PID.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Genesis } from '@monsoon/protocol';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Throws unless the CLI is built (the e2e tests run the built JavaScript). */
export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
}

const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;

/** A Genesis as geth-style genesis.json. */
export function genesisJson(g: Genesis): Record<string, unknown> {
  const alloc: Record<string, unknown> = {};
  for (const a of g.alloc) {
    alloc[hex(a.address)] = {
      balance: `0x${a.balance.toString(16)}`,
      nonce: `0x${a.nonce.toString(16)}`,
      ...(a.code.length > 0 ? { code: hex(a.code) } : {}),
      ...(a.storage.length > 0
        ? { storage: Object.fromEntries(a.storage.map(([k, v]) => [hex(k), hex(v)])) }
        : {}),
    };
  }
  return {
    config: { chainId: Number(g.chainId) },
    difficulty: `0x${g.difficulty.toString(16)}`,
    gasLimit: `0x${g.gasLimit.toString(16)}`,
    timestamp: `0x${g.timestamp.toString(16)}`,
    extraData: hex(g.extraData),
    coinbase: hex(g.coinbase),
    nonce: hex(g.nonce),
    alloc,
  };
}

/** Writes `g` as `<dir>/genesis.json`; returns the path. */
export async function writeGenesis(dir: string, g: Genesis): Promise<string> {
  const file = join(dir, 'genesis.json');
  await writeFile(file, JSON.stringify(genesisJson(g), null, 1));
  return file;
}

export type LogLine = Record<string, unknown> & { msg?: string };

interface Waiter {
  match: (l: LogLine) => boolean;
  resolve: (l: LogLine) => void;
  reject: (e: Error) => void;
}

const running = new Set<StorageProcess>();

export class StorageProcess {
  readonly lines: LogLine[] = [];
  stderr = '';
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters = new Set<Waiter>();
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(readonly child: ChildProcess) {
    running.add(this);
    child.stderr!.on('data', (d: Buffer) => {
      this.stderr += d.toString();
    });
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { msg: '(not JSON)', text };
      }
      this.lines.push(line);
      for (const w of [...this.waiters]) {
        if (w.match(line)) {
          this.waiters.delete(w);
          w.resolve(line);
        }
      }
    });
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        running.delete(this);
        for (const w of this.waiters) {
          w.reject(new Error(`storage process exited (code ${code}, signal ${signal}): ${this.stderr}`));
        }
        this.waiters.clear();
        resolve(this.exitInfo);
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The first log line (already seen or still to come) that `match` accepts. */
  waitFor(match: (l: LogLine) => boolean): Promise<LogLine> {
    const seen = this.lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    if (this.exitInfo !== undefined) {
      return Promise.reject(new Error(`storage process already exited: ${this.stderr}`));
    }
    return new Promise((resolve, reject) => this.waiters.add({ match, resolve, reject }));
  }

  /** The n-th (1-based) log line with this message, waiting for it if need be. */
  waitForNth(msg: string, n: number): Promise<LogLine> {
    let count = 0;
    return this.waitFor((l) => l.msg === msg && ++count === n);
  }

  /** Sends a signal by PID. */
  signal(sig: NodeJS.Signals): void {
    if (this.exitInfo === undefined) process.kill(this.pid, sig);
  }
}

/** A started, listening storage process and its gRPC address. */
export interface Listening {
  proc: StorageProcess;
  address: string;
  line: LogLine;
}

/** Spawns the CLI with `args`; no waiting. */
export function spawnStorage(args: readonly string[]): StorageProcess {
  return new StorageProcess(
    spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env } }),
  );
}

/** Spawns the CLI and waits for its `listening` line. */
export async function startStorage(args: readonly string[]): Promise<Listening> {
  const proc = spawnStorage(args);
  const line = await proc.waitFor((l) => l.msg === 'listening');
  return { proc, address: String(line.address), line };
}

/** Runs the CLI to its exit (for refused starts). */
export async function runStorageToExit(
  args: readonly string[],
): Promise<{ code: number | null; stderr: string; lines: LogLine[] }> {
  const proc = spawnStorage(args);
  const { code } = await proc.exited;
  return { code, stderr: proc.stderr, lines: proc.lines };
}

/** SIGKILLs every process started here that is still running, and waits for them. */
export async function killAll(): Promise<void> {
  const procs = [...running];
  for (const p of procs) p.signal('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
}
