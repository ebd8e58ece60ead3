import { describe, expect, it } from '@jest/globals';
import {
  type AccountChange,
  type ApplyBlockRequest,
  applyBlockRequestFromProto,
  applyBlockRequestToProto,
  applyBlockResponseFromProto,
  applyBlockResponseToProto,
  ProtocolErrorCode,
  type ShardRoot,
  storagePb,
} from '@monsoon/protocol';
import { address, filled, hash, wire } from '../helpers/bytes.js';
import { expectProtocolError } from '../helpers/errors.js';

const roots = (n: number): ShardRoot[] =>
  Array.from({ length: n }, (_, shard) => ({ shard, root: hash(shard) }));

const created: AccountChange = {
  deleted: false,
  address: address(1),
  nonce: 1n,
  balance: (1n << 255n) + 12345n,
  code: filled(300),
  clearStorage: true,
  storage: [
    { slot: hash(1), value: Uint8Array.of(1, 0) },
    { slot: hash(2), value: new Uint8Array(0) },
  ],
};

const request: ApplyBlockRequest = {
  headerRlp: filled(540),
  shards: [
    {
      shard: 2,
      accounts: [
        created,
        {
          deleted: false,
          address: address(2),
          nonce: (1n << 64n) - 1n,
          balance: 0n,
          code: undefined,
          clearStorage: false,
          storage: [],
        },
      ],
    },
    { shard: 15, accounts: [{ deleted: true, address: address(3) }] },
  ],
  expectedRoots: roots(16).reverse(),
};

/** The request on the wire, with `edit` applied to the first account of the first shard. */
function withAccount(edit: (a: storagePb.AccountUpdate) => void): storagePb.ApplyBlockRequest {
  const pb = applyBlockRequestToProto(request);
  edit(pb.shards[0]!.accounts[0]!);
  return pb;
}

