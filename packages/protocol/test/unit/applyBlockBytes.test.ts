/**
 * applyBlockRequestFromBytes (the storage node's direct reader of an ApplyBlockRequest) held to
 * the generated decoder + applyBlockRequestFromProto on the same bytes: the same request, or the
 * same refusal (class, code and message), for random valid requests, hand-made edge cases
 * (every field's checks, repeated and unknown fields, wide varints, fields out of order) and
 * thousands of corruptions of valid encodings (bytes flipped, cut, inserted).
 */
import { describe, expect, it } from '@jest/globals';
import {
  type AccountUpdate,
  type ApplyBlockRequest,
  applyBlockRequestFromBytes,
  applyBlockRequestFromProto,
  applyBlockRequestToProto,
  type ShardRoot,
  storagePb,
} from '@monsoon/protocol';
import { Prng } from '@monsoon/test-utils';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** A request or a refusal as plain data (bytes as hex), for toEqual. */
function outcome(f: () => ApplyBlockRequest): unknown {
  let r: ApplyBlockRequest;
  try {
    r = f();
  } catch (e) {
    const err = e as Error & { code?: unknown };
    return { refused: err.constructor.name, code: err.code, message: err.message };
  }
  // Every field is a plain Uint8Array, as the converters give them (a Buffer would read "Buffer").
  const bytesOf = (b: Uint8Array) =>
    b.constructor === Uint8Array ? hex(b) : `${b.constructor.name} ${hex(b)}`;
  return {
    headerRlp: bytesOf(r.headerRlp),
    shards: r.shards.map((s) => ({
      shard: s.shard,
      accounts: s.accounts.map((a) =>
        a.deleted
          ? { deleted: true, address: bytesOf(a.address), keys: Object.keys(a) }
          : {
              ...a,
              address: bytesOf(a.address),
              code: a.code === undefined ? undefined : bytesOf(a.code),
              storage: a.storage.map((w) => ({ slot: bytesOf(w.slot), value: bytesOf(w.value) })),
              keys: Object.keys(a),
            },
      ),
    })),
    expectedRoots: r.expectedRoots.map((x) => ({
      shard: x.shard,
      root: hex(x.root),
    })),
  };
}

function bothOn(bytes: Uint8Array, shardCount?: number): [unknown, unknown] {
  const ctx = shardCount === undefined ? {} : { shardCount };
  const slow = outcome(() => applyBlockRequestFromProto(storagePb.ApplyBlockRequest.decode(bytes), ctx));
  // A Buffer as grpc-js hands bytes over, and a plain Uint8Array as a log record is.
  const fromBuffer = outcome(() => applyBlockRequestFromBytes(Buffer.from(bytes), ctx));
  const fast = outcome(() => applyBlockRequestFromBytes(Uint8Array.from(bytes), ctx));
  expect(fromBuffer).toEqual(fast);
  return [fast, slow];
}

function expectSame(bytes: Uint8Array, what: string, shardCount?: number): unknown {
  const [fast, slow] = bothOn(bytes, shardCount);
  expect({ what, r: fast }).toEqual({ what, r: slow });
  return fast;
}

function randomAccount(r: Prng): AccountUpdate {
  const address = r.bytes(20);
  if (r.chance(0.1)) return { deleted: true, address };
  const slots = r.int(4);
  return {
    deleted: false,
    address,
    nonce: r.chance(0.1) ? (1n << 64n) - 1n - BigInt(r.int(3)) : BigInt(r.int(1 << 20)),
    balance: r.chance(0.2) ? 0n : BigInt(`0x${hex(r.bytes(r.range(1, 32)))}`),
    code: r.chance(0.1) ? r.bytes(r.range(1, 100)) : undefined,
    clearStorage: r.chance(0.1),
    storage: Array.from({ length: slots }, () => ({
      slot: r.bytes(32),
      value: r.chance(0.2)
        ? new Uint8Array(0)
        : r.bytes(r.range(1, 32)).map((x, i) => (i === 0 && x === 0 ? 1 : x)),
    })),
  };
}

