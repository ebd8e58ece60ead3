/**
 * A genesis state larger than memory, built without ever holding its whole trie: the accounts
 * are bucketed by the first `k` nibbles of their trie keys, each bucket's subtree is built on its
 * own (with its storage tries), its nodes are handed to a store as soon as it is complete, and
 * only its reference is kept; the levels above the buckets are then built from those references.
 * The result is the state ShardState.fromGenesis builds, with hash stubs at depth `k` (the tiered
 * backend faults them in from the store). Peak memory: one bucket's subtree, one batch of nodes
 * on the way to the store, the bucket index (4 bytes an account) and the top levels.
 *
 * Why buckets rather than a sorted stack-trie: the trie is canonical, so a bucket's subtree is
 * the same whatever order its keys go in, and no sort of the whole key set is needed (a counting
 * pass does). `k` is the deepest level (at most 4, at least the shard layout's) at which every
 * prefix holds an account: every node above is then a full branch, so a bucket's subtree at
 * depth `k` is exactly what the whole trie has there, and the top levels are grafts.
 */
import { DsmTree, StateTree } from '@monsoon/dsm-tree';
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { type GenesisAccount, insertGenesisAccount, type ShardLayout } from '@monsoon/protocol';
import { binOf, placeNodes } from './nodeStore/pathRecords.js';
import type { FreshNode } from './nodeStore/versionObserver.js';
import { ShardState } from './shardState.js';

/**
 * A genesis' accounts by index: an array, or anything that makes account `i` on demand (a
 * generator of a state too large to hold as objects).
 */
export interface GenesisAccounts {
  readonly length: number;
  at(i: number): GenesisAccount | undefined;
}

/**
 * An account-trie node with its place in the trie: its first `depth` nibbles of `path` (packed
 * two a byte, as a trie key). What a path record is keyed by (nodeStore/pathRecords.ts).
 */
export interface PlacedNode extends FreshNode {
  readonly depth: number;
  readonly path: Uint8Array;
}

/** Where a streamed genesis sends its nodes: a content-addressed store (idempotent puts). */
export interface GenesisSink {
  /**
   * `nodes` in one batch; `placed`: the account-trie nodes among them, each with its place (a
   * bucket's subtree whole, never split between two calls), for a sink that keeps path records
   * to write them in the same batch instead of reading every node back later.
   */
  writeNodes(nodes: readonly FreshNode[], placed: readonly PlacedNode[]): Promise<void>;
}

export interface StreamGenesisOptions {
  hash?: Keccak;
  /** Nodes handed to the sink at a time. */
  batch?: number;
  /** Deepest bucket level tried (nibbles). */
  maxDepth?: number;
}

/** A 32-byte stand-in for the subtrees beside a bucket (it only shapes the skeleton). */
const PLACEHOLDER = new Uint8Array(32).fill(0xee);

/**
 * The genesis state of `owned` shards, streamed into `sink` (see above); undefined when the
 * genesis is too small to bucket (fewer accounts than prefixes at the shard layout's depth),
 * where building it in memory is what a caller should do anyway.
 */