describe('ApplyBlock request', () => {
  it('round-trips through the wire: deletions, creations, big balances, storage writes', () => {
    const pb = wire(storagePb.ApplyBlockRequest, applyBlockRequestToProto(request, { shardCount: 16 }));
    expect(applyBlockRequestFromProto(pb, { shardCount: 16 })).toStrictEqual(request);
    expect(applyBlockRequestFromProto(pb)).toStrictEqual(request);
  });

  it('sends balances big-endian and minimal, empty for zero', () => {
    const pb = applyBlockRequestToProto(request);
    expect(Buffer.from(pb.shards[0]!.accounts[0]!.balance).toString('hex')).toBe(
      created.balance.toString(16),
    );
    expect(pb.shards[0]!.accounts[1]!.balance).toHaveLength(0);
  });

  it('reads storage values with leading zeros as the same value without them', () => {
    const pb = withAccount((a) => {
      a.storage[0]!.value = Uint8Array.of(0, 0, 1, 0);
    });
    const back = applyBlockRequestFromProto(pb).shards[0]!.accounts[0]!;
    expect(back.deleted ? undefined : back.storage[0]!.value).toStrictEqual(Uint8Array.of(1, 0));
  });

  it.each<[string, (a: storagePb.AccountUpdate) => void, ProtocolErrorCode, string]>([
    [
      'a 19-byte address',
      (a) => (a.address = filled(19)),
      ProtocolErrorCode.BadLength,
      'shards[0].accounts[0].address',
    ],
    [
      'a 31-byte slot',
      (a) => (a.storage[1]!.slot = filled(31)),
      ProtocolErrorCode.BadLength,
      'shards[0].accounts[0].storage[1].slot',
    ],
    [
      'a 33-byte storage value',
      (a) => (a.storage[0]!.value = filled(33)),
      ProtocolErrorCode.BadQuantity,
      'shards[0].accounts[0].storage[0].value',
    ],
    [
      'a 33-byte balance',
      (a) => (a.balance = filled(33)),
      ProtocolErrorCode.BadQuantity,
      'shards[0].accounts[0].balance',
    ],
    [
      'a balance with a leading zero byte',
      (a) => (a.balance = Uint8Array.of(0, 5)),
      ProtocolErrorCode.BadQuantity,
      'shards[0].accounts[0].balance',
    ],
    [
      'a slot written twice',
      (a) => (a.storage[1]!.slot = a.storage[0]!.slot),
      ProtocolErrorCode.Inconsistent,
      'shards[0].accounts[0].storage[1].slot',
    ],
    [
      'a deleted account with storage writes',
      (a) => (a.deleted = true),
      ProtocolErrorCode.Inconsistent,
      'shards[0].accounts[0]',
    ],
  ])('refuses %s', (_name, edit, code, field) => {
    expectProtocolError(() => applyBlockRequestFromProto(withAccount(edit)), code, field);
  });

  it('says which fields a deleted account should not have', () => {
    const e = expectProtocolError(
      () => applyBlockRequestFromProto(withAccount((a) => (a.deleted = true))),
      ProtocolErrorCode.Inconsistent,
      'shards[0].accounts[0]',
    );
    expect(e.meta.found).toBe('nonce 1, a balance, code, clearStorage, 2 storage writes');
  });

  it('refuses an account updated twice in one block, even across shards', () => {
    const pb = applyBlockRequestToProto(request);
    pb.shards[1]!.accounts[0]!.address = address(1);
    expectProtocolError(
      () => applyBlockRequestFromProto(pb),
      ProtocolErrorCode.Inconsistent,
      'shards[1].accounts[0].address',
    );
  });

  it('refuses an empty header', () => {
    expectProtocolError(
      () => applyBlockRequestToProto({ ...request, headerRlp: new Uint8Array(0) }),
      ProtocolErrorCode.MissingField,
      'headerRlp',
    );
  });

  it('refuses a domain balance of 2^256 or below zero, and a nonce of 2^64', () => {
    const edit = (u: Partial<AccountChange>): ApplyBlockRequest => ({
      ...request,
      shards: [{ shard: 2, accounts: [{ ...created, ...u }] }],
    });
    const f = 'shards[0].accounts[0]';
    expectProtocolError(
      () => applyBlockRequestToProto(edit({ balance: 1n << 256n })),
      ProtocolErrorCode.BadQuantity,
      `${f}.balance`,
    );
    expectProtocolError(
      () => applyBlockRequestToProto(edit({ balance: -1n })),
      ProtocolErrorCode.BadQuantity,
      `${f}.balance`,
    );
    expectProtocolError(
      () => applyBlockRequestToProto(edit({ nonce: 1n << 64n })),
      ProtocolErrorCode.BadQuantity,
      `${f}.nonce`,
    );
  });

  describe('shards', () => {
    it('refuses an update for a shard at or above the shard count', () => {
      const pb = applyBlockRequestToProto(request);
      pb.shards[1]!.shard = 16;
      const e = expectProtocolError(
        () => applyBlockRequestFromProto(pb),
        ProtocolErrorCode.BadShard,
        'shards[1].shard',
      );
      expect(e.message).toBe('BAD_SHARD: shards[1].shard: expected a shard below 16, found 16');
    });

    it('refuses a shard updated twice', () => {
      const pb = applyBlockRequestToProto(request);
      pb.shards[1]!.shard = 2;
      expectProtocolError(
        () => applyBlockRequestFromProto(pb),
        ProtocolErrorCode.BadShard,
        'shards[1].shard',
      );
    });

    it('refuses expected roots that miss a shard, repeat one, or do not match the known shard count', () => {
      const pb = applyBlockRequestToProto(request);
      const e = expectProtocolError(
        () => applyBlockRequestFromProto({ ...pb, expectedRoots: pb.expectedRoots.slice(1) }),
        ProtocolErrorCode.BadShard,
        'expectedRoots.length',
      );
      expect(e.message).toBe(
        'BAD_SHARD: expectedRoots.length: expected a shard count of 16 or 256, found 15',
      );
      const repeated = [...pb.expectedRoots.slice(0, 15), { ...pb.expectedRoots[0]! }];
      expectProtocolError(
        () => applyBlockRequestFromProto({ ...pb, expectedRoots: repeated }),
        ProtocolErrorCode.BadShard,
        'expectedRoots[15].shard',
      );
      expectProtocolError(
        () => applyBlockRequestFromProto(pb, { shardCount: 256 }),
        ProtocolErrorCode.BadShard,
        'expectedRoots',
      );
      expectProtocolError(
        () => applyBlockRequestToProto(request, { shardCount: 17 }),
        ProtocolErrorCode.BadShard,
        'shardCount',
      );
    });

    it('accepts 256 shards', () => {
      const r256 = { ...request, shards: [{ shard: 200, accounts: [] }], expectedRoots: roots(256) };
      expect(applyBlockRequestFromProto(applyBlockRequestToProto(r256))).toStrictEqual(r256);
    });
  });
});

describe('ApplyBlock response', () => {
  const response = { blockHash: hash(5), number: 42n, roots: [{ shard: 2, root: hash(2) }] };

  it('round-trips through the wire', () => {
    const pb = wire(storagePb.ApplyBlockResponse, applyBlockResponseToProto(response, { shardCount: 16 }));
    expect(applyBlockResponseFromProto(pb, { shardCount: 16 })).toStrictEqual(response);
  });

  it('refuses a bad block hash, a shard beyond the known count, a shard twice', () => {
    expectProtocolError(
      () => applyBlockResponseToProto({ ...response, blockHash: filled(3) }),
      ProtocolErrorCode.BadLength,
      'blockHash',
    );
    const beyond = { ...response, roots: [{ shard: 16, root: hash() }] };
    expect(applyBlockResponseFromProto(beyond).roots).toHaveLength(1); // count unknown: nothing to check against
    expectProtocolError(
      () => applyBlockResponseFromProto(beyond, { shardCount: 16 }),
      ProtocolErrorCode.BadShard,
      'roots[0].shard',
    );
    expectProtocolError(
      () => applyBlockResponseFromProto({ ...response, roots: [response.roots[0]!, response.roots[0]!] }),
      ProtocolErrorCode.BadShard,
      'roots[1].shard',
    );
  });
});
