/** Converters for monsoon.common.v1: BlockRef, Head, ShardRoot, NodeBag. */
import { type BlockRef, HEAD } from '../domain/blockRef.js';
import type { Head } from '../domain/head.js';
import type { ShardRoot } from '../domain/shardRoot.js';
import type * as pb from '../generated/monsoon/common/v1/common.js';
import { ProtocolErrorCode } from '../protocolError.js';
import { fail, fixed, HASH_LENGTH, nonEmpty, nonEmptyList, plain, uint64 } from './checks.js';
import { shardIndex } from './shards.js';

/** `prefix.name`, or `name` at the top of a message. */
export function path(prefix: string, name: string): string {
  return prefix === '' ? name : `${prefix}.${name}`;
}

/** The head is sent as no BlockRef at all. */
export function blockRefToProto(ref: BlockRef, field = 'at'): pb.BlockRef | undefined {
  switch (ref.kind) {
    case 'head':
      return undefined;
    case 'hash':
      return { ref: { $case: 'hash', value: fixed(ref.hash, HASH_LENGTH, `${field}.hash`) } };
    case 'number':
      return { ref: { $case: 'number', value: uint64(ref.number, `${field}.number`) } };
  }
}

/** No BlockRef, or one with neither field set, is the head. */
export function blockRefFromProto(ref: pb.BlockRef | undefined, field = 'at'): BlockRef {
  const r = ref?.ref;
  if (r === undefined) return HEAD;
  if (r.$case === 'hash') return { kind: 'hash', hash: fixed(r.value, HASH_LENGTH, `${field}.hash`) };
  return { kind: 'number', number: uint64(r.value, `${field}.number`) };
}

function head(h: pb.Head | Head, field: string): Head {
  return {
    hash: fixed(h.hash, HASH_LENGTH, path(field, 'hash')),
    number: uint64(h.number, path(field, 'number')),
    headerRlp: nonEmpty(h.headerRlp, path(field, 'headerRlp')),
    stateRoot: fixed(h.stateRoot, HASH_LENGTH, path(field, 'stateRoot')),
  };
}

export function headToProto(h: Head, field = ''): pb.Head {
  return head(h, field);
}

export function headFromProto(h: pb.Head, field = ''): Head {
  return head(h, field);
}

/**
 * A shard root is how the state trie refers to the shard's subtree: a 32-byte hash, an
 * embedded node under 32 bytes (an RLP list, first byte >= 0xc0) for a tiny shard, or nothing
 * for an empty one.
 */
function shardRootBytes(b: Uint8Array, field: string): Uint8Array {
  if (b.length === 0 || b.length === HASH_LENGTH || (b.length < HASH_LENGTH && b[0]! >= 0xc0))
    return plain(b);
  return fail(
    ProtocolErrorCode.BadLength,
    field,
    '32 bytes, an embedded node under 32 bytes, or empty',
    `${b.length} bytes${b.length < HASH_LENGTH ? ' (not an RLP list)' : ''}`,
  );
}

function shardRoot(r: pb.ShardRoot | ShardRoot, shardCount: number | undefined, field: string): ShardRoot {
  return {
    shard: shardIndex(r.shard, shardCount, path(field, 'shard')),
    root: shardRootBytes(r.root, path(field, 'root')),
  };
}

export function shardRootToProto(r: ShardRoot, shardCount?: number, field = ''): pb.ShardRoot {
  return shardRoot(r, shardCount, field);
}

export function shardRootFromProto(r: pb.ShardRoot, shardCount?: number, field = ''): ShardRoot {
  return shardRoot(r, shardCount, field);
}

/** A node bag: RLP nodes, none empty. Duplicates are not refused (receivers key nodes by hash). */
export function nodeBagToProto(nodes: readonly Uint8Array[], field = 'bag'): pb.NodeBag {
  return { nodes: nonEmptyList(nodes, `${field}.nodes`) };
}

/** An absent bag is an empty one. */
export function nodeBagFromProto(bag: pb.NodeBag | undefined, field = 'bag'): Uint8Array[] {
  return bag === undefined ? [] : nonEmptyList(bag.nodes, `${field}.nodes`);
}
