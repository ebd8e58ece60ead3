/**
 * One role process of a cluster: a Node script spawned with its flags, its stdout and stderr
 * written line by line to its own log file (the last lines also kept in memory, to report a
 * failure with), ready when it prints the JSON log line `{"msg":"listening",…}`, signalled by PID.
 *
 * The process gets a process group of its own (`detached`), so a Ctrl-C on the terminal reaches
 * only the cluster, which then stops the roles in order (clients, miners, storage) instead of
 * every process shutting down at once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { PARENT_PIPE_ENV } from '@monsoon/edge';
import { ClusterError, ClusterErrorCode } from './clusterError.js';

/** How a process ended: its exit code, or the signal that ended it. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** What {@link RoleProcess.spawn} needs. */
export interface RoleProcessOptions {
  /** `<role>-<i>`, e.g. `storage-0`: names the process in messages. */
  readonly name: string;
  /** The script run with this Node (`process.execPath`). */
  readonly script: string;
  /** `exec`: `script` is an executable of its own (a helper such as toxiproxy-server), run without Node. */
  readonly runner?: 'node' | 'exec';
  readonly args: readonly string[];
  /** Flags for Node itself, before `script` (V8's, e.g. `--max-semi-space-size=32`); not for `exec`. */
  readonly nodeArgs?: readonly string[];
  /** Variables added to this process's environment (it inherits the rest of the cluster's). */
  readonly env?: Readonly<Record<string, string>>;
  /** Where stdout and stderr go (truncated first). */
  readonly logFile: string;
  /** Lines kept for {@link RoleProcess.tail}. */
  readonly tailLines: number;
}

/** A parsed JSON log line. */
export type LogLine = Readonly<Record<string, unknown>>;

