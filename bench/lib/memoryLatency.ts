/**
 * Dependent-load latency of this machine as JavaScript sees it: a random cyclic walk over
 * linked objects in a heap far bigger than the caches. Every trie lookup in a big tree is such
 * a walk (node → child → … → leaf → key, value), so this is the floor under its per-lookup cost.
 */
interface Link {
  next: Link | undefined;
}

/** Nanoseconds per dependent load over `objects` linked objects (best of `reps` walks). */
export function dependentLoadNs(objects = 4_000_000, loads = 2_000_000, reps = 3): number {
  const nodes: Link[] = new Array(objects);
  for (let i = 0; i < objects; i++) nodes[i] = { next: undefined };
  // A random cycle (Sattolo's shuffle), with a fixed seed.
  const order = new Uint32Array(objects);
  for (let i = 0; i < objects; i++) order[i] = i;
  let s = 0x9e3779b9;
  for (let i = objects - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % i;
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  for (let i = 0; i < objects; i++) nodes[order[i]!]!.next = nodes[order[(i + 1) % objects]!];
  let best = Number.POSITIVE_INFINITY;
  let p: Link = nodes[0]!;
  for (let r = 0; r < reps; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < loads; i++) p = p.next!;
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / loads);
  }
  if (p.next === undefined) throw new Error('unreachable: the walk is a cycle');
  return best;
}
