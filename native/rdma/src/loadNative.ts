import { createRequire } from 'node:module';
import { RdmaError, RdmaErrorCode } from './rdmaError.js';

/** What `verbsInfo()` reports. */
export interface VerbsInfo {
  /** Whether the addon was compiled with the verbs headers. */
  readonly built: boolean;
  /** RDMA devices ibv_get_device_list lists (empty when not built or none present). */
  readonly devices: readonly string[];
  /** Why verbs can't be used here, when they can't. */
  readonly reason?: string;
}

/**
 * A native walk's answer (src/regionWalk.h WalkResult): every distinct verified node back to back
 * in `data` (node i is data[bounds[i], bounds[i + 1])); per key `ok` (0: a node could not be had),
 * its value as [node, start, end) in `values` (node 0xffffffff: absent) and its proof's node
 * indexes proof[proofBounds[i], proofBounds[i + 1]); per fetched hash its node or 0xffffffff.
 */
export interface NativeWalkResult {
  data: Buffer;
  bounds: Uint32Array;
  /** Node i's keccak-256 (what it was looked up by and checked against): hashes[32i, 32i + 32). */
  hashes: Uint8Array;
  ok: Uint8Array;
  values: Uint32Array;
  proof: Uint32Array;
  proofBounds: Uint32Array;
  fetched: Uint32Array;
  counters: { nodes: number; retries: number; misses: number; rejected: number; rounds: number };
}

/**
 * What every native walk takes after its source: the geometry [bucketCount, indexOffset,
 * arenaOffset, totalBytes], the distinct roots (32 B each), the keys (32 B each, hashed), each
 * key's root index, hashes to fetch without walking (32 B each), and lookups per node before a miss.
 */
export type NativeWalkArgs = [
  geometry: Float64Array,
  roots: Uint8Array,
  keys: Uint8Array,
  rootOf: Uint32Array,
  fetch: Uint8Array,
  maxTries: number,
];

/** The exports of the C++ addon (src/rdma.cc). Errors carry a `code` (an RdmaErrorCode value). */
export interface RdmaBinding {
  /** Maps `bytes` of a file (0: all of it), read-only unless `writable`; off the JS thread. */
  mapFile(path: string, writable: boolean, bytes: number): Promise<{ handle: number; buffer: ArrayBuffer }>;
  /** Unmaps a mapping: its ArrayBuffer is detached first, so no view can touch freed memory. */
  unmap(handle: number): void;
  /** Live mappings. */
  mappings(): number;
  /** glibc's malloc_trim(0) off the JS thread: whether free pages of a malloc arena went back to the kernel (false without glibc). */
  mallocTrim(): Promise<boolean>;
  verbsInfo(): VerbsInfo;
  /** Opens a device and a protection domain; throws NO_VERBS / NO_DEVICE. */
  openDevice(name: string): Promise<number>;
  /** Registers a mapping with a device for remote reads; returns the keys a peer needs. */
  registerRegion(
    device: number,
    mapping: number,
  ): { rkey: number; lkey: number; addr: bigint; bytes: number };
  closeDevice(device: number): void;
  /** An RC queue pair in INIT on port 1 of `device`; what the peer needs to connect to it. */
  createQueuePair(device: number): { handle: number; qpn: number; lid: number; gid: Uint8Array; psn: number };
  /** INIT → RTR → RTS towards the peer's queue pair (its numbers exchanged out of band, e.g. gRPC). */
  connectQueuePair(
    qp: number,
    peer: { qpn: number; lid: number; gid: Uint8Array; psn: number },
    localPsn: number,
  ): void;
  /**
   * One chain of RDMA READs (one doorbell), completions polled off the JS thread: `ops` holds
   * triples [remoteOffset, length, localOffset] from `remoteAddr` (with `rkey`) into the
   * registered local `mapping`. Resolves with the number of READs; rejects RDMA_CLOSED when the
   * connection fails.
   */
  readBatch(
    qp: number,
    mapping: number,
    remoteAddr: bigint,
    rkey: number,
    ops: Float64Array,
  ): Promise<number>;
  closeQueuePair(qp: number): void;
  /**
   * A verified walk (src/regionWalk.cc) of the region in `region` (a mapping's bytes): `keys`
   * (32 B each) from `roots[rootOf[i]]`, and `fetch` (32 B hashes) read by hash; `geometry` is
   * [bucketCount, indexOffset, arenaOffset, totalBytes] from the header. On the JS thread.
   */
  walkRegion(region: Uint8Array, ...walk: NativeWalkArgs): NativeWalkResult;
  /**
   * One node by hash from a region in memory, verified and copied into `out`: its length, -1 when
   * it can't be had, -(length + 2) when `out` is too short for it.
   */
  readNode(
    region: Uint8Array,
    geometry: Float64Array,
    hash: Uint8Array,
    maxTries: number,
    out: Uint8Array,
  ): number;
  /** The same walk over RDMA READs from the peer's region into registered `staging`, off the JS thread. */
  walkRemote(
    qp: number,
    staging: number,
    remoteAddr: bigint,
    rkey: number,
    ...walk: NativeWalkArgs
  ): Promise<NativeWalkResult>;
}

/** The addon as node-gyp builds it; src/ and dist/ are both one level below the package root. */
export const NATIVE_ADDON_PATH = '../build/Release/rdma.node';

/** The loaded addon, or why it could not be loaded. */
export type NativeLoad =
  | { binding: RdmaBinding; error?: undefined }
  | { binding?: undefined; error: unknown };

let loaded: NativeLoad | undefined;

/** Loads the addon once, without throwing. */
export function loadNative(): NativeLoad {
  if (loaded !== undefined) return loaded;
  try {
    loaded = { binding: createRequire(import.meta.url)(NATIVE_ADDON_PATH) as RdmaBinding };
  } catch (error) {
    loaded = { error };
  }
  return loaded;
}

/** The addon, or a NotBuilt error naming why it is missing (shared memory and verbs both need it). */
export function nativeBinding(): RdmaBinding {
  const l = loadNative();
  if (l.binding === undefined)
    throw new RdmaError(
      RdmaErrorCode.NotBuilt,
      `the rdma addon is not built (run npm run build:native): ${(l.error as Error)?.message ?? l.error}`,
    );
  return l.binding;
}
