/** Shard checks: indices below the shard count, each shard once, and full root sets. */
import { SHARD_COUNTS } from '../domain/shardRoot.js';
import { badShard, uint32 } from './checks.js';

/** `n`, which must be one of SHARD_COUNTS. */
export function shardCount(n: number, field: string): number {
  if (!SHARD_COUNTS.includes(n)) badShard(field, `a shard count of ${SHARD_COUNTS.join(' or ')}`, String(n));
  return n;
}

/** `shard`, an unsigned 32-bit integer, below `count` when the count is known. */
export function shardIndex(shard: number, count: number | undefined, field: string): number {
  uint32(shard, field);
  if (count !== undefined && shard >= count) badShard(field, `a shard below ${count}`, String(shard));
  return shard;
}

/** Checks that the shards of `items` are valid (see shardIndex) and each listed at most once. */
export function uniqueShards(
  items: readonly { readonly shard: number }[],
  count: number | undefined,
  field: string,
): void {
  const seen = new Set<number>();
  items.forEach((it, i) => {
    const f = `${field}[${i}].shard`;
    shardIndex(it.shard, count, f);
    if (seen.has(it.shard)) badShard(f, 'each shard at most once', `shard ${it.shard} again`);
    seen.add(it.shard);
  });
}

/**
 * Checks that `items` name every shard 0 … count−1 exactly once, and returns the count: the
 * given one, or (when not known) the number of items, which must then be a valid shard count.
 */
export function everyShard(
  items: readonly { readonly shard: number }[],
  count: number | undefined,
  field: string,
): number {
  const n =
    count === undefined ? shardCount(items.length, `${field}.length`) : shardCount(count, 'shardCount');
  if (items.length !== n) badShard(field, `a root for each of ${n} shards`, `${items.length} roots`);
  // n distinct shards, each below n: that is all of them.
  uniqueShards(items, n, field);
  return n;
}
