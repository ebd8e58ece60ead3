/**
 * Memory snapshots for "bytes per element" figures: always taken after a forced full GC, so
 * they count what is reachable, not what has not been collected yet. Needs `--expose-gc`
 * (scripts/bench.mjs passes it).
 */
export interface MemorySample {
  /** V8 heap in use: JS objects, strings, arrays. */
  heapUsed: number;
  /** Memory outside the V8 heap owned by JS objects (Buffers, ArrayBuffers, addons). */
  external: number;
  /** The part of `external` that is ArrayBuffers and Buffers. */
  arrayBuffers: number;
}

/** Runs full garbage collections until the heap stops shrinking (at most a few). */
export function forceGc(): void {
  const gc = globalThis.gc;
  if (gc === undefined)
    throw new Error('global.gc is not exposed: run node with --expose-gc (npm run bench does)');
  let last = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 4; i++) {
    gc();
    const used = process.memoryUsage().heapUsed;
    if (used >= last * 0.999) break;
    last = used;
  }
}

/** Collects garbage, then samples. */
export function sampleMemory(): MemorySample {
  forceGc();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
}

/** Growth from `before` to `after`, per element, by component. */
export function memoryPerElement(
  before: MemorySample,
  after: MemorySample,
  count: number,
): MemorySample & { total: number } {
  const heapUsed = (after.heapUsed - before.heapUsed) / count;
  const external = (after.external - before.external) / count;
  const arrayBuffers = (after.arrayBuffers - before.arrayBuffers) / count;
  // `external` already includes `arrayBuffers` (Node docs), so adding both would count Buffers twice.
  return { heapUsed, external, arrayBuffers, total: heapUsed + external };
}
