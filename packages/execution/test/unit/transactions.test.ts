/**
 * decodeTransaction against @ethereumjs/tx: every supported type round-trips to the same
 * transaction ethereumjs decodes, and what must be refused is refused with the right code.
 * decodeSignedTx (no ethereumjs objects) against decodeTransaction: the same verdict on valid
 * transactions, on every truncation and single-byte change, on hand-made refusals and garbage.
 * Keys and fields are derived from keccak of a counter, so runs are deterministic.
 */
import type { Common } from '@ethereumjs/common';
import {
  type AccessList,
  createAccessList2930Tx,
  createFeeMarket1559Tx,
  createLegacyTx,
  createTxFromRLP,
  type TypedTransaction,
} from '@ethereumjs/tx';
import { describe, expect, it } from '@jest/globals';
import { rlpDecode, rlpEncode, toHex } from '@monsoon/dsm-tree';
import {
  decodeSignedTx,
  decodeTransaction,
  ExecutionError,
  ExecutionErrorCode,
  makeCommon,
  recoverSenders,
  SECP256K1_HALF_N,
  SECP256K1_N,
  type SignedTx,
  signatureSpansError,
  signatureValuesError,
  txInfo,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import secp256k1 from 'secp256k1';

const CHAIN = 1337n;
const common = makeCommon(CHAIN);

/** Deterministic bytes: keccak256 of (tag, i). */
function det(tag: string, i: number): Uint8Array {
  return keccak.keccak256(new TextEncoder().encode(`${tag}:${i}`));
}

function signNative(tx: TypedTransaction, key: Uint8Array): TypedTransaction {
  const { signature, recid } = secp256k1.ecdsaSign(tx.getHashedMessageToSign(), key);
  return tx.addSignature(BigInt(recid), signature.slice(0, 32), signature.slice(32), true);
}

/** A pre-EIP-155 legacy transaction (v = 27/28, no chain id in what is signed). */
function signPre155(i: number, key: Uint8Array, c: Common = common): TypedTransaction {
  const fields = {
    nonce: BigInt(i),
    gasPrice: 7n + BigInt(i),
    gasLimit: 21_000n,
    to: det('to', i).slice(0, 20),
    value: BigInt(i),
  };
  const unsigned = createLegacyTx(fields, { common: c });
  const msg = keccak.keccak256(rlpEncode(unsigned.getMessageToSign().slice(0, 6)));
  const { signature, recid } = secp256k1.ecdsaSign(msg, key);
  return createLegacyTx(
    { ...fields, v: 27n + BigInt(recid), r: signature.slice(0, 32), s: signature.slice(32) },
    { common: c },
  );
}

const KINDS = ['legacy', 'legacyCreate', 'pre155', '2930', '1559', '1559Create'] as const;
type Kind = (typeof KINDS)[number];

/** Transaction `i` of `kind`, signed with a key derived from `i`, for the chain of `c`. */
function makeTx(kind: Kind, i: number, c: Common = common): TypedTransaction {
  const key = det('key', i);
  const to = det('to', i).slice(0, 20);
  const data = det('data', i).slice(0, i % 33);
  const accessList: AccessList = [
    { address: `0x${toHex(det('al', i).slice(0, 20))}`, storageKeys: [`0x${toHex(det('slot', i))}`] },
  ];
  const base = { nonce: BigInt(i), gasLimit: 100_000n + BigInt(i), value: BigInt(i) * 1000n, data };
  switch (kind) {
    case 'legacy':
      return signNative(createLegacyTx({ ...base, gasPrice: 10n + BigInt(i), to }, { common: c }), key);
    case 'legacyCreate':
      return signNative(createLegacyTx({ ...base, gasPrice: 10n }, { common: c }), key);
    case 'pre155':
      return signPre155(i, key, c);
    case '2930':
      return signNative(
        createAccessList2930Tx({ ...base, gasPrice: 10n, to, accessList }, { common: c }),
        key,
      );
    case '1559':
      return signNative(
        createFeeMarket1559Tx(
          { ...base, maxFeePerGas: 100n + BigInt(i), maxPriorityFeePerGas: BigInt(i % 7), to, accessList },
          { common: c },
        ),
        key,
      );
    case '1559Create':
      return signNative(createFeeMarket1559Tx({ ...base, maxFeePerGas: 100n }, { common: c }), key);
  }
}

/** The ExecutionError `fn` threw (fails the test if it threw anything else or nothing). */
function refusal(fn: () => unknown): ExecutionError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ExecutionError);
  return caught as ExecutionError;
}

