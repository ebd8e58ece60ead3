/**
 * Role processes for e2e tests: a built CLI (`packages/<role>/dist/cli/main.js`) spawned with real
 * flags, its JSON log lines parsed as they arrive, ready when it prints `listening`. Every process
 * started here is remembered so `killAll()` (in an afterAll) can SIGKILL what is left, by PID.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** A role whose CLI the tests start. */
export type Role = 'storage-node' | 'leveldb' | 'miner' | 'client' | 'workload' | 'cli';

/** The built CLI of `role` (`packages/<role>/dist/cli/main.js`; the LevelDB role is storage-node's). */
export function roleCli(role: Role): string {
  const main = role === 'leveldb' ? 'storage-node/dist/cli/leveldbMain.js' : `${role}/dist/cli/main.js`;
  return fileURLToPath(new URL(`../../${main}`, import.meta.url));
}

/** Throws unless `role`'s CLI is built (the e2e tests run the built JavaScript). */
export function requireBuiltCli(role: Role): void {
  const cli = roleCli(role);
  if (!existsSync(cli))
    throw new Error(`expected ${cli} to exist, found nothing: run \`npm run build\` first`);
}

/** One JSON log line (`{"level":30,"msg":"listening",…}`), or `{msg: '(not JSON)', text}`. */
export type LogLine = Record<string, unknown> & { msg?: string };

/** How a process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Waiter {
  match: (l: LogLine) => boolean;
  resolve: (l: LogLine) => void;
  reject: (e: Error) => void;
}

const running = new Set<RoleProcess>();

/** A spawned process whose stdout is JSON lines: its lines so far, its stderr, waiting for a line. */
export class RoleProcess {
  readonly lines: LogLine[] = [];
  stderr = '';
  /** Resolves when the process has exited. */
  readonly exited: Promise<ExitInfo>;
  private readonly waiters = new Set<Waiter>();
  private exitInfo: ExitInfo | undefined;

  constructor(
    readonly child: ChildProcess,
    /** Names the process in errors: `miner`, `storage-node`. */
    readonly name = 'process',
  ) {
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
          w.reject(new Error(`${this.name} exited (code ${code}, signal ${signal}): ${this.stderr}`));
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
      return Promise.reject(new Error(`${this.name} already exited: ${this.stderr}`));
    }
    return new Promise((resolve, reject) => this.waiters.add({ match, resolve, reject }));
  }

  /** The n-th (1-based) log line with this message, waiting for it if need be. */
  waitForNth(msg: string, n: number): Promise<LogLine> {
    let count = 0;
    return this.waitFor((l) => l.msg === msg && ++count === n);
  }

  /** Sends a signal by PID (nothing once it has exited). */
  signal(sig: NodeJS.Signals): void {
    if (this.exitInfo === undefined) process.kill(this.pid, sig);
  }

  /** Sends `sig` (SIGTERM by default) and waits for the exit. */
  async stop(sig: NodeJS.Signals = 'SIGTERM'): Promise<ExitInfo> {
    this.signal(sig);
    return this.exited;
  }
}

/** A started process that printed `listening`, and the address it printed. */
export interface Listening {
  proc: RoleProcess;
  /** The `address` field of the `listening` line. */
  address: string;
  line: LogLine;
}

/** Spawns `role`'s built CLI with `args`; no waiting. */
export function spawnRole(role: Role, args: readonly string[]): RoleProcess {
  return new RoleProcess(
    spawn(process.execPath, [roleCli(role), ...args], { stdio: ['ignore', 'pipe', 'pipe'] }),
    role,
  );
}

/** Spawns `role`'s built CLI and waits for its `listening` line. */
export async function startRole(role: Role, args: readonly string[]): Promise<Listening> {
  const proc = spawnRole(role, args);
  const line = await proc.waitFor((l) => l.msg === 'listening');
  return { proc, address: String(line.address), line };
}

/** Runs `role`'s CLI to its exit (for refused starts): its exit code, stderr and log lines. */
export async function runRoleToExit(
  role: Role,
  args: readonly string[],
): Promise<{ code: number | null; stderr: string; lines: LogLine[] }> {
  const proc = spawnRole(role, args);
  const { code } = await proc.exited;
  return { code, stderr: proc.stderr, lines: proc.lines };
}

/** SIGKILLs every process started here that is still running, and waits for them. */
export async function killAll(): Promise<void> {
  const procs = [...running];
  for (const p of procs) p.signal('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
}

/** True while a process with this PID exists (signal 0 checks without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGKILLs whatever of `pids` is still alive: the safety net of an afterAll, by PID. */
export function killLeftovers(pids: Iterable<number>): void {
  for (const pid of pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
}
