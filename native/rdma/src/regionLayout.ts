/**
 * The byte layout of an exported node region (format 1), shared by the storage node that writes
 * it and every client that reads it (over shared memory or RDMA). It is a wire format: see the
 * package README for the table; change it only with a new FORMAT_VERSION.
 *
 *   [ header: 4 KiB ][ index: bucketCount × 8 entries × 16 B ][ arena: node encodings ]
 *
 * The index is a two-choice bucketized hash table from a node's keccak256 to where its RLP
 * encoding sits in the arena. Nothing in it is trusted: a reader takes an entry whose tag
 * matches, copies the bytes it points at, and keeps them only if their keccak256 is the hash it
 * looked up. So the writer takes no locks, and a torn, reused or forged entry costs a retry,
 * never a wrong answer.
 */
import { RdmaError, RdmaErrorCode } from './rdmaError.js';

/** The first 8 bytes of every region: "MONSRGN1". */
export const MAGIC_BYTES = new Uint8Array([0x4d, 0x4f, 0x4e, 0x53, 0x52, 0x47, 0x4e, 0x31]);
export const FORMAT_VERSION = 1;
/** Bytes of the header; the index starts here. */
export const HEADER_BYTES = 4096;
/** Entries per bucket: 8 × 16 B = two cache lines, read with one RDMA READ. */
export const BUCKET_SLOTS = 8;
export const ENTRY_BYTES = 16;
export const BUCKET_BYTES = BUCKET_SLOTS * ENTRY_BYTES;
/** Arena offsets are stored in units of this many bytes (so a u32 spans 32 GiB). */
export const ARENA_UNIT = 8;

/** Header field offsets (all little-endian). */
export const H = {
  magic: 0, // 8 bytes "MONSRGN1"
  version: 8, // u32 FORMAT_VERSION
  headerBytes: 12, // u32 HEADER_BYTES
  generation: 16, // u64: who wrote it (changes when a node re-creates its region)
  bucketCount: 24, // u32, a power of two
  bucketSlots: 28, // u32 BUCKET_SLOTS
  indexOffset: 32, // u64 = HEADER_BYTES
  arenaOffset: 40, // u64
  arenaBytes: 48, // u64
  epoch: 56, // u64: blocks the writer has placed (advances after a block's nodes are in)
  arenaUsed: 64, // u64: the arena's high-water mark, bytes
  liveNodes: 72, // u64: entries in the index
  reclaimedBytes: 80, // u64: arena bytes given back for reuse so far
} as const;

/** The geometry a header describes. */
export interface RegionGeometry {
  readonly generation: bigint;
  readonly bucketCount: number;
  readonly indexOffset: number;
  readonly arenaOffset: number;
  readonly arenaBytes: number;
  /** Header + index + arena: the bytes the region spans. */
  readonly totalBytes: number;
}

/** The geometry of a region able to hold about `nodes` nodes in `arenaBytes` of encodings. */
export function planRegion(nodes: number, arenaBytes: number, generation: bigint): RegionGeometry {
  if (!Number.isSafeInteger(nodes) || nodes < 1)
    throw new RdmaError(RdmaErrorCode.BadArgument, `region capacity must be at least 1 node, got ${nodes}`);
  if (!Number.isSafeInteger(arenaBytes) || arenaBytes < ARENA_UNIT || arenaBytes > 0xffffffff * ARENA_UNIT)
    throw new RdmaError(RdmaErrorCode.BadArgument, `arena must be 8 B to 32 GiB, got ${arenaBytes} B`);
  // Two choices of 8-entry buckets at ≤ 50% load overflow with negligible probability.
  let bucketCount = 1;
  while (bucketCount * BUCKET_SLOTS < nodes * 2) bucketCount *= 2;
  const indexOffset = HEADER_BYTES;
  const arenaOffset = indexOffset + bucketCount * BUCKET_BYTES;
  const arena = Math.ceil(arenaBytes / ARENA_UNIT) * ARENA_UNIT;
  return {
    generation,
    bucketCount,
    indexOffset,
    arenaOffset,
    arenaBytes: arena,
    totalBytes: arenaOffset + arena,
  };
}