function expectRefused(raw: Uint8Array, code: ExecutionErrorCode, message?: RegExp): ExecutionError {
  const e = refusal(() => decodeTransaction(raw, common));
  expect(e.code).toBe(code);
  if (message !== undefined) expect(e.message).toMatch(message);
  return e;
}

/** Re-encodes `tx` with its signature fields replaced (the last three of its RLP list). */
function withSignature(tx: TypedTransaction, v: Uint8Array, r: Uint8Array, s: Uint8Array): Uint8Array {
  const raw = tx.serialize();
  const typed = tx.type !== 0;
  const fields = rlpDecode(typed ? raw.subarray(1) : raw) as Uint8Array[];
  fields.splice(fields.length - 3, 3, v, r, s);
  const body = rlpEncode(fields);
  return typed ? Uint8Array.of(tx.type, ...body) : body;
}

/** Re-encodes `tx` with field `i` of its RLP list replaced. */
function withField(tx: TypedTransaction, i: number, value: Uint8Array): Uint8Array {
  const raw = tx.serialize();
  const typed = tx.type !== 0;
  const fields = rlpDecode(typed ? raw.subarray(1) : raw) as Uint8Array[];
  fields[i] = value;
  const body = rlpEncode(fields);
  return typed ? Uint8Array.of(tx.type, ...body) : body;
}

/** Seeded garbage i: 1–31 bytes, a third led by the EIP-1559 type byte, a third by a list header. */
function garbage(i: number): Uint8Array {
  const bytes = det('garbage', i);
  const raw = bytes.subarray(0, 1 + (bytes[31]! % 31));
  if (i % 3 === 0) raw[0] = 0x02;
  else if (i % 3 === 1) raw[0] = 0xc0 + (raw.length - 1);
  return raw;
}

function bigBytes(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0);
  const h = n.toString(16);
  return Uint8Array.from(Buffer.from(h.length % 2 ? `0${h}` : h, 'hex'));
}

describe('decodeTransaction: round trips', () => {
  it.each(KINDS)('%s: 25 transactions decode to what ethereumjs decodes', (kind) => {
    for (let i = 0; i < 25; i++) {
      const raw = makeTx(kind, i).serialize();
      const ours = decodeTransaction(raw, common);
      const theirs = createTxFromRLP(raw, { common });
      expect(ours.type).toBe(theirs.type);
      expect(ours.serialize()).toEqual(raw);
      expect(ours.hash()).toEqual(theirs.hash());
      expect(ours.toJSON()).toEqual(theirs.toJSON());
      expect(ours.getIntrinsicGas()).toBe(theirs.getIntrinsicGas());
    }
  });

  it('with a Common never used before, decoded transactions have the same gas rules as ethereumjs gives them', () => {
    for (const kind of KINDS) {
      const raw = makeTx(kind, 21).serialize();
      const ours = decodeTransaction(raw, makeCommon(CHAIN));
      const theirs = createTxFromRLP(raw, { common: makeCommon(CHAIN) });
      expect(ours.getIntrinsicGas()).toBe(theirs.getIntrinsicGas());
      expect(ours.getDataGas()).toBe(theirs.getDataGas());
      expect(ours.common.param('txGas')).toBe(21_000n);
      // Signing again (ethereumjs re-creates the transaction with the options it was made with).
      expect(ours.sign(det('key', 21)).serialize()).toEqual(theirs.sign(det('key', 21)).serialize());
    }
  });

  it('decodes pre-EIP-155 legacy transactions (v 27/28) and signs them without the chain id', () => {
    const tx = decodeTransaction(makeTx('pre155', 3).serialize(), common);
    expect([27n, 28n]).toContain(tx.v);
    expect(tx.getMessageToSign()).toHaveLength(6);
    expect(toHex(tx.getSenderAddress().bytes)).toBe(toHex(makeTx('pre155', 3).getSenderAddress().bytes));
  });

  it('txInfo gives the plain fields; legacy and EIP-2930 report the gas price as both fee caps', () => {
    const t1559 = decodeTransaction(makeTx('1559', 5).serialize(), common);
    const info = txInfo(t1559);
    expect(info).toEqual({
      hash: t1559.hash(),
      type: 2,
      nonce: 5n,
      gasLimit: 100_005n,
      to: det('to', 5).slice(0, 20),
      value: 5000n,
      data: det('data', 5).slice(0, 5),
      maxFeePerGas: 105n,
      maxPriorityFeePerGas: 5n,
      intrinsicGas: t1559.getIntrinsicGas(),
    });
    expect(info.hash).toEqual(keccak.keccak256(t1559.serialize()));
    const legacy = txInfo(decodeTransaction(makeTx('legacy', 6).serialize(), common));
    expect([legacy.type, legacy.maxFeePerGas, legacy.maxPriorityFeePerGas]).toEqual([0, 16n, 16n]);
    expect(txInfo(decodeTransaction(makeTx('1559Create', 1).serialize(), common)).to).toBeUndefined();
    // 21000 + creation 32000 + one word of init code (2) + one non-zero byte (16, or 4 if zero).
    const create = decodeTransaction(makeTx('legacyCreate', 1).serialize(), common);
    const dataGas = create.data[0] === 0 ? 4n : 16n;
    expect(txInfo(create).intrinsicGas).toBe(21_000n + 32_000n + 2n + dataGas);
  });
});