function randomRequest(r: Prng, count = 16): ApplyBlockRequest {
  const shards = r.shuffle(Array.from({ length: count }, (_, i) => i)).slice(0, r.range(0, 4));
  return {
    headerRlp: r.bytes(r.range(1, 600)),
    shards: shards.map((shard) => ({
      shard,
      accounts: Array.from({ length: r.int(12) }, () => randomAccount(r)),
    })),
    expectedRoots: r.shuffle(
      Array.from(
        { length: count },
        (_, shard): ShardRoot =>
          r.chance(0.1) ? { shard, root: new Uint8Array(0) } : { shard, root: r.bytes(32) },
      ),
    ),
  };
}

/** protobuf pieces for hand-made encodings. */
function varint(n: number | bigint): number[] {
  let v = BigInt(n);
  const out: number[] = [];
  do {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? b | 0x80 : b);
  } while (v > 0n);
  return out;
}
const field = (n: number, bytes: ArrayLike<number>): number[] => [
  (n << 3) | 2,
  ...varint(bytes.length),
  ...Array.from(bytes),
];
const num = (n: number, v: number | bigint): number[] => [n << 3, ...varint(v)];
const rootsPart = (count: number): number[] =>
  Array.from({ length: count }, (_, shard) =>
    field(3, [...(shard > 0 ? num(1, shard) : []), ...field(2, new Uint8Array(32).fill(shard + 1))]),
  ).flat();
/** A request with one shard (5) holding one account whose fields are `account`. */
const withAccount = (account: number[], shardFields: number[] = num(1, 5)): Uint8Array =>
  Uint8Array.from([
    ...field(1, [0xc0]),
    ...field(2, [...shardFields, ...field(2, account)]),
    ...rootsPart(16),
  ]);
const ADDRESS = Array.from({ length: 20 }, (_, i) => i + 1);
const SLOT = Array.from({ length: 32 }, (_, i) => 0x40 + i);