/** Writes a fresh header (the index and arena must be zero, as a new file or buffer is). */
export function writeHeader(bytes: Uint8Array, g: RegionGeometry): void {
  if (bytes.length < g.totalBytes)
    throw new RdmaError(
      RdmaErrorCode.RegionTooSmall,
      `a region of this geometry spans ${g.totalBytes} B, the buffer has ${bytes.length} B`,
    );
  const v = view(bytes);
  bytes.set(MAGIC_BYTES, H.magic);
  v.setUint32(H.version, FORMAT_VERSION, true);
  v.setUint32(H.headerBytes, HEADER_BYTES, true);
  v.setBigUint64(H.generation, g.generation, true);
  v.setUint32(H.bucketCount, g.bucketCount, true);
  v.setUint32(H.bucketSlots, BUCKET_SLOTS, true);
  v.setBigUint64(H.indexOffset, BigInt(g.indexOffset), true);
  v.setBigUint64(H.arenaOffset, BigInt(g.arenaOffset), true);
  v.setBigUint64(H.arenaBytes, BigInt(g.arenaBytes), true);
}

/**
 * The geometry of the region in `bytes` (at least its header); throws BadRegion / RegionTooSmall
 * when it is not one. `regionBytes`: how much of it there is (all of `bytes` when it is here; the
 * size a peer registered when only the header was read over RDMA).
 */
export function readHeader(bytes: Uint8Array, regionBytes: number = bytes.length): RegionGeometry {
  if (bytes.length < HEADER_BYTES)
    throw new RdmaError(
      RdmaErrorCode.RegionTooSmall,
      `a region starts with a ${HEADER_BYTES} B header, this one has ${bytes.length} B`,
    );
  for (let i = 0; i < 8; i++)
    if (bytes[i] !== MAGIC_BYTES[i])
      throw new RdmaError(
        RdmaErrorCode.BadRegion,
        `region magic is not MONSRGN1 (found ${Buffer.from(bytes.subarray(0, 8)).toString('hex')})`,
      );
  const v = view(bytes);
  const version = v.getUint32(H.version, true);
  if (version !== FORMAT_VERSION)
    throw new RdmaError(
      RdmaErrorCode.BadRegion,
      `region format ${version}, this reader knows ${FORMAT_VERSION}`,
    );
  const bucketCount = v.getUint32(H.bucketCount, true);
  const slots = v.getUint32(H.bucketSlots, true);
  const indexOffset = Number(v.getBigUint64(H.indexOffset, true));
  const arenaOffset = Number(v.getBigUint64(H.arenaOffset, true));
  const arenaBytes = Number(v.getBigUint64(H.arenaBytes, true));
  if (
    bucketCount === 0 ||
    (bucketCount & (bucketCount - 1)) !== 0 ||
    slots !== BUCKET_SLOTS ||
    indexOffset !== HEADER_BYTES ||
    arenaOffset !== indexOffset + bucketCount * BUCKET_BYTES
  )
    throw new RdmaError(
      RdmaErrorCode.BadRegion,
      `region geometry is inconsistent: ${bucketCount} buckets of ${slots}, index at ${indexOffset}, arena at ${arenaOffset}`,
    );
  const totalBytes = arenaOffset + arenaBytes;
  if (regionBytes < totalBytes)
    throw new RdmaError(
      RdmaErrorCode.RegionTooSmall,
      `the region's header says it spans ${totalBytes} B, only ${regionBytes} B are mapped`,
    );
  return {
    generation: v.getBigUint64(H.generation, true),
    bucketCount,
    indexOffset,
    arenaOffset,
    arenaBytes,
    totalBytes,
  };
}

export function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The two buckets a hash may sit in (hash bytes 0-3 and 12-15, little-endian, masked). */
export function bucketsOf(hash: Uint8Array, bucketCount: number): [number, number] {
  const mask = bucketCount - 1;
  const a = (hash[0]! | (hash[1]! << 8) | (hash[2]! << 16) | (hash[3]! << 24)) >>> 0;
  const b = (hash[12]! | (hash[13]! << 8) | (hash[14]! << 16) | (hash[15]! << 24)) >>> 0;
  return [a & mask, b & mask];
}

/** An entry's two tag words: hash bytes 4-7 and 8-11, little-endian. */
export function tagsOf(hash: Uint8Array): [number, number] {
  return [
    (hash[4]! | (hash[5]! << 8) | (hash[6]! << 16) | (hash[7]! << 24)) >>> 0,
    (hash[8]! | (hash[9]! << 8) | (hash[10]! << 16) | (hash[11]! << 24)) >>> 0,
  ];
}