describe('decodeTransaction: malformed bytes are BadTransaction', () => {
  it('refuses empty input, unknown type bytes and a top-level byte string', () => {
    expectRefused(
      new Uint8Array(0),
      ExecutionErrorCode.BadTransaction,
      /expected a transaction, found 0 bytes/,
    );
    for (const type of [0x00, 0x05, 0x7f]) {
      const raw = Uint8Array.of(type, ...makeTx('1559', 1).serialize().subarray(1));
      expectRefused(raw, ExecutionErrorCode.BadTransaction, /unsupported transaction type/);
    }
    // Blob (EIP-4844) and set-code (EIP-7702) transactions: geth's words for a type its pool refuses.
    for (const type of [0x03, 0x04]) {
      const raw = Uint8Array.of(type, ...makeTx('1559', 1).serialize().subarray(1));
      expectRefused(
        raw,
        ExecutionErrorCode.BadTransaction,
        new RegExp(
          `^BAD_TRANSACTION: transaction type not supported: tx type ${type} not supported by this pool$`,
        ),
      );
    }
    expectRefused(Uint8Array.of(0x83, 1, 2, 3), ExecutionErrorCode.BadTransaction, /RLP byte string/);
  });

  it.each(KINDS)('%s: every truncation is refused as BadTransaction', (kind) => {
    const raw = makeTx(kind, 7).serialize();
    for (let len = 1; len < raw.length; len++) {
      expectRefused(raw.subarray(0, len), ExecutionErrorCode.BadTransaction);
    }
  });

  it.each(KINDS)('%s: a trailing byte and a wrong field count are refused', (kind) => {
    const tx = makeTx(kind, 8);
    const raw = tx.serialize();
    expectRefused(Uint8Array.of(...raw, 0x00), ExecutionErrorCode.BadTransaction, /trailing/);
    const typed = tx.type !== 0;
    const fields = rlpDecode(typed ? raw.subarray(1) : raw) as Uint8Array[];
    const extra = rlpEncode([...fields, new Uint8Array(0)]);
    expectRefused(
      typed ? Uint8Array.of(tx.type, ...extra) : extra,
      ExecutionErrorCode.BadTransaction,
      /fields, found/,
    );
  });

  it('refuses a list where a byte string belongs, and a byte string for the access list', () => {
    const raw1559 = makeTx('1559', 2).serialize();
    const fields = rlpDecode(raw1559.subarray(1)) as (Uint8Array | Uint8Array[])[];
    const nested = [...fields];
    nested[1] = [Uint8Array.of(1)];
    expectRefused(
      Uint8Array.of(2, ...rlpEncode(nested)),
      ExecutionErrorCode.BadTransaction,
      /field 1 must be a byte string/,
    );
    const flatAccess = [...fields];
    flatAccess[8] = Uint8Array.of(1);
    expectRefused(
      Uint8Array.of(2, ...rlpEncode(flatAccess)),
      ExecutionErrorCode.BadTransaction,
      /field 8 must be a list/,
    );
  });

  it('refuses non-canonical encodings: a leading zero in the nonce, or in a typed chain id', () => {
    const tx = makeTx('1559', 9);
    expectRefused(withField(tx, 1, Uint8Array.of(0, 9)), ExecutionErrorCode.BadTransaction, /leading zero/);
    expectRefused(
      withField(tx, 0, Uint8Array.of(0, ...bigBytes(CHAIN))),
      ExecutionErrorCode.BadTransaction,
      /canonical/,
    );
  });

  it('refuses fields ethereumjs refuses (a 19-byte recipient), keeping its message', () => {
    const e = expectRefused(
      withField(makeTx('legacy', 3), 3, new Uint8Array(19)),
      ExecutionErrorCode.BadTransaction,
    );
    expect(e.message).toMatch(/refused by @ethereumjs\/tx/);
    expect(e.cause).toBeInstanceOf(Error);
  });

  it('seeded garbage: 500 random byte strings all give an ExecutionError, never another exception', () => {
    for (let i = 0; i < 500; i++) {
      const raw = garbage(i);
      refusal(() => decodeTransaction(raw, common));
    }
  });
});

