/** Which implementation a {@link Keccak} is: the C++ addon or `@noble/hashes`. */
export type KeccakBackend = 'native' | 'js';

/**
 * Ethereum's Keccak-256 (original Keccak padding, not SHA3-256), in the shapes the trie
 * needs: one input, many inputs in one call, many inputs packed in one buffer, and a
 * whole Merkle tree's dirty nodes hashed bottom-up in one call.
 *
 * Both backends implement exactly the same semantics, including which arguments are
 * rejected and with which error (TypeError for a wrong type, RangeError for a bad
 * length, offset or patch position). Arguments are validated completely before
 * anything is read or written, so a rejected call has no side effects.
 */
export interface Keccak {
  /** Which implementation this is. */
  readonly backend: KeccakBackend;

  /** The 32-byte Keccak-256 digest of `data`. */
  keccak256(data: Uint8Array): Uint8Array;

  /**
   * The digests of `inputs`, packed: digest i is bytes `[32 * i, 32 * i + 32)`.
   * One call for the whole batch, which is what makes the native backend fast on short inputs.
   */
  keccak256Batch(inputs: readonly Uint8Array[]): Uint8Array;

  /**
   * Hashes `count` inputs laid out back to back in `data`: input i is
   * `data[offsets[i], offsets[i + 1])`, so `offsets` needs `count + 1` non-decreasing
   * entries, the last at most `data.length`. Digest i goes to `out[32 * i, 32 * i + 32)`;
   * `out` is allocated when omitted, must hold `count * 32` bytes and must not overlap
   * `data`. Returns `out`.
   */
  keccak256Packed(data: Uint8Array, offsets: Uint32Array, count: number, out?: Uint8Array): Uint8Array;

  /**
   * Like {@link Keccak.keccak256Packed}, but inputs are hashed strictly in index order
   * and, right after input i is hashed, if `patch[i] >= 0` its digest is also written
   * into `data` at byte `patch[i]`. A parent node whose encoding has a 32-byte hole for
   * a child's hash therefore hashes with that hole filled in, so a whole tree's dirty
   * nodes, ordered children before parents, are hashed in one call.
   *
   * Each patch must lie entirely inside a single input with an index greater than i.
   * `patch` needs `count` entries; negative entries mean "no patch". Mutates `data`.
   */
  keccak256Tree(
    data: Uint8Array,
    offsets: Uint32Array,
    patch: Int32Array,
    count: number,
    out?: Uint8Array,
  ): Uint8Array;

  /**
   * {@link Keccak.keccak256Batch} off the JS thread: the native backend copies the
   * inputs during the call (so they may be reused at once) and hashes on the libuv
   * pool. The JS backend hashes synchronously. Bad arguments reject the promise.
   */
  keccak256BatchAsync(inputs: readonly Uint8Array[]): Promise<Uint8Array>;
}
