/**
 * Where a process's memory is, sampled from inside it: loaded with `node --import` into every
 * role of a soak (`bench soak --probe`), it appends a JSON line every `MONSOON_MEM_PROBE_SECONDS`
 * (default 10) to `$MONSOON_MEM_PROBE_DIR/<pid>.jsonl`: process.memoryUsage(), V8's heap spaces
 * (committed, used and resident, per space), V8's own malloc'd memory, the resident memory by
 * kind from /proc (anonymous, file-backed; brk heap, big anonymous mappings), and the collections
 * since the last line (count and milliseconds, by kind). A rising RSS over a flat live heap is
 * told apart with it: which V8 space commits more, or what outside V8 grows (array buffers,
 * malloc arenas, code).
 *
 * Does nothing without MONSOON_MEM_PROBE_DIR, so a role started with it by accident is unchanged.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/** One line of a probe's file. Sizes in MiB unless named kB. */
export interface ProbeLine {
  /** Date.now() at the sample. */
  readonly at: number;
  /** Seconds since the probe started. */
  readonly t: number;
  readonly argv: string;
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
  /** Memory V8 itself malloc'd (not its heap pages). */
  readonly mallocedV8: number;
  /** V8's heap pages resident (every space). */
  readonly physicalV8: number;
  /** Per V8 space: committed (`size`), in use (`used`), resident (`physical`). */
  readonly spaces: Readonly<Record<string, { size: number; used: number; physical: number }>>;
  /** /proc/self/status fields, kB. */
  readonly status: Readonly<Record<string, number>>;
  /** Resident anonymous memory, kB: see anonymous(). */
  readonly anonKb: { brk: number; big: number; small: number; count: number };
  /** Collections since the line before, by kind. */
  readonly gc: Readonly<Record<string, { count: number; ms: number }>>;
}

const dir = process.env.MONSOON_MEM_PROBE_DIR;
const seconds = Number(process.env.MONSOON_MEM_PROBE_SECONDS ?? '10');

/** The kB fields of /proc/self/status named. */
function status(names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync('/proc/self/status', 'utf8').split('\n')) {
    const [k, v] = line.split(':');
    if (k !== undefined && v !== undefined && names.includes(k)) out[k] = Number.parseInt(v, 10);
  }
  return out;
}

/**
 * Resident kB of the anonymous mappings by size: the brk heap (malloc's main arena), mappings
 * of 64 MiB and up (malloc's thread arenas are 64 MiB reservations; V8 reserves big regions too),
 * and the rest (V8's 256 KiB pages, thread stacks, mmapped malloc chunks).
 */
function anonymous(): { brk: number; big: number; small: number; count: number } {
  const out = { brk: 0, big: 0, small: 0, count: 0 };
  let size = 0;
  let kind: 'brk' | 'anon' | 'file' = 'file';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head !== null) {
      size = (Number.parseInt(head[2]!, 16) - Number.parseInt(head[1]!, 16)) / 1024;
      const path = head[4] ?? '';
      kind = path === '[heap]' ? 'brk' : path === '' || path.startsWith('[anon') ? 'anon' : 'file';
      if (kind !== 'file') out.count++;
      continue;
    }
    if (!line.startsWith('Rss:') || kind === 'file') continue;
    const rss = Number.parseInt(line.slice(4), 10);
    if (kind === 'brk') out.brk += rss;
    else if (size >= 64 * 1024) out.big += rss;
    else out.small += rss;
  }
  return out;
}

if (dir !== undefined && dir !== '') {
  const file = join(dir, `${process.pid}.jsonl`);
  const gc: Record<string, { count: number; ms: number }> = {};
  // perf_hooks' NODE_PERFORMANCE_GC_* kinds.
  const kinds: Record<number, string> = { 1: 'minor', 4: 'major', 8: 'incremental', 16: 'weak' };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const detail = (e as unknown as { detail?: { kind?: number } }).detail;
      const kind = kinds[detail?.kind ?? 0] ?? 'other';
      const k = gc[kind] ?? { count: 0, ms: 0 };
      k.count++;
      k.ms += e.duration;
      gc[kind] = k;
    }
  }).observe({ entryTypes: ['gc'] });
  const started = Date.now();
  const mb = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const h = v8.getHeapStatistics();
    const spaces: Record<string, { size: number; used: number; physical: number }> = {};
    for (const s of v8.getHeapSpaceStatistics()) {
      spaces[s.space_name] = {
        size: mb(s.space_size),
        used: mb(s.space_used_size),
        physical: mb(s.physical_space_size),
      };
    }
    const line: ProbeLine = {
      at: Date.now(),
      t: Math.round((Date.now() - started) / 1000),
      argv: process.argv.slice(1, 4).join(' '),
      rss: mb(m.rss),
      heapTotal: mb(m.heapTotal),
      heapUsed: mb(m.heapUsed),
      external: mb(m.external),
      arrayBuffers: mb(m.arrayBuffers),
      mallocedV8: mb(h.malloced_memory),
      physicalV8: mb(h.total_physical_size),
      spaces,
      status: status(['RssAnon', 'RssFile', 'RssShmem', 'VmData']),
      anonKb: anonymous(),
      gc: { ...gc },
    };
    for (const k of Object.keys(gc)) delete gc[k];
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }, seconds * 1000);
  timer.unref();
}