describe('decodeTransaction: chain and signature', () => {
  const mainnetish = makeCommon(1n);

  it.each(['legacy', '2930', '1559'] as const)(
    '%s signed for chain 1 is WrongChain on chain 1337',
    (kind) => {
      const raw = makeTx(kind, 4, mainnetish).serialize();
      expect(decodeTransaction(raw, mainnetish).serialize()).toEqual(raw);
      const e = expectRefused(raw, ExecutionErrorCode.WrongChain, /chain 1\b.*expected chain 1337/);
      expect(e.meta).toMatchObject({ signedFor: 1n, chainId: 1337n });
    },
  );

  it('a legacy v of 35/36 (chain 0) is WrongChain', () => {
    const tx = makeTx('legacy', 1);
    expectRefused(
      withSignature(tx, Uint8Array.of(35), bigBytes(tx.r!), bigBytes(tx.s!)),
      ExecutionErrorCode.WrongChain,
    );
  });

  it.each(KINDS)('%s with s replaced by n − s (the malleable twin) is BadSignature', (kind) => {
    const tx = makeTx(kind, 11);
    const v = tx.v!;
    const flippedV = tx.type !== 0 ? 1n - v : v % 2n === 1n ? v + 1n : v - 1n;
    const raw = withSignature(tx, bigBytes(flippedV), bigBytes(tx.r!), bigBytes(SECP256K1_N - tx.s!));
    expectRefused(raw, ExecutionErrorCode.BadSignature, /at most n\/2/);
  });

  it('refuses bad v / y-parity, zero or overflowing r and s, and unsigned transactions', () => {
    const legacy = makeTx('legacy', 12);
    const r = bigBytes(legacy.r!);
    const s = bigBytes(legacy.s!);
    const v = bigBytes(legacy.v!);
    expectRefused(
      withSignature(legacy, Uint8Array.of(29), r, s),
      ExecutionErrorCode.BadSignature,
      /27 or 28.*2709 or 2710.*found 29/,
    );
    expectRefused(
      withSignature(legacy, new Uint8Array(0), r, s),
      ExecutionErrorCode.BadSignature,
      /not signed/,
    );
    expectRefused(
      withSignature(legacy, v, new Uint8Array(0), s),
      ExecutionErrorCode.BadSignature,
      /r must be/,
    );
    expectRefused(
      withSignature(legacy, v, bigBytes(SECP256K1_N), s),
      ExecutionErrorCode.BadSignature,
      /r must be/,
    );
    expectRefused(
      withSignature(legacy, v, r, new Uint8Array(0)),
      ExecutionErrorCode.BadSignature,
      /s must be/,
    );
    const t1559 = makeTx('1559', 12);
    expectRefused(
      withSignature(t1559, Uint8Array.of(2), bigBytes(t1559.r!), bigBytes(t1559.s!)),
      ExecutionErrorCode.BadSignature,
      /y-parity must be 0 or 1, found 2/,
    );
    const unsignedLegacy = createLegacyTx({ nonce: 1n, gasPrice: 1n, gasLimit: 21_000n }, { common });
    expectRefused(rlpEncode(unsignedLegacy.raw().slice(0, 6)), ExecutionErrorCode.BadSignature, /not signed/);
    const unsigned1559 = createFeeMarket1559Tx({ maxFeePerGas: 1n, gasLimit: 21_000n }, { common });
    expectRefused(unsigned1559.serialize(), ExecutionErrorCode.BadSignature, /not signed: r and s are empty/);
    const nineFields = rlpEncode(unsigned1559.raw().slice(0, 9) as Uint8Array[]);
    expectRefused(
      Uint8Array.of(2, ...nineFields),
      ExecutionErrorCode.BadSignature,
      /not signed: found 9 fields/,
    );
  });
});