/** One spawned role process; see the file comment. */
export class RoleProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves once the process has exited and its log file is complete. */
  readonly exited: Promise<ProcessExit>;
  private readonly log: WriteStream;
  private readonly tailLines: number;
  private readonly lastLines: string[] = [];
  private exitInfo: ProcessExit | undefined;
  private listeningLine: LogLine | undefined;
  private readonly listeners = new Set<(line: LogLine) => void>();

  private constructor(child: ChildProcess, pid: number, opts: RoleProcessOptions) {
    this.pid = pid;
    this.name = opts.name;
    this.logFile = opts.logFile;
    this.tailLines = opts.tailLines;
    this.log = createWriteStream(opts.logFile, { flags: 'w' });
    // A failing log write (disk full) must not take the cluster down; the tail still has the lines.
    this.log.on('error', () => undefined);
    createInterface({ input: child.stdout!, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
      this.record(line);
      if (this.listeningLine === undefined && line.includes('"listening"')) this.checkListening(line);
    });
    createInterface({ input: child.stderr!, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) =>
      this.record(line),
    );
    child.on('error', (e) => this.record(`(cluster) process error: ${e.message}`));
    // 'close', not 'exit': by then stdout and stderr are drained, so the tail is complete.
    this.exited = new Promise<ProcessExit>((resolve) => {
      child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
        this.exitInfo = { code, signal };
        this.log.end();
        finished(this.log).then(
          () => resolve({ code, signal }),
          () => resolve({ code, signal }),
        );
      });
    });
  }

  /** Spawns `node <script> <args…>`; throws if the process can't be created at all. */
  static spawn(opts: RoleProcessOptions): RoleProcess {
    const [file, argv] =
      opts.runner === 'exec'
        ? [opts.script, opts.args]
        : [process.execPath, [...(opts.nodeArgs ?? []), opts.script, ...opts.args]];
    // A Node role gets a pipe as stdin that nothing writes to: the kernel closes it when this
    // process dies, even by SIGKILL, and the role stops then (PARENT_PIPE_ENV, in runRole).
    const node = opts.runner !== 'exec';
    const child = spawn(file, argv, {
      stdio: [node ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, ...opts.env, ...(node ? { [PARENT_PIPE_ENV]: 'stdin' } : {}) },
    });
    if (child.pid === undefined) {
      child.on('error', () => undefined);
      throw new ClusterError(ClusterErrorCode.ProcessExited, `${opts.name}: could not spawn ${opts.script}`, {
        name: opts.name,
        script: opts.script,
      });
    }
    return new RoleProcess(child, child.pid, opts);
  }

  /** How it exited, once it has. */
  get exit(): ProcessExit | undefined {
    return this.exitInfo;
  }

  /** True until the process has exited. */
  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** The last lines of its output (stdout and stderr, in arrival order). */
  tail(): string[] {
    return [...this.lastLines];
  }

  /**
   * The process's `listening` log line, once it prints it. Rejects with
   * {@link ClusterErrorCode.ProcessExited} if it exits first, with
   * {@link ClusterErrorCode.StartTimeout} after `timeoutMs`; both carry the log tail.
   */
  async waitListening(timeoutMs: number): Promise<LogLine> {
    if (this.listeningLine !== undefined) return this.listeningLine;
    let timer: NodeJS.Timeout | undefined;
    let listener: ((line: LogLine) => void) | undefined;
    try {
      return await Promise.race([
        new Promise<LogLine>((resolve) => {
          listener = resolve;
          this.listeners.add(resolve);
        }),
        this.exited.then((exit) => {
          throw this.exitError(exit, 'before it was listening');
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                this.errorWithTail(
                  ClusterErrorCode.StartTimeout,
                  `printed no "listening" line within ${timeoutMs} ms`,
                  { timeoutMs },
                ),
              ),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
      if (listener !== undefined) this.listeners.delete(listener);
    }
  }

  /** Sends `signal` to the process by PID, unless it has exited. */
  signal(signal: NodeJS.Signals): void {
    if (this.exitInfo !== undefined) return;
    try {
      process.kill(this.pid, signal);
    } catch (e) {
      // ESRCH: it exited between the check and the kill; 'close' is on its way.
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
  }

  /**
   * Sends SIGTERM and waits up to `timeoutMs` for the exit, then SIGKILLs it. Resolves with the
   * exit and whether it had to be killed.
   */
  async terminate(timeoutMs: number): Promise<ProcessExit & { readonly killed: boolean }> {
    if (this.exitInfo !== undefined) return { ...this.exitInfo, killed: false };
    this.signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      this.exited.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) this.signal('SIGKILL');
    return { ...(await this.exited), killed: timedOut };
  }

  /** A {@link ClusterErrorCode.ProcessExited} error for `exit`, with the log tail. */
  exitError(exit: ProcessExit, when: string): ClusterError {
    const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    return this.errorWithTail(ClusterErrorCode.ProcessExited, `${how} ${when}`, {
      code: exit.code,
      signal: exit.signal,
    });
  }

  private errorWithTail(code: ClusterErrorCode, what: string, meta: Record<string, unknown>): ClusterError {
    const tail = this.tail();
    const shown =
      tail.length === 0
        ? `its log ${this.logFile} is empty`
        : `last ${tail.length} lines of ${this.logFile}:\n${tail.map((l) => `  | ${l}`).join('\n')}`;
    return new ClusterError(code, `${this.name} (pid ${this.pid}) ${what}; ${shown}`, {
      ...meta,
      name: this.name,
      pid: this.pid,
      logFile: this.logFile,
      tail,
    });
  }

  private record(line: string): void {
    this.log.write(`${line}\n`);
    this.lastLines.push(line);
    if (this.lastLines.length > this.tailLines) this.lastLines.shift();
  }

  private checkListening(text: string): void {
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof line !== 'object' || line === null || (line as LogLine).msg !== 'listening') return;
    this.listeningLine = line as LogLine;
    for (const resolve of this.listeners) resolve(this.listeningLine);
    this.listeners.clear();
  }
}
