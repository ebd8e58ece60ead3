/**
 * The addon's verified walk (src/regionWalk.cc) behind the account walk's steps
 * (accountWalkSteps): many keys a trie level at a time — index buckets, then node bytes, each
 * node kept only if its keccak-256 is the hash its parent named, RLP decoded natively — in one
 * call per step instead of one JS keccak and decode per node. The walk is the same C++ code
 * whether its bytes come from a mapping (`MappedWalkSource`: shared memory, on the JS thread)
 * or from RDMA READs into registered memory (`RemoteWalkSource`: off the JS thread); only the
 * source of byte ranges differs. src/proofWalk.ts stays the reference the two are tested against.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import {
  loadNative,
  type NativeWalkArgs,
  type NativeWalkResult,
  nativeBinding,
  type RdmaBinding,
} from './loadNative.js';
import {
  type AccountWalkOptions,
  accountWalkSteps,
  type TrieWalk,
  type TrieWalkQuery,
  type WalkAnswer,
  type WalkQuery,
  type WalkStep,
  type WalkStepAnswer,
  walkMany,
} from './proofWalk.js';
import { fromAddonError } from './rdmaError.js';
import type { RegionGeometry } from './regionLayout.js';
import type { ReadCounters, RegionReader } from './regionReader.js';

/** A step's answer plus every distinct verified node (and blob) the source read for it. */
export interface SourceAnswer extends WalkStepAnswer {
  readonly nodes: readonly Uint8Array[];
  /** nodes[i]'s keccak-256 at [32i, 32i + 32), when the source has them (the native walk checked each). */
  readonly hashes?: Uint8Array;
}

/** Runs an account walk's steps against verified bytes: a mapping, RDMA, or the JS reference. */
export interface WalkSource {
  /** What this source has read so far (each step adds to it). */
  readonly counters: ReadCounters;
  step(s: WalkStep): SourceAnswer | Promise<SourceAnswer>;
}

/** An account walk's answers, and every node read for them (the nodes of all their proofs, and code). */
export interface AccountsWalk {
  readonly answers: (WalkAnswer | undefined)[];
  readonly nodes: Uint8Array[];
  /** nodes[i]'s keccak-256 at [32i, 32i + 32), when every step's source gave them. */
  readonly hashes?: Uint8Array;
}

/**
 * Accounts at `stateRoot` (walkAccounts' answers) through `source`: two steps, accounts then
 * their slots and code. With `opts.proofs` false the answers carry no proof lists; `nodes` is
 * every node either way.
 */
export async function walkAccountsFrom(
  source: WalkSource,
  stateRoot: Uint8Array,
  queries: readonly WalkQuery[],
  keccak: Keccak = defaultKeccak,
  opts: AccountWalkOptions = {},
): Promise<AccountsWalk> {
  const steps = accountWalkSteps(stateRoot, queries, keccak, opts);
  const parts: (readonly Uint8Array[])[] = [];
  const hashes: Uint8Array[] = [];
  let hashed = true;
  let next = steps.next();
  while (!next.done) {
    const a = await source.step(next.value);
    parts.push(a.nodes);
    if (a.hashes === undefined) hashed = false;
    else hashes.push(a.hashes);
    next = steps.next(a);
  }
  const nodes = parts.flat();
  if (!hashed) return { answers: next.value, nodes };
  return { answers: next.value, nodes, hashes: hashes.length === 1 ? hashes[0]! : Buffer.concat(hashes) };
}

/**
 * The JS reference as a source: walkMany over a RegionReader (one batched read and one keccak
 * call per level). What the native sources are held to, and what runs where the addon can't.
 */
export class ReaderWalkSource implements WalkSource {
  constructor(readonly reader: RegionReader) {}

  get counters(): ReadCounters {
    return this.reader.counters;
  }

  step(s: WalkStep): SourceAnswer {
    const nodes: Uint8Array[] = [];
    const fetch = (hs: readonly Uint8Array[]) => {
      const got = this.reader.nodes(hs);
      for (const n of got) if (n !== undefined) nodes.push(n);
      return got;
    };
    const walks = s.walks.length > 0 ? walkMany(fetch, s.walks) : [];
    const fetched = s.fetch.length > 0 ? fetch(s.fetch) : [];
    return { walks, fetched, nodes };
  }
}

const NONE = 0xffffffff;

/** What a native walk shares between its two sources: packing a step, unpacking its answer. */
abstract class NativeWalkSource implements WalkSource {
  readonly counters: ReadCounters = { nodes: 0, retries: 0, misses: 0, rejected: 0 };
  /** Batches of reads posted (a lookup round is two: index buckets, then node bytes). */
  rounds = 0;
  protected readonly geometryArg: Float64Array;
  protected readonly binding: RdmaBinding = nativeBinding();

  protected constructor(
    readonly geometry: RegionGeometry,
    readonly maxTries: number,
  ) {
    this.geometryArg = Float64Array.of(
      geometry.bucketCount,
      geometry.indexOffset,
      geometry.arenaOffset,
      geometry.totalBytes,
    );
  }

  abstract step(s: WalkStep): SourceAnswer | Promise<SourceAnswer>;

