import type { Bin } from './bytes.js';
import { HashNode } from './hashNode.js';
import type { TrieNode, UseMark } from './trieNode.js';
import { BRANCH, UNUSED } from './trieNode.js';

/** `mask` bit for the branch's value (bits 0–15 are the children). */
export const VALUE_BIT = 1 << 16;
/** Every slot and the value: what a branch without an encoding must write from scratch. */
export const ALL_SLOTS = (1 << 17) - 1;

/**
 * A branch: 16 children, one per nibble, and the value of a key that ends here.
 *
 * The children are 16 fields of the node itself rather than an array: an array is two more
 * heap objects (JSArray + backing store), i.e. two more dependent loads — cache misses, in a
 * million-account tree — on every level of every lookup.
 *
 * `enc` is the branch's RLP encoding as of the last commit, with its children's hashes in it:
 * that is where a child's hash lives (children carry none), so re-hashing a branch never loads
 * the children that did not change, and a proof is a copy. `mask` marks the slots changed since
 * `enc` was made; a branch is clean when `mask` is 0 and `enc` is set.
 *
 * A `lazy` branch holds no objects for the children it knows only by hash: an unchanged slot
 * whose field is empty but whose encoding names a hash is a stub, made when asked for. A branch
 * decoded from its encoding starts lazy, and evicting a child makes its parent lazy: a stub
 * object per child (a HashNode and its 32-char string, ~80 bytes) would cost a faulted-in
 * branch more than its own fields and encoding.
 */
export class BranchNode {
  declare readonly kind: typeof BRANCH;
  c0: TrieNode | undefined = undefined;
  c1: TrieNode | undefined = undefined;
  c2: TrieNode | undefined = undefined;
  c3: TrieNode | undefined = undefined;
  c4: TrieNode | undefined = undefined;
  c5: TrieNode | undefined = undefined;
  c6: TrieNode | undefined = undefined;
  c7: TrieNode | undefined = undefined;
  c8: TrieNode | undefined = undefined;
  c9: TrieNode | undefined = undefined;
  c10: TrieNode | undefined = undefined;
  c11: TrieNode | undefined = undefined;
  c12: TrieNode | undefined = undefined;
  c13: TrieNode | undefined = undefined;
  c14: TrieNode | undefined = undefined;
  c15: TrieNode | undefined = undefined;
  enc: Bin | undefined = undefined;
  /** Read since the last eviction pass (a CLOCK bit; see DsmTree.evictCold). Not content. */
  used: UseMark = UNUSED;
  /** Empty unchanged slots whose encoding names a hash are stubs (see above). */
  lazy = false;

  constructor(
    public value: Bin | undefined,
    public gen: number,
    /** Slots changed since `enc` (VALUE_BIT for the value); ALL_SLOTS for a new branch. */
    public mask: number,
  ) {}

  /** Child at nibble i (0–15); a stub of a lazy slot is made anew on each call. */
  child(i: number): TrieNode | undefined {
    const c = this.loaded(i);
    if (c !== undefined || !this.lazy || (this.mask & (1 << i)) !== 0) return c;
    const hash = encSlotHash(this.enc!, i);
    return hash === undefined ? undefined : new HashNode(hash);
  }

  /**
   * The child at nibble i as held: a node or an explicit stub, undefined for an empty slot and
   * for a lazy one (no stub is made: for walks over what is in memory).
   */
  loaded(i: number): TrieNode | undefined {
    switch (i) {
      case 0:
        return this.c0;
      case 1:
        return this.c1;
      case 2:
        return this.c2;
      case 3:
        return this.c3;
      case 4:
        return this.c4;
      case 5:
        return this.c5;
      case 6:
        return this.c6;
      case 7:
        return this.c7;
      case 8:
        return this.c8;
      case 9:
        return this.c9;
      case 10:
        return this.c10;
      case 11:
        return this.c11;
      case 12:
        return this.c12;
      case 13:
        return this.c13;
      case 14:
        return this.c14;
      case 15:
        return this.c15;
      default:
        throw new RangeError(`nibble ${i} out of range`);
    }
  }

