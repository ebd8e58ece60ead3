/**
 * The resident node cache of a tiered node: verified node encodings by hash (latin1), with
 * their bytes accounted, evicted by CLOCK (second chance): a hit only sets a bit, eviction walks
 * the entries in insertion order, giving each entry whose bit is set another round (moved to
 * the back, bit cleared) and dropping the others. Pinned entries (a request in progress fetched
 * them and has not re-run yet) are never dropped, so a request always makes progress however
 * small the budget.
 */

/**
 * Bytes a cache entry costs besides its encoding: the Map entry, the hash string, the entry
 * object and the encoding's string header (measured: bench/tiered.ts prints it). Encodings are
 * held as latin1 strings, not Uint8Arrays: a small Uint8Array costs about 200 bytes more.
 */
export const CACHE_ENTRY_OVERHEAD = 160;

interface Entry {
  /** The encoding, one char per byte. */
  readonly enc: string;
  ref: boolean;
  /** Whether it was used once already (see get). */
  used: boolean;
}

export class NodeCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pins = new Map<string, number>();
  /** Accounted bytes of what is held (encodings + CACHE_ENTRY_OVERHEAD each). */
  bytes = 0;
  hits = 0;
  evicted = 0;

  get size(): number {
    return this.entries.size;
  }

  has(hash: string): boolean {
    return this.entries.has(hash);
  }

  /**
   * The encoding; from its second use on, marking it recently used. The first use of a fetched
   * node is the read that fetched it faulting it into a tree, which holds it from then on: were
   * that a use, every entry would have its bit set and each eviction would walk (and move to the
   * back) the whole cache before dropping anything (at 1M accounts and a 10% budget the trims
   * took 3.6% of the tiered node's CPU in evictTo alone, besides the Map operations they drive).
   * A node faulted in again after a tree evicted it is a use.
   */
  get(hash: string): Uint8Array | undefined {
    const e = this.entries.get(hash);
    if (e === undefined) return undefined;
    if (e.used) e.ref = true;
    else e.used = true;
    this.hits++;
    return Buffer.from(e.enc, 'latin1');
  }

  /** The encoding, leaving its CLOCK bit alone (a sweep's look is not a use). */
  peek(hash: string): Uint8Array | undefined {
    const e = this.entries.get(hash);
    return e === undefined ? undefined : Buffer.from(e.enc, 'latin1');
  }

  /** Holds `enc` (already checked to hash to `hash`); `hot`: as if just used. */
  set(hash: string, enc: string, hot: boolean): void {
    if (this.entries.has(hash)) return;
    this.entries.set(hash, { enc, ref: hot, used: false });
    this.bytes += enc.length + CACHE_ENTRY_OVERHEAD;
  }

  pin(hash: string): void {
    this.pins.set(hash, (this.pins.get(hash) ?? 0) + 1);
  }

  /** Whether a request in progress holds `hash` (see pin). */
  isPinned(hash: string): boolean {
    return this.pins.has(hash);
  }

  unpin(hash: string): void {
    const n = this.pins.get(hash) ?? 0;
    if (n <= 1) this.pins.delete(hash);
    else this.pins.set(hash, n - 1);
  }

  /** Drops entries (CLOCK order, pinned ones kept) until at most `budget` bytes are held. */
  evictTo(budget: number): void {
    let steps = 2 * this.entries.size; // every entry gets at most its second chance
    // One iterator for the whole walk: a Map keeps deleted slots until it rehashes, so a fresh
    // iterator per step would skip over every entry dropped so far (quadratic). Entries moved to
    // the back are met again by the same iterator: their second chance.
    const it = this.entries.entries();
    while (this.bytes > budget && steps-- > 0) {
      const next = it.next();
      if (next.done) return;
      const [hash, e] = next.value;
      this.entries.delete(hash);
      if (e.ref || this.pins.has(hash)) {
        e.ref = false;
        this.entries.set(hash, e);
      } else {
        this.bytes -= e.enc.length + CACHE_ENTRY_OVERHEAD;
        this.evicted++;
      }
    }
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
