import { readFileSync } from 'node:fs';

/** USER_HZ: /proc/<pid>/stat times are in clock ticks. */
const TICKS = 100;

/** User + system CPU seconds a process has used so far (from /proc; Linux only). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}