export async function streamGenesis(
  alloc: GenesisAccounts,
  layout: ShardLayout,
  owned: readonly number[],
  sink: GenesisSink,
  opts: StreamGenesisOptions = {},
): Promise<ShardState | undefined> {
  const keccak = opts.hash ?? defaultKeccak;
  const batchSize = opts.batch ?? 20_000;
  const maxDepth = Math.min(opts.maxDepth ?? 4, 4);
  // The first 4 nibbles of every account's key (hashed once, kept as 2 bytes).
  const prefix16 = new Uint16Array(alloc.length);
  for (let i = 0; i < alloc.length; i++) {
    const h = keccak.keccak256(alloc.at(i)!.address);
    prefix16[i] = (h[0]! << 8) | h[1]!;
  }
  let k = 0;
  for (let depth = maxDepth; depth >= layout.depth; depth--) {
    const seen = new Uint8Array(16 ** depth);
    let filled = 0;
    for (let i = 0; i < prefix16.length; i++) {
      const b = prefix16[i]! >> (4 * (4 - depth));
      if (seen[b] === 0) {
        seen[b] = 1;
        filled++;
      }
    }
    if (filled === seen.length) {
      k = depth;
      break;
    }
  }
  if (k === 0) return undefined;
  // Counting sort of the account indexes by bucket.
  const buckets = 16 ** k;
  const start = new Uint32Array(buckets + 1);
  for (let i = 0; i < prefix16.length; i++) start[(prefix16[i]! >> (4 * (4 - k))) + 1]!++;
  for (let b = 0; b < buckets; b++) start[b + 1]! += start[b]!;
  const order = new Uint32Array(alloc.length);
  const fill = start.slice(0, buckets);
  for (let i = 0; i < prefix16.length; i++) order[fill[prefix16[i]! >> (4 * (4 - k))]!++] = i;

  const ownedSet = new Set(owned);
  const all = new DsmTree({ hash: keccak });
  const mine = new DsmTree({ hash: keccak });
  const code: Uint8Array[] = [];
  let pending: FreshNode[] = [];
  let placed: PlacedNode[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const nodes = pending;
    const places = placed;
    pending = [];
    placed = [];
    await sink.writeNodes(nodes, places);
  };
  const visit = (hash: string, enc: string): void => {
    pending.push({ hash, enc });
  };
  // A bucket's account-trie nodes by hash, placed by a walk down from the bucket's top (the
  // walk `TieredStore.adding` makes over a block's new nodes).
  const bucketNodes = new Map<string, string>();
  const visitAccount = (hash: string, enc: string): void => {
    pending.push({ hash, enc });
    bucketNodes.set(hash, enc);
  };
  const scratch = new Uint8Array(32);
  for (let b = 0; b < buckets; b++) {
    const path = nibblesOf(b, k);
    const shard = layout.depth === 1 ? path[0]! : path[0]! * 16 + path[1]!;
    const isMine = ownedSet.has(shard);
    // The bucket's accounts over a skeleton: one placeholder beside the path at every level, so
    // each branch above the bucket has two entries and the subtree takes its real shape.
    const skeleton = new DsmTree({ hash: keccak });
    for (let j = 0; j < k; j++) skeleton.graft([...path.slice(0, j), (path[j]! + 1) & 15], PLACEHOLDER);
    const temp = new StateTree({ hash: keccak }, skeleton);
    for (let i = start[b]!; i < start[b + 1]!; i++) insertGenesisAccount(temp, alloc.at(order[i]!)!);
    temp.rootBin();
    const ref = temp.accounts.refAt(path);
    all.graft(path, ref);
    if (!isMine) continue;
    mine.graft(path, ref);
    temp.accounts.forEachNodeAt(path, visitAccount);
    if (ref !== undefined && ref.length === 32) {
      scratch.fill(0);
      for (let j = 0; j < k; j++) scratch[j >> 1]! |= j & 1 ? path[j]! : path[j]! << 4;
      placeNodes(bucketNodes, binOf(ref), k, scratch, (hash, enc, depth) =>
        placed.push({ hash, enc, depth, path: scratch.slice(0, (depth + 1) >> 1) }),
      );
    }
    bucketNodes.clear();
    const parts = temp.exportParts();
    for (const [, t] of parts.storage) t.forEachNode(visit);
    for (const c of parts.code) code.push(c);
    if (pending.length >= batchSize) await flush();
  }
  await flush();
  // Foreign shards are their roots only, as in ShardState.fromGenesis.
  for (const s of layout.all()) if (!ownedSet.has(s)) mine.graft(layout.path(s), all.refAt(layout.path(s)));
  const state = new StateTree({ hash: keccak }, mine);
  for (const c of code) state.putCode(c);
  state.rootBin();
  return ShardState.restore(layout, owned, state);
}

/** The `k` nibbles of bucket number `b`, most significant first. */
function nibblesOf(b: number, k: number): number[] {
  const out: number[] = new Array(k);
  for (let j = k - 1; j >= 0; j--) {
    out[j] = b & 15;
    b >>= 4;
  }
  return out;
}