  /**
   * Sets the child at nibble i without marking the slot changed: only for a node with the same
   * hash (a stub and the node it stands for) or while building a node from its encoding.
   */
  setChild(i: number, c: TrieNode | undefined): void {
    switch (i) {
      case 0:
        this.c0 = c;
        return;
      case 1:
        this.c1 = c;
        return;
      case 2:
        this.c2 = c;
        return;
      case 3:
        this.c3 = c;
        return;
      case 4:
        this.c4 = c;
        return;
      case 5:
        this.c5 = c;
        return;
      case 6:
        this.c6 = c;
        return;
      case 7:
        this.c7 = c;
        return;
      case 8:
        this.c8 = c;
        return;
      case 9:
        this.c9 = c;
        return;
      case 10:
        this.c10 = c;
        return;
      case 11:
        this.c11 = c;
        return;
      case 12:
        this.c12 = c;
        return;
      case 13:
        this.c13 = c;
        return;
      case 14:
        this.c14 = c;
        return;
      case 15:
        this.c15 = c;
        return;
      default:
        throw new RangeError(`nibble ${i} out of range`);
    }
  }

  /**
   * Turns the child at nibble i back into a stub known by the encoding's hash (the branch becomes
   * lazy). Only for a clean branch (mask 0, `enc` set) whose encoding names slot i by hash.
   */
  evictChild(i: number): void {
    this.lazy = true;
    this.setChild(i, undefined);
  }

  /** Sets the child at nibble i and marks the slot changed. Only for a node the caller owns. */
  replaceChild(i: number, c: TrieNode | undefined): void {
    this.setChild(i, c);
    this.mask |= 1 << i;
  }

  /** A copy owned by `gen`: same children, value, encoding and changed slots. */
  copy(gen: number): BranchNode {
    const b = new BranchNode(this.value, gen, this.mask);
    b.enc = this.enc;
    b.lazy = this.lazy;
    b.c0 = this.c0;
    b.c1 = this.c1;
    b.c2 = this.c2;
    b.c3 = this.c3;
    b.c4 = this.c4;
    b.c5 = this.c5;
    b.c6 = this.c6;
    b.c7 = this.c7;
    b.c8 = this.c8;
    b.c9 = this.c9;
    b.c10 = this.c10;
    b.c11 = this.c11;
    b.c12 = this.c12;
    b.c13 = this.c13;
    b.c14 = this.c14;
    b.c15 = this.c15;
    return b;
  }

  /** A new, empty branch owned by generation `gen`. */
  static empty(gen: number): BranchNode {
    return new BranchNode(undefined, gen, ALL_SLOTS);
  }

  /** True when the branch must be re-encoded. */
  get dirty(): boolean {
    return this.mask !== 0 || this.enc === undefined;
  }
}
(BranchNode.prototype as { kind: number }).kind = BRANCH;

/** RLP item length at `pos` of `enc` (header included): the forms a branch's slots take. */
function itemLength(enc: Bin, pos: number): number {
  const b = enc.charCodeAt(pos);
  if (b < 0x80) return 1;
  if (b <= 0xb7) return 1 + b - 0x80;
  if (b >= 0xc0 && b <= 0xf7) return 1 + b - 0xc0;
  // Long forms: a big-endian length of (b - 0xb7) or (b - 0xf7) bytes follows.
  const n = b < 0xc0 ? b - 0xb7 : b - 0xf7;
  let len = 0;
  for (let k = 1; k <= n; k++) len = len * 256 + enc.charCodeAt(pos + k);
  return 1 + n + len;
}

/** The 32-byte hash a branch encoding names in slot i, or undefined (empty or embedded). */
function encSlotHash(enc: Bin, i: number): Bin | undefined {
  const h = enc.charCodeAt(0);
  let pos = h > 0xf7 ? 1 + h - 0xf7 : 1;
  for (let j = 0; j < i; j++) pos += itemLength(enc, pos);
  return enc.charCodeAt(pos) === 0xa0 ? enc.slice(pos + 1, pos + 33) : undefined;
}
