/**
 * How a storage node runs its synchronous reads (and a block's apply) over trees whose cold
 * nodes are somewhere slower than memory: run, and when the run reached nodes that are not
 * resident, fetch them and run again. The tiered backend (tieredStore.ts) is one.
 */
export interface NodeFaults {
  /**
   * `read`'s result (or its error) once every node it reaches is resident. `probes`: independent
   * parts of the read (one per key of a batch); when the read misses, they are run too so that
   * every key's miss at this trie level is fetched in the same round trip.
   */
  run<T>(read: () => T, probes?: () => readonly (() => unknown)[]): Promise<T>;
}
