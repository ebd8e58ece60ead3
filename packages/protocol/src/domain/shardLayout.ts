/**
 * How the state trie is cut into shards (DESIGN §2): shard i of 16 is the subtree under nibble
 * i of the root branch, i.e. keccak256(address)[0] >> 4; with 256 shards, the subtree under the
 * first two nibbles, keccak256(address)[0]. An account's storage trie lives with its account.
 */
import { ProtocolError, ProtocolErrorCode } from '../protocolError.js';

export type ShardCount = 16 | 256;

export class ShardLayout {
  /** Nibbles of the path from the root to a shard's subtree. */
  readonly depth: 1 | 2;

  constructor(readonly count: ShardCount) {
    if (count !== 16 && count !== 256) {
      throw new ProtocolError(ProtocolErrorCode.BadShard, `shard count must be 16 or 256, got ${count}`, {
        field: 'shard count',
        expected: '16 or 256',
        found: String(count),
      });
    }
    this.depth = count === 16 ? 1 : 2;
  }

  /** The shard of a trie key (keccak256 of an address). */
  shardOfKey(key: Uint8Array): number {
    return this.count === 16 ? key[0]! >> 4 : key[0]!;
  }

  /** The nibble path of a shard's subtree. */
  path(shard: number): number[] {
    return this.count === 16 ? [shard] : [shard >> 4, shard & 15];
  }

  /** All shard numbers. */
  all(): number[] {
    return Array.from({ length: this.count }, (_, i) => i);
  }

  /**
   * Parses a shard selection: "all", "3", "0-3", "0-3,8,10-11" (inclusive ranges). Throws a
   * BadShard ProtocolError naming the bad part.
   */
  parse(spec: string): number[] {
    if (spec.trim() === 'all') return this.all();
    const out = new Set<number>();
    for (const part of spec.split(',')) {
      const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
      const lo = m ? Number(m[1]) : Number.NaN;
      const hi = m?.[2] === undefined ? lo : Number(m[2]);
      if (!m || lo > hi || hi >= this.count) {
        throw new ProtocolError(
          ProtocolErrorCode.BadShard,
          `shard selection "${spec}": "${part}" is not a shard or range within 0-${this.count - 1}`,
          { field: 'shard selection', expected: `a shard or range within 0-${this.count - 1}`, found: part },
        );
      }
      for (let s = lo; s <= hi; s++) out.add(s);
    }
    return [...out].sort((a, b) => a - b);
  }
}