describe('applyBlockRequestFromBytes', () => {
  it('reads random requests as the generated decoder and the converter do', () => {
    const r = new Prng(77);
    let checked = 0;
    for (let i = 0; i < 200; i++) {
      const req = randomRequest(r);
      const bytes = storagePb.ApplyBlockRequest.encode(applyBlockRequestToProto(req)).finish();
      const got = expectSame(bytes, `request ${i}`, r.chance(0.5) ? 16 : undefined);
      expect(got).not.toHaveProperty('refused');
      // Read directly, not by the fallback (which takes nonces of 2^49 and more): an account
      // without slot writes shares one frozen empty list there (the converter makes new arrays).
      const direct = applyBlockRequestFromBytes(bytes).shards.flatMap((s) => s.accounts);
      if (direct.every((a) => a.deleted || a.nonce < 2n ** 49n)) {
        for (const a of direct)
          if (!a.deleted && a.storage.length === 0) expect(Object.isFrozen(a.storage)).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('answers hand-made edge cases as the generated decoder and the converter do', () => {
    const ok = [...field(1, ADDRESS), ...num(3, 7), ...field(4, [1, 0])];
    const cases: [string, Uint8Array, boolean][] = [
      ['an account change', withAccount(ok), true],
      ['fields out of order', withAccount([...field(4, [1, 0]), ...num(3, 7), ...field(1, ADDRESS)]), true],
      [
        'shard after its accounts',
        Uint8Array.from([
          ...field(1, [0xc0]),
          ...field(2, [...field(2, ok), ...num(1, 5)]),
          ...rootsPart(16),
        ]),
        true,
      ],
      ['shard 0 by default', withAccount(ok, []), true],
      ['shard written as 0', withAccount(ok, num(1, 0)), true],
      ['a shard past the count', withAccount(ok, num(1, 16)), false],
      ['a shard of 2^31', withAccount(ok, num(1, 2 ** 31)), false],
      ['a shard in a 6-byte varint', withAccount(ok, [8, 0x85, 0x80, 0x80, 0x80, 0x80, 0]), true],
      ['a nonce of 2^64-1', withAccount([...field(1, ADDRESS), ...num(3, (1n << 64n) - 1n)]), true],
      ['a nonce of 2^49', withAccount([...field(1, ADDRESS), ...num(3, 2n ** 49n)]), true],
      ['a nonce in a non-minimal varint', withAccount([...field(1, ADDRESS), 24, 0x87, 0x80, 0]), true],
      ['a nonce written as 0', withAccount([...field(1, ADDRESS), ...num(3, 0)]), true],
      ['no address', withAccount(num(3, 7)), false],
      ['a 19-byte address', withAccount(field(1, ADDRESS.slice(1))), false],
      [
        'the address twice',
        withAccount([
          ...field(1, ADDRESS),
          ...field(
            1,
            ADDRESS.map((x) => x + 1),
          ),
        ]),
        true,
      ],
      ['the nonce twice', withAccount([...field(1, ADDRESS), ...num(3, 7), ...num(3, 8)]), true],
      ['a balance with a leading zero', withAccount([...field(1, ADDRESS), ...field(4, [0, 1])]), false],
      ['a 33-byte balance', withAccount([...field(1, ADDRESS), ...field(4, new Array(33).fill(1))]), false],
      ['a 32-byte balance', withAccount([...field(1, ADDRESS), ...field(4, new Array(32).fill(0xff))]), true],
      ['an empty balance written', withAccount([...field(1, ADDRESS), ...field(4, [])]), true],
      ['code', withAccount([...field(1, ADDRESS), ...field(5, [0x60, 0x00])]), true],
      ['empty code written', withAccount([...field(1, ADDRESS), ...field(5, [])]), true],
      ['a deletion', withAccount([...field(1, ADDRESS), ...num(2, 1)]), true],
      [
        'a deletion with false fields written',
        withAccount([
          ...field(1, ADDRESS),
          ...num(2, 1),
          ...num(3, 0),
          ...field(4, []),
          ...field(5, []),
          ...num(6, 0),
        ]),
        true,
      ],
      ['deleted written false', withAccount([...field(1, ADDRESS), ...num(2, 0), ...num(3, 1)]), true],
      ['deleted as 2', withAccount([...field(1, ADDRESS), ...num(2, 2)]), true],
      ['a deletion with a nonce', withAccount([...field(1, ADDRESS), ...num(2, 1), ...num(3, 1)]), false],
      [
        'a deletion with a balance',
        withAccount([...field(1, ADDRESS), ...num(2, 1), ...field(4, [1])]),
        false,
      ],
      ['a deletion with code', withAccount([...field(1, ADDRESS), ...num(2, 1), ...field(5, [1])]), false],
      ['a deletion clearing storage', withAccount([...field(1, ADDRESS), ...num(2, 1), ...num(6, 1)]), false],
      [
        'a deletion with a slot',
        withAccount([...field(1, ADDRESS), ...num(2, 1), ...field(7, field(1, SLOT))]),
        false,
      ],
      ['clearStorage', withAccount([...field(1, ADDRESS), ...num(6, 1)]), true],
      [
        'a slot write',
        withAccount([...field(1, ADDRESS), ...field(7, [...field(1, SLOT), ...field(2, [0, 0, 5])])]),
        true,
      ],
      [
        'a slot zeroed',
        withAccount([...field(1, ADDRESS), ...field(7, [...field(1, SLOT), ...field(2, [0, 0])])]),
        true,
      ],
      ['a slot with no value', withAccount([...field(1, ADDRESS), ...field(7, field(1, SLOT))]), true],
      [
        'a slot value of 33 bytes',
        withAccount([
          ...field(1, ADDRESS),
          ...field(7, [...field(1, SLOT), ...field(2, new Array(33).fill(0))]),
        ]),
        false,
      ],
      ['a 31-byte slot', withAccount([...field(1, ADDRESS), ...field(7, field(1, SLOT.slice(1)))]), false],
      ['no slot', withAccount([...field(1, ADDRESS), ...field(7, field(2, [1]))]), false],
      [
        'a slot twice in one write',
        withAccount([
          ...field(1, ADDRESS),
          ...field(7, [
            ...field(1, SLOT),
            ...field(
              1,
              SLOT.map((x) => x + 1),
            ),
          ]),
        ]),
        true,
      ],
      [
        'a slot written twice',
        withAccount([
          ...field(1, ADDRESS),
          ...field(7, field(1, SLOT)),
          ...field(7, [...field(1, SLOT), ...field(2, [9])]),
        ]),
        false,
      ],
      [
        'two slots',
        withAccount([
          ...field(1, ADDRESS),
          ...field(7, field(1, SLOT)),
          ...field(7, [
            ...field(
              1,
              SLOT.map((x) => x ^ 1),
            ),
            ...field(2, [9]),
          ]),
        ]),
        true,
      ],
      ['an unknown field', withAccount([...field(1, ADDRESS), ...num(9, 1)]), true],
      ['a known field of another wire type', withAccount([...field(1, ADDRESS), ...field(3, [1])]), true],
      ['a zero tag', withAccount([...field(1, ADDRESS), 0, 0]), true],
      ['a truncated account', withAccount([...field(1, ADDRESS), 24]), false],
      ['no header', Uint8Array.from([...field(2, [...num(1, 5), ...field(2, ok)]), ...rootsPart(16)]), false],
      ['an empty header', Uint8Array.from([...field(1, []), ...rootsPart(16)]), false],
      ['the header twice', Uint8Array.from([...field(1, [1]), ...field(1, [2]), ...rootsPart(16)]), true],
      ['no roots', Uint8Array.from([...field(1, [1])]), false],
      ['15 roots', Uint8Array.from([...field(1, [1]), ...rootsPart(15)]), false],
      [
        'a shard twice',
        Uint8Array.from([...field(1, [1]), ...field(2, num(1, 3)), ...field(2, num(1, 3)), ...rootsPart(16)]),
        false,
      ],
      [
        'an account in two shards',
        Uint8Array.from([
          ...field(1, [1]),
          ...field(2, [...num(1, 3), ...field(2, ok)]),
          ...field(2, [...num(1, 4), ...field(2, ok)]),
          ...rootsPart(16),
        ]),
        false,
      ],
      ['a truncated root', Uint8Array.from([...field(1, [1]), ...rootsPart(16), 26, 5, 18, 32]), false],
      ['nothing', new Uint8Array(0), false],
    ];
    for (const [what, bytes, accepted] of cases) {
      const got = expectSame(bytes, what);
      expect({ what, accepted: !Object.hasOwn(got as object, 'refused') }).toEqual({ what, accepted });
    }
  });

  it('refuses or reads corrupted encodings as the generated decoder and the converter do', () => {
    const r = new Prng(78);
    let refused = 0;
    for (let i = 0; i < 1500; i++) {
      const bytes = Array.from(
        storagePb.ApplyBlockRequest.encode(applyBlockRequestToProto(randomRequest(r))).finish(),
      );
      const at = r.int(bytes.length);
      switch (r.int(4)) {
        case 0:
          bytes[at] = r.int(256);
          break;
        case 1:
          bytes[at] ^= 1 << r.int(8);
          break;
        case 2:
          bytes.length = at;
          break;
        default:
          bytes.splice(at, 0, r.int(256));
      }
      const got = expectSame(Uint8Array.from(bytes), `corruption ${i}`, 16);
      if (Object.hasOwn(got as object, 'refused')) refused++;
    }
    expect(refused).toBeGreaterThan(150);
  });
});
