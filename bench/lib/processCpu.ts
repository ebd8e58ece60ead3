import { readFileSync } from 'node:fs';

/** USER_HZ: /proc/<pid>/stat times are in clock ticks. */
const TICKS = 100;

/** User + system CPU seconds a process has used so far (from /proc; Linux only). */
export function cpuSeconds(pid: number): number {
  return statSeconds(`/proc/${pid}/stat`);
}

/**
 * This process's main (JS) thread's user + system CPU seconds so far: process.cpuUsage() less
 * this is what V8's and libuv's other threads (GC, compilers, the pool) spent.
 */
export function mainThreadCpuSeconds(): number {
  return statSeconds(`/proc/self/task/${process.pid}/stat`);
}

function statSeconds(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

/** Resident set of a process, KiB, now (from /proc; Linux only); 0 once it is gone. */
export function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}
