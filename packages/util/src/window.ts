/**
 * The window rule every role keeps its recent blocks by: a depth in blocks, cut where what the
 * newest blocks hold passes a cap, never below a floor. The miner (bytes of transactions and
 * witnesses), a storage node's versions (account updates) and a client's chain view
 * (transactions) each weigh a block their own way and share the rule.
 */

export interface WindowBounds {
  /** Entries kept at most (a depth counted in blocks alone). */
  readonly most: number;
  /** What the kept entries may weigh in all; the entry that passes it goes, with every older one. */
  readonly cap: number;
  /** Entries kept whatever they weigh (fewer only where `most` is smaller). */
  readonly floor: number;
}

/**
 * How many entries, newest first, a window keeps: `most`, or fewer where the newest entries'
 * weights sum past `cap` (the entry that passes it is the first one dropped), never fewer than
 * `floor`. Weights are read newest first and only as far as the answer needs, so a caller can
 * walk parent links lazily; where they end before a bound cuts, the answer is `most` (what is not
 * held weighs nothing, and a chain that ends early is cut by depth alone).
 */
export function windowLength(weights: Iterable<number>, bounds: WindowBounds): number {
  let kept = 0;
  let sum = 0;
  for (const w of weights) {
    if (kept >= bounds.most) return bounds.most;
    sum += w;
    if (sum > bounds.cap && kept >= bounds.floor) return kept;
    kept++;
  }
  return bounds.most;
}