  /** A step as the addon takes it (distinct roots once). */
  protected pack(s: WalkStep): NativeWalkArgs {
    const n = s.walks.length;
    const keys = new Uint8Array(32 * n);
    const rootOf = new Uint32Array(n);
    const rootIndex = new Map<string, number>();
    const roots: Uint8Array[] = [];
    let lastRoot: Uint8Array | undefined;
    let last = 0;
    s.walks.forEach((w: TrieWalkQuery, i) => {
      keys.set(w.key, 32 * i);
      // Account walks share one root object: skip the lookup while it repeats.
      if (w.root !== lastRoot) {
        const k = Buffer.from(w.root.buffer, w.root.byteOffset, 32).toString('latin1');
        let r = rootIndex.get(k);
        if (r === undefined) {
          r = roots.length;
          rootIndex.set(k, r);
          roots.push(w.root);
        }
        lastRoot = w.root;
        last = r;
      }
      rootOf[i] = last;
    });
    const rootBytes = new Uint8Array(32 * roots.length);
    for (let i = 0; i < roots.length; i++) rootBytes.set(roots[i]!, 32 * i);
    const fetch = new Uint8Array(32 * s.fetch.length);
    for (let i = 0; i < s.fetch.length; i++) fetch.set(s.fetch[i]!, 32 * i);
    return [this.geometryArg, rootBytes, keys, rootOf, fetch, this.maxTries];
  }

  /** The addon's answer as walkTrie's: views into its one buffer (the walk's own copy, never changed). */
  protected unpack(r: NativeWalkResult, proofs = true): SourceAnswer {
    const c = r.counters;
    this.counters.nodes += c.nodes;
    this.counters.retries += c.retries;
    this.counters.misses += c.misses;
    this.counters.rejected += c.rejected;
    this.rounds += c.rounds;
    const { data, bounds, values, proof, proofBounds } = r;
    const nodes: Uint8Array[] = new Array(bounds.length - 1);
    for (let i = 0; i < nodes.length; i++) nodes[i] = data.subarray(bounds[i]!, bounds[i + 1]!);
    const walks: (TrieWalk | undefined)[] = [];
    for (let i = 0; i < r.ok.length; i++) {
      if (r.ok[i] === 0) {
        walks.push(undefined);
        continue;
      }
      const v = values[3 * i]!;
      const p: Uint8Array[] = [];
      if (proofs) for (let j = proofBounds[i]!; j < proofBounds[i + 1]!; j++) p.push(nodes[proof[j]!]!);
      walks.push({
        value: v === NONE ? undefined : nodes[v]!.subarray(values[3 * i + 1]!, values[3 * i + 2]!),
        proof: p,
      });
    }
    const fetched = Array.from(r.fetched, (j) => (j === NONE ? undefined : nodes[j]));
    return { walks, fetched, nodes, hashes: r.hashes };
  }
}

/**
 * The addon's walk over a region in this process's memory: a shared mapping's bytes
 * (SharedRegion.bytes) or a buffer holding a region. Runs on the JS thread (it only reads memory).
 */
export class MappedWalkSource extends NativeWalkSource {
  /** node()'s landing buffer (a node is copied out of it). */
  private out = new Uint8Array(4096);

  constructor(
    readonly bytes: Uint8Array,
    geometry: RegionGeometry,
    maxTries = 3,
  ) {
    super(geometry, maxTries);
  }

  /** Whether the addon (and so this source) is available here. */
  static available(): boolean {
    return loadNative().binding !== undefined;
  }

  /** One node by hash, verified and copied out (a walk's unit of work); undefined when it can't be had. */
  node(hash: Uint8Array): Uint8Array | undefined {
    let n: number;
    try {
      n = this.binding.readNode(this.bytes, this.geometryArg, hash, this.maxTries, this.out);
      if (n < -1) {
        this.out = new Uint8Array(-n - 2);
        n = this.binding.readNode(this.bytes, this.geometryArg, hash, this.maxTries, this.out);
      }
    } catch (e) {
      throw fromAddonError(e);
    }
    return n < 0 ? undefined : this.out.slice(0, n);
  }

  step(s: WalkStep): SourceAnswer {
    try {
      return this.unpack(this.binding.walkRegion(this.bytes, ...this.pack(s)), s.proofs);
    } catch (e) {
      throw fromAddonError(e);
    }
  }
}

/** Where an RDMA walk reads: a connected queue pair, registered staging memory, and the peer's region. */
export interface RemoteRegion {
  readonly qp: number;
  /** A mapping registered with the queue pair's device: READs land there first. */
  readonly staging: number;
  readonly addr: bigint;
  readonly rkey: number;
}

/** The addon's walk over RDMA READs, run whole off the JS thread; one walk per queue pair at a time. */
export class RemoteWalkSource extends NativeWalkSource {
  /** The step in flight: the addon takes one walk per queue pair at a time, so steps queue here. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    readonly remote: RemoteRegion,
    geometry: RegionGeometry,
    maxTries = 3,
  ) {
    super(geometry, maxTries);
  }

  step(s: WalkStep): Promise<SourceAnswer> {
    const { qp, staging, addr, rkey } = this.remote;
    const run = async () => {
      try {
        return this.unpack(await this.binding.walkRemote(qp, staging, addr, rkey, ...this.pack(s)), s.proofs);
      } catch (e) {
        throw fromAddonError(e);
      }
    };
    const next = this.tail.then(run, run);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