describe('decodeSignedTx against decodeTransaction (the miner decodes without ethereumjs)', () => {
  /** The same verdict: equal fields, hash, signing hash and sender, or the same refusal code. */
  function expectSameVerdict(raw: Uint8Array): 'accepted' | ExecutionErrorCode {
    let theirs: TypedTransaction | ExecutionError;
    let ours: SignedTx | ExecutionError;
    try {
      theirs = decodeTransaction(raw, common);
    } catch (e) {
      expect(e).toBeInstanceOf(ExecutionError);
      theirs = e as ExecutionError;
    }
    try {
      ours = decodeSignedTx(raw, common);
    } catch (e) {
      expect(e).toBeInstanceOf(ExecutionError);
      ours = e as ExecutionError;
    }
    if (theirs instanceof ExecutionError || ours instanceof ExecutionError) {
      expect(ours instanceof ExecutionError ? ours.code : 'accepted').toBe(
        theirs instanceof ExecutionError ? theirs.code : 'accepted',
      );
      return (theirs as ExecutionError).code;
    }
    const info = txInfo(theirs);
    expect({
      hash: toHex(ours.hash),
      type: ours.type,
      nonce: ours.nonce,
      gasLimit: ours.gasLimit,
      to: ours.to === undefined ? undefined : toHex(ours.to),
      value: ours.value,
      data: toHex(ours.data),
      maxFeePerGas: ours.maxFeePerGas,
      maxPriorityFeePerGas: ours.maxPriorityFeePerGas,
      intrinsicGas: ours.intrinsicGas,
      v: ours.v,
      r: ours.r,
      s: ours.s,
    }).toEqual({
      hash: toHex(info.hash),
      type: info.type,
      nonce: info.nonce,
      gasLimit: info.gasLimit,
      to: info.to === undefined ? undefined : toHex(info.to),
      value: info.value,
      data: toHex(info.data),
      maxFeePerGas: info.maxFeePerGas,
      maxPriorityFeePerGas: info.maxPriorityFeePerGas,
      intrinsicGas: info.intrinsicGas,
      v: theirs.v,
      r: theirs.r,
      s: theirs.s,
    });
    const theirList = 'accessList' in theirs ? theirs.accessList : [];
    expect(ours.accessList.map(([a, ks]) => [toHex(a), ks.map(toHex)])).toEqual(
      theirList.map(([a, ks]) => [toHex(a), ks.map(toHex)]),
    );
    expect(toHex(keccak.keccak256(ours.signingPayload()))).toBe(toHex(theirs.getHashedMessageToSign()));
    expect(recoverSenders([ours])).toEqual(recoverSenders([theirs]));
    return 'accepted';
  }

  it.each(KINDS)('%s: 25 transactions decode alike, senders included', (kind) => {
    for (let i = 0; i < 25; i++) expect(expectSameVerdict(makeTx(kind, i).serialize())).toBe('accepted');
  });

  it.each(KINDS)('%s: every truncation and single-byte change gets the same verdict', (kind) => {
    const raw = makeTx(kind, 13).serialize();
    const verdicts = new Set<string>();
    for (let len = 0; len < raw.length; len++) verdicts.add(expectSameVerdict(raw.subarray(0, len)));
    for (let i = 0; i < raw.length; i++) {
      for (const b of [0x00, 0x01, 0x7f, 0x80, 0x81, 0xa0, 0xb8, 0xc0, 0xf8, 0xff, raw[i]! ^ 1]) {
        const m = raw.slice();
        m[i] = b;
        verdicts.add(expectSameVerdict(m));
      }
    }
    expect(verdicts.size).toBeGreaterThan(2);
  });

  it('the hand-made refusals of this file get the same codes', () => {
    const tx = makeTx('1559', 9);
    const legacy = makeTx('legacy', 12);
    const cases = [
      withField(tx, 1, Uint8Array.of(0, 9)),
      withField(tx, 0, Uint8Array.of(0, ...bigBytes(CHAIN))),
      withField(makeTx('legacy', 3), 3, new Uint8Array(19)),
      withField(tx, 2, bigBytes(10n ** 30n)), // tip above the fee cap
      withField(tx, 1, bigBytes((1n << 64n) - 1n)), // nonce at 2^64 - 1
      withField(tx, 4, bigBytes(1n << 64n)), // gas limit over 2^64 - 1
      withField(tx, 6, new Uint8Array(33).fill(1)), // value over 2^256 - 1
      withField(makeTx('1559Create', 2), 7, new Uint8Array(49_153).fill(1)), // init code over EIP-3860
      withSignature(legacy, Uint8Array.of(29), bigBytes(legacy.r!), bigBytes(legacy.s!)),
      withSignature(legacy, Uint8Array.of(35), bigBytes(legacy.r!), bigBytes(legacy.s!)),
      withSignature(legacy, Uint8Array.of(0, 27), bigBytes(legacy.r!), bigBytes(legacy.s!)),
      withSignature(
        legacy,
        bigBytes(legacy.v!),
        Uint8Array.of(0, ...bigBytes(legacy.r!)),
        bigBytes(legacy.s!),
      ),
    ];
    for (const raw of cases) expect(expectSameVerdict(raw)).not.toBe('accepted');
    // Access lists: wrong lengths, and lists where byte strings belong (which ethereumjs let through).
    const fields = rlpDecode(tx.serialize().subarray(1)) as (Uint8Array | unknown[])[];
    const withAccess = (list: unknown) => {
      const f = [...fields];
      f[8] = list as Uint8Array[];
      return Uint8Array.of(2, ...rlpEncode(f as Uint8Array[]));
    };
    const a20 = new Uint8Array(20).fill(7);
    const k32 = new Uint8Array(32).fill(8);
    expect(expectSameVerdict(withAccess([[a20, [k32]]]))).toBe('accepted');
    for (const bad of [
      [[new Uint8Array(19), [k32]]],
      [[a20, [new Uint8Array(31)]]],
      [[a20]],
      [[a20, [k32], []]],
      [a20],
      [[a20, k32]],
      [[Array.from({ length: 20 }, () => Uint8Array.of(1)), [k32]]],
      [[a20, [Array.from({ length: 32 }, () => Uint8Array.of(1))]]],
    ]) {
      expect(expectSameVerdict(withAccess(bad))).toBe(ExecutionErrorCode.BadTransaction);
    }
  });

  it.each(KINDS)(
    '%s with 40, 300 and 1,000 bytes of data: the same signing hash (list headers of 1 to 3 bytes)',
    (kind) => {
      const tx = makeTx(kind, 14);
      const dataAt = { 0: 5, 1: 6, 2: 7 }[tx.type as 0 | 1 | 2];
      for (const n of [40, 300, 1000]) {
        const data = new Uint8Array(n).map((_, i) => (i * 7 + 1) & 0xff);
        // The signature no longer matches: both recover the same other sender, or refuse alike.
        expect(expectSameVerdict(withField(tx, dataAt, data))).toBe('accepted');
      }
    },
  );

  it('gas limit × fee cap over 2^256 − 1 is refused alike, a fee cap of 24 bytes or more included', () => {
    const tx = makeTx('1559', 9);
    const withFeeAndGas = (fee: bigint, gas: bigint) =>
      rlpEncode(
        (rlpDecode(withField(tx, 3, bigBytes(fee)).subarray(1)) as Uint8Array[]).map((f, i) =>
          i === 4 ? bigBytes(gas) : f,
        ),
      );
    const typed = (body: Uint8Array) => Uint8Array.of(2, ...body);
    const overflowing = [
      [1n << 250n, 21_000n], // 32 bytes
      [1n << 200n, 1n << 60n], // 26 bytes
      [1n << 193n, 1n << 63n], // 25 bytes
    ] as const;
    for (const [fee, gas] of overflowing) {
      const raw = typed(withFeeAndGas(fee, gas));
      expect(expectSameVerdict(raw)).toBe(ExecutionErrorCode.BadTransaction);
      expect(refusal(() => decodeSignedTx(raw, common)).message).toMatch(/MAX_INTEGER/);
    }
    // 24 bytes times the largest gas limit stays below 2^256 (the product is not made): same verdict.
    expectSameVerdict(typed(withFeeAndGas((1n << 192n) - 1n, (1n << 64n) - 1n)));
  });

  it('seeded garbage gets the same verdicts', () => {
    for (let i = 0; i < 500; i++) expectSameVerdict(garbage(i));
  });
});

