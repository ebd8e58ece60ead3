/**
 * Where the node cache's arena slabs come from: chunks of CHUNK_SLABS slabs, each one Buffer
 * larger than glibc's largest mmap threshold (32 MiB on 64-bit), so malloc always maps a chunk
 * on its own and gives it back whole, and never puts it in its heap. Why: with a Buffer a slab,
 * the slabs (256 KiB, over the threshold only until the first was freed: glibc then raises the
 * threshold past them) sat in the main malloc heap among the small short-lived allocations
 * (LevelDB's values, Node's pools) and pinned the freed space below them: at 1M accounts, 10%,
 * the heap grew by 48-54 MiB for a 25-28 MiB arena (smaps, session 17); with the slabs mapped
 * apart (MALLOC_MMAP_THRESHOLD_ fixed at 128 KiB) the anonymous RSS grew by ~21 MiB less.
 *
 * A chunk's pages become resident as slabs are written (a mapping's pages are untouched until
 * then), so a pool holds about the most slabs it lent at once. A freed slab is lent again
 * first from the lowest chunk, and a chunk whose every slab came back is given back once the
 * others have a quarter of a chunk free (no chunk mapped and unmapped over and over at the
 * edge of one).
 */

/** Bytes of a slab. */
export const SLAB_BYTES = 256 * 1024;
/** Slabs of a chunk: a chunk is 33 MiB, past glibc's DEFAULT_MMAP_THRESHOLD_MAX (32 MiB). */
export const CHUNK_SLABS = 132;

export class SlabPool {
  private readonly chunks: (Buffer | undefined)[] = [];
  /** Free slab numbers of each chunk (a stack: the last freed, already resident, first). */
  private readonly free: number[][] = [];
  private freeCount = 0;

  /** Chunks mapped (each CHUNK_SLABS × SLAB_BYTES bytes, resident as far as written). */
  get chunkCount(): number {
    let n = 0;
    for (const c of this.chunks) if (c !== undefined) n++;
    return n;
  }

  /** A slab (SLAB_BYTES) and its number, for give. */
  take(): { buf: Buffer; slab: number } {
    let c = 0;
    while (c < this.chunks.length && (this.chunks[c] === undefined || this.free[c]!.length === 0)) c++;
    if (c === this.chunks.length) c = this.map();
    const i = this.free[c]!.pop()!;
    this.freeCount--;
    const chunk = this.chunks[c]!;
    return { buf: chunk.subarray(i * SLAB_BYTES, (i + 1) * SLAB_BYTES), slab: c * CHUNK_SLABS + i };
  }

  /** Slab `slab` (take's number) comes back; an empty chunk goes once the others have room (see above). */
  give(slab: number): void {
    const c = Math.floor(slab / CHUNK_SLABS);
    this.free[c]!.push(slab % CHUNK_SLABS);
    this.freeCount++;
    if (this.freeCount - CHUNK_SLABS < CHUNK_SLABS >> 2) return;
    for (let e = this.chunks.length - 1; e >= 0; e--) {
      if (this.chunks[e] === undefined || this.free[e]!.length < CHUNK_SLABS) continue;
      this.chunks[e] = undefined;
      this.free[e] = [];
      this.freeCount -= CHUNK_SLABS;
      return;
    }
  }

  /** Maps a chunk (in the first place free), its slabs lent lowest first. */
  private map(): number {
    let c = this.chunks.indexOf(undefined);
    if (c < 0) c = this.chunks.length;
    this.chunks[c] = Buffer.allocUnsafeSlow(CHUNK_SLABS * SLAB_BYTES);
    const f: number[] = [];
    for (let i = CHUNK_SLABS - 1; i >= 0; i--) f.push(i);
    this.free[c] = f;
    this.freeCount += CHUNK_SLABS;
    return c;
  }
}
