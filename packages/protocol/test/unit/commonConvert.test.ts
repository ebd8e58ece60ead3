import { describe, expect, it } from '@jest/globals';
import {
  atHash,
  atNumber,
  blockRefFromProto,
  blockRefToProto,
  commonPb,
  HEAD,
  type Head,
  headFromProto,
  headToProto,
  nodeBagFromProto,
  nodeBagToProto,
  ProtocolErrorCode,
  type ShardRoot,
  shardRootFromProto,
  shardRootToProto,
} from '@monsoon/protocol';
import { filled, hash, wire } from '../helpers/bytes.js';
import { expectProtocolError } from '../helpers/errors.js';

describe('BlockRef', () => {
  it.each([
    ['head', HEAD],
    ['hash', atHash(hash(7))],
    ['number', atNumber(0n)],
    ['largest number', atNumber((1n << 64n) - 1n)],
  ])('round-trips %s through the wire', (_name, ref) => {
    const pb = blockRefToProto(ref);
    const back = blockRefFromProto(pb === undefined ? undefined : wire(commonPb.BlockRef, pb));
    expect(back).toStrictEqual(ref);
  });

  it('sends the head as no BlockRef, and reads an empty one as the head', () => {
    expect(blockRefToProto(HEAD)).toBeUndefined();
    expect(blockRefFromProto({ ref: undefined })).toStrictEqual(HEAD);
  });

  it('refuses a hash that is not 32 bytes, both ways', () => {
    expectProtocolError(() => blockRefToProto(atHash(filled(31))), ProtocolErrorCode.BadLength, 'at.hash');
    const e = expectProtocolError(
      () => blockRefFromProto({ ref: { $case: 'hash', value: filled(33) } }),
      ProtocolErrorCode.BadLength,
      'at.hash',
    );
    expect(e.message).toBe('BAD_LENGTH: at.hash: expected 32 bytes, found 33');
  });

  it.each([-1n, 1n << 64n])('refuses the block number %p', (n) => {
    expectProtocolError(() => blockRefToProto(atNumber(n)), ProtocolErrorCode.BadQuantity, 'at.number');
  });
});

describe('Head', () => {
  const head: Head = { hash: hash(1), number: 1234567890123n, headerRlp: filled(500, 9), stateRoot: hash(2) };

  it('round-trips through the wire into plain Uint8Arrays', () => {
    const back = headFromProto(wire(commonPb.Head, headToProto(head)));
    expect(back).toStrictEqual(head);
    expect(back.headerRlp.constructor).toBe(Uint8Array);
  });

  it.each([
    ['hash', { ...head, hash: filled(20) }, ProtocolErrorCode.BadLength],
    ['stateRoot', { ...head, stateRoot: new Uint8Array(0) }, ProtocolErrorCode.BadLength],
    ['headerRlp', { ...head, headerRlp: new Uint8Array(0) }, ProtocolErrorCode.MissingField],
    ['number', { ...head, number: -5n }, ProtocolErrorCode.BadQuantity],
  ])('refuses a bad %s', (field, bad, code) => {
    expectProtocolError(() => headToProto(bad), code, field);
    if (field !== 'number') expectProtocolError(() => headFromProto(bad), code, field);
  });
});

describe('ShardRoot', () => {
  const root: ShardRoot = { shard: 15, root: hash(3) };

  it('round-trips through the wire', () => {
    expect(shardRootFromProto(wire(commonPb.ShardRoot, shardRootToProto(root, 16)), 16)).toStrictEqual(root);
  });

  it('refuses a shard at or above the shard count, and a root that is not 32 bytes', () => {
    const e = expectProtocolError(
      () => shardRootFromProto({ shard: 16, root: hash() }, 16),
      ProtocolErrorCode.BadShard,
      'shard',
    );
    expect(e.message).toBe('BAD_SHARD: shard: expected a shard below 16, found 16');
    expectProtocolError(
      () => shardRootToProto({ shard: 1.5, root: hash() }),
      ProtocolErrorCode.BadQuantity,
      'shard',
    );
    expectProtocolError(
      () => shardRootToProto({ shard: 0, root: filled(31) }),
      ProtocolErrorCode.BadLength,
      'root',
    );
    expectProtocolError(
      () => shardRootToProto({ shard: 0, root: filled(33) }),
      ProtocolErrorCode.BadLength,
      'root',
    );
  });

  it('takes an empty shard (no root) and a tiny shard (an embedded node under 32 bytes)', () => {
    const empty: ShardRoot = { shard: 3, root: new Uint8Array(0) };
    expect(shardRootFromProto(wire(commonPb.ShardRoot, shardRootToProto(empty, 16)), 16)).toStrictEqual(
      empty,
    );
    const embedded: ShardRoot = { shard: 4, root: Uint8Array.of(0xc4, 0x82, 0x20, 0x01, 0x05) };
    expect(shardRootFromProto(wire(commonPb.ShardRoot, shardRootToProto(embedded, 16)), 16)).toStrictEqual(
      embedded,
    );
  });
});

describe('NodeBag', () => {
  it('round-trips, and an absent bag is empty', () => {
    const nodes = [filled(80, 1), filled(532, 2), filled(1, 3)];
    expect(nodeBagFromProto(wire(commonPb.NodeBag, nodeBagToProto(nodes)))).toStrictEqual(nodes);
    expect(nodeBagFromProto(undefined)).toStrictEqual([]);
  });

  it('refuses an empty node', () => {
    expectProtocolError(
      () => nodeBagFromProto({ nodes: [filled(3), new Uint8Array(0)] }),
      ProtocolErrorCode.MissingField,
      'bag.nodes[1]',
    );
  });
});
