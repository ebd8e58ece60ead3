/**
 * Matching logs against a LogFilter, as geth's `filterLogs` and `bloomFilter` do: addresses are
 * an OR, topic positions an AND of ORs, an empty position a wildcard, and a log with fewer
 * topics than the filter has positions never matches. The bloom test answers "may this block
 * hold a match?" from the block's logs bloom alone, so most blocks are skipped unread.
 */
import { bytesEqual } from '@monsoon/dsm-tree';
import { BLOOM_BYTES, type Log } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import type { LogFilter } from './chainEvents.js';

/** Whether `log` matches `filter` (geth's filterLogs, without the block range). */
export function logMatches(filter: LogFilter, log: Log): boolean {
  if (filter.addresses.length > 0 && !filter.addresses.some((a) => bytesEqual(a, log.address))) return false;
  if (filter.topics.length > log.topics.length) return false;
  return filter.topics.every(
    (wanted, i) => wanted.length === 0 || wanted.some((t) => bytesEqual(t, log.topics[i]!)),
  );
}

/** The three bloom bits of one item: [byte index, mask] each. */
type BloomBits = readonly (readonly [number, number])[];

function bloomBits(item: Uint8Array): BloomBits {
  const h = keccak.keccak256(item);
  const bits: [number, number][] = [];
  for (let j = 0; j < 6; j += 2) {
    const bit = ((h[j]! << 8) | h[j + 1]!) & 2047;
    bits.push([BLOOM_BYTES - 1 - (bit >> 3), 1 << (bit & 7)]);
  }
  return bits;
}

function hasBits(bloom: Uint8Array, bits: BloomBits): boolean {
  return bits.every(([byte, mask]) => (bloom[byte]! & mask) !== 0);
}

/**
 * A filter's bloom test with the bits of its addresses and topics computed once, so testing a
 * block costs a few byte reads.
 */
export class BloomMatcher {
  private readonly addresses: readonly BloomBits[];
  private readonly topics: readonly (readonly BloomBits[])[];

  constructor(filter: LogFilter) {
    this.addresses = filter.addresses.map(bloomBits);
    this.topics = filter.topics.map((position) => position.map(bloomBits));
  }

  /** False when a block with this bloom certainly holds no matching log. */
  mayContain(bloom: Uint8Array): boolean {
    if (this.addresses.length > 0 && !this.addresses.some((b) => hasBits(bloom, b))) return false;
    return this.topics.every((position) => position.length === 0 || position.some((b) => hasBits(bloom, b)));
  }
}