describe('signatureSpansError (r and s checked as bytes) against signatureValuesError', () => {
  const N = SECP256K1_N;
  const H = SECP256K1_HALF_N;
  const values = [
    0n,
    1n,
    2n,
    255n,
    256n,
    H - 1n,
    H,
    H + 1n,
    N - 1n,
    N,
    N + 1n,
    (1n << 256n) - 1n,
    1n << 256n,
  ];
  /** The value's bytes, with `zeros` leading zero bytes (bytes the check must skip). */
  const encodings = (n: bigint): Uint8Array[] => {
    const b = bigBytes(n);
    return [b, Uint8Array.of(0, ...b), Uint8Array.of(0, 0, 0, ...b)];
  };

  it('gives the same verdict and message on the boundaries of n and n/2, leading zeros included', () => {
    let checked = 0;
    let refused = 0;
    for (const r of values) {
      for (const s of values) {
        const want = signatureValuesError(r, s);
        for (const rb of encodings(r)) {
          for (const sb of encodings(s)) {
            // r and s inside a larger buffer, as they lie in a raw transaction.
            const raw = Uint8Array.of(0xee, ...rb, 0xee, ...sb, 0xee);
            const r0 = 1;
            const s0 = 2 + rb.length;
            expect(signatureSpansError(raw, r0, r0 + rb.length, s0, s0 + sb.length)).toBe(want);
            checked++;
            if (want !== undefined) refused++;
          }
        }
      }
    }
    expect(checked).toBe(values.length ** 2 * 9);
    expect(refused).toBeGreaterThan(checked / 2);
  });

  it('a decoded transaction reads r and s from its bytes, and accepts s = n/2 but not n/2 + 1', () => {
    const tx = makeTx('legacy', 21);
    const ours = decodeSignedTx(tx.serialize(), common);
    expect([ours.r, ours.s]).toEqual([tx.r, tx.s]);
    expect(ours.signatureError()).toBeUndefined();
    const v = bigBytes(tx.v!);
    const atHalf = decodeSignedTx(withSignature(tx, v, bigBytes(tx.r!), bigBytes(H)), common);
    expect(atHalf.s).toBe(H);
    expectRefused(
      withSignature(tx, v, bigBytes(tx.r!), bigBytes(H + 1n)),
      ExecutionErrorCode.BadSignature,
      /at most n\/2/,
    );
  });
});
