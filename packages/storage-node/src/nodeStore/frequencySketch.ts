/**
 * How often each trie node was wanted lately, approximately, in a fixed few bytes per slot: a
 * count-min sketch (TinyLFU's) over node hashes. Keccak hashes are uniform, so four disjoint
 * 3-byte windows of the hash index four rows directly (no hashing of our own). Counters saturate
 * at 255 and are all halved once `sampleSize` increments were made, so old popularity fades.
 *
 * Why the tiered store needs one: at a budget smaller than the hot set, a node's reuse distance
 * exceeds what the trees can hold, so a recency bit (CLOCK) is clear on every pass for hot and
 * cold nodes alike and the policy degenerates to keeping nothing; the sketch remembers the
 * nodes it evicted, so the hot ones are told from the one-off reads of cold accounts.
 */
export class FrequencySketch {
  private readonly rows: Uint8Array;
  private readonly mask: number;
  private readonly width: number;
  private added = 0;
  /** Increments between two halvings. */
  readonly sampleSize: number;

  /** `width`: counters a row (rounded up to a power of two, at most 2^24). */
  constructor(width: number) {
    let w = 1 << 10;
    while (w < width && w < 1 << 24) w <<= 1;
    this.width = w;
    this.mask = w - 1;
    this.rows = new Uint8Array(4 * w);
    this.sampleSize = 10 * w;
  }

  /** A sketch for a memory budget of `bytes`: four rows of a counter per 512 bytes. */
  static forBudget(bytes: number): FrequencySketch {
    return new FrequencySketch(bytes / 512);
  }

  /** Bytes it holds (what a memory budget counts for it). */
  get bytes(): number {
    return this.rows.length;
  }

  /** One more want of the node with `hash` (32 chars, latin1). */
  add(hash: string): void {
    this.count(index(hash, 0), index(hash, 3), index(hash, 6), index(hash, 9));
  }

  /** add for the 32-byte hash at `at` in `bytes` (a parent's encoding: no string made). */
  addAt(bytes: Uint8Array, at: number): void {
    this.count(indexAt(bytes, at), indexAt(bytes, at + 3), indexAt(bytes, at + 6), indexAt(bytes, at + 9));
  }

  private count(a: number, b: number, c: number, d: number): void {
    const w = this.width;
    const m = this.mask;
    const r = this.rows;
    let i = a & m;
    if (r[i]! < 255) r[i]!++;
    i = w + (b & m);
    if (r[i]! < 255) r[i]!++;
    i = 2 * w + (c & m);
    if (r[i]! < 255) r[i]!++;
    i = 3 * w + (d & m);
    if (r[i]! < 255) r[i]!++;
    if (++this.added >= this.sampleSize) this.halve();
  }

  /** The estimated wants of the node with `hash` (never below the truth since the last halving). */
  estimate(hash: string): number {
    const w = this.width;
    const m = this.mask;
    const r = this.rows;
    return Math.min(
      r[index(hash, 0) & m]!,
      r[w + (index(hash, 3) & m)]!,
      r[2 * w + (index(hash, 6) & m)]!,
      r[3 * w + (index(hash, 9) & m)]!,
    );
  }

  /** estimate for the 32-byte hash at `at` in `bytes` (an entry of the node cache's arena). */
  estimateAt(bytes: Uint8Array, at: number): number {
    const w = this.width;
    const m = this.mask;
    const r = this.rows;
    return Math.min(
      r[indexAt(bytes, at) & m]!,
      r[w + (indexAt(bytes, at + 3) & m)]!,
      r[2 * w + (indexAt(bytes, at + 6) & m)]!,
      r[3 * w + (indexAt(bytes, at + 9) & m)]!,
    );
  }

  private halve(): void {
    const r = this.rows;
    for (let i = 0; i < r.length; i++) r[i] = r[i]! >> 1;
    this.added = 0;
  }
}

/** Three bytes of the hash from `at`, big-endian. */
function index(hash: string, at: number): number {
  return (hash.charCodeAt(at) << 16) | (hash.charCodeAt(at + 1) << 8) | hash.charCodeAt(at + 2);
}

/** index() of a hash held as bytes. */
function indexAt(b: Uint8Array, at: number): number {
  return (b[at]! << 16) | (b[at + 1]! << 8) | b[at + 2]!;
}
