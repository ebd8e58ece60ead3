/**
 * Sender recovery against ethereumjs' default (@noble) path and against the signing keys
 * themselves: the native ecrecover plug-in, the synchronous batch, the sender cache, and the
 * worker pool (threads run the real worker code: it is started from a string, see
 * recoveryWorker.ts, so it runs under Jest exactly as from dist/).
 * Keys and fields are derived from keccak of a counter, so runs are deterministic.
 */
import type { Common } from '@ethereumjs/common';
import {
  createAccessList2930Tx,
  createFeeMarket1559Tx,
  createLegacyTx,
  createTxFromRLP,
  type TypedTransaction,
} from '@ethereumjs/tx';
import { ecrecover, privateToAddress, privateToPublic } from '@ethereumjs/util';
import { describe, expect, it, jest } from '@jest/globals';
import { rlpEncode, toHex } from '@monsoon/dsm-tree';
import { evmAddon } from '@monsoon/evm';
import {
  addonRecoverer,
  cacheSenderPublicKey,
  decodeSignedTx,
  decodeTransaction,
  ExecutionError,
  ExecutionErrorCode,
  ecdsaSign,
  makeCommon,
  nativeCustomCrypto,
  nativeEcrecover,
  packageRecoverer,
  REQUEST_BYTES_PER_ITEM,
  type RecoveryItem,
  recoveredSenderKey,
  recoverSenders,
  SECP256K1_N,
  SenderRecoveryPool,
  secp256k1Backend,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import secp256k1 from 'secp256k1';

const CHAIN = 1337n;
const common = makeCommon(CHAIN);

/** Deterministic bytes: keccak256 of (tag, i). */
function det(tag: string, i: number): Uint8Array {
  return keccak.keccak256(new TextEncoder().encode(`${tag}:${i}`));
}

function keyOf(i: number): Uint8Array {
  const key = det('key', i);
  expect(secp256k1.privateKeyVerify(key)).toBe(true);
  return key;
}

function signNative(tx: TypedTransaction, key: Uint8Array): TypedTransaction {
  const { signature, recid } = secp256k1.ecdsaSign(tx.getHashedMessageToSign(), key);
  return tx.addSignature(BigInt(recid), signature.slice(0, 32), signature.slice(32), true);
}

const KINDS = ['legacy', 'pre155', '2930', '1559', '1559Create', 'ethjsSigned'] as const;
type Kind = (typeof KINDS)[number];

/** Transaction `i` of `kind`, signed with keyOf(i) ('ethjsSigned': by ethereumjs' own sign()). */
function makeTx(kind: Kind, i: number, c: Common = common): TypedTransaction {
  const key = keyOf(i);
  const to = det('to', i).slice(0, 20);
  const data = det('data', i).slice(0, i % 33);
  const base = { nonce: BigInt(i), gasLimit: 100_000n, value: BigInt(i), data };
  switch (kind) {
    case 'legacy':
      return signNative(createLegacyTx({ ...base, gasPrice: 10n, to }, { common: c }), key);
    case 'pre155': {
      const fields = { ...base, gasPrice: 10n, to };
      const msg = keccak.keccak256(
        rlpEncode(createLegacyTx(fields, { common: c }).getMessageToSign().slice(0, 6)),
      );
      const { signature, recid } = secp256k1.ecdsaSign(msg, key);
      const v = 27n + BigInt(recid);
      return createLegacyTx(
        { ...fields, v, r: signature.slice(0, 32), s: signature.slice(32) },
        { common: c },
      );
    }
    case '2930':
      return signNative(
        createAccessList2930Tx(
          { ...base, gasPrice: 10n, to, accessList: [{ address: `0x${toHex(to)}`, storageKeys: [] }] },
          { common: c },
        ),
        key,
      );
    case '1559':
      return signNative(createFeeMarket1559Tx({ ...base, maxFeePerGas: 10n, to }, { common: c }), key);
    case '1559Create':
      return signNative(createFeeMarket1559Tx({ ...base, maxFeePerGas: 10n }, { common: c }), key);
    case 'ethjsSigned':
      return i % 2 === 0
        ? createFeeMarket1559Tx({ ...base, maxFeePerGas: 10n, to }, { common: c }).sign(key)
        : createLegacyTx({ ...base, gasPrice: 10n, to }, { common: c }).sign(key);
  }
}

/** `count` transactions cycling through every kind, freshly decoded (nothing cached yet). */
function batch(count: number, offset = 0): { txs: TypedTransaction[]; keys: Uint8Array[] } {
  const txs: TypedTransaction[] = [];
  const keys: Uint8Array[] = [];
  for (let i = offset; i < offset + count; i++) {
    txs.push(decodeTransaction(makeTx(KINDS[i % KINDS.length]!, i).serialize(), common));
    keys.push(keyOf(i));
  }
  return { txs, keys };
}

/** A transaction whose r is not the x of any curve point: recovery finds no key. */
function noPointTx(): TypedTransaction {
  const msg = new Uint8Array(32).fill(7);
  let r = 1n;
  for (;;) {
    const sig = new Uint8Array(64);
    sig.set(Buffer.from(r.toString(16).padStart(64, '0'), 'hex'), 0);
    sig[63] = 1;
    try {
      secp256k1.ecdsaRecover(sig, 0, msg, false);
    } catch {
      break;
    }
    r++;
  }
  return createFeeMarket1559Tx({ maxFeePerGas: 10n, gasLimit: 21_000n, v: 0n, r, s: 1n }, { common });
}

describe('nativeEcrecover', () => {
  it('recovers batches with the revm addon here (the project builds it)', () => {
    expect(secp256k1Backend()).toBe('addon');
  });

  it('equals @ethereumjs/util ecrecover for 100 signatures, with v as 0/1, 27/28 and EIP-155', () => {
    for (let i = 0; i < 100; i++) {
      const msg = det('msg', i);
      const { signature, recid } = secp256k1.ecdsaSign(msg, keyOf(i));
      const r = signature.slice(0, 32);
      const s = signature.slice(32);
      const expected = privateToPublic(keyOf(i));
      const forms: [bigint, bigint | undefined][] = [
        [BigInt(recid), undefined],
        [27n + BigInt(recid), undefined],
        [2n * CHAIN + 35n + BigInt(recid), CHAIN],
        [BigInt(recid), CHAIN],
      ];
      for (const [v, chainId] of forms) {
        expect(nativeEcrecover(msg, v, r, s, chainId)).toEqual(expected);
        expect(ecrecover(msg, v, r, s, chainId)).toEqual(expected);
      }
    }
  });

  it('accepts high s as ethereumjs ecrecover does (the precompile must), and unpadded r', () => {
    const msg = det('msg', 1);
    const { signature, recid } = secp256k1.ecdsaSign(msg, keyOf(1));
    const r = signature.slice(0, 32);
    const s = BigInt(`0x${toHex(signature.slice(32))}`);
    const highS = Uint8Array.from(Buffer.from((SECP256K1_N - s).toString(16).padStart(64, '0'), 'hex'));
    const v = BigInt(1 - recid);
    expect(nativeEcrecover(msg, v, r, highS)).toEqual(privateToPublic(keyOf(1)));
    expect(ecrecover(msg, v, r, highS)).toEqual(privateToPublic(keyOf(1)));
    // ethereumjs passes r and s without leading zeros: find a signature whose r has one.
    for (let i = 0; ; i++) {
      const m = det('lead', i);
      const sig = secp256k1.ecdsaSign(m, keyOf(1));
      if (sig.signature[0] !== 0) continue;
      const unpadded = sig.signature.slice(1, 32);
      const sPart = sig.signature.slice(32);
      expect(nativeEcrecover(m, BigInt(sig.recid), unpadded, sPart)).toEqual(privateToPublic(keyOf(1)));
      expect(ecrecover(m, BigInt(sig.recid), unpadded, sPart)).toEqual(privateToPublic(keyOf(1)));
      break;
    }
  });

  it('throws BadSignature where ethereumjs throws: bad v, zero or overflowing r, over-long s', () => {
    const msg = det('msg', 2);
    const { signature } = secp256k1.ecdsaSign(msg, keyOf(2));
    const r = signature.slice(0, 32);
    const s = signature.slice(32);
    const nBytes = Buffer.from(SECP256K1_N.toString(16), 'hex');
    const cases: [bigint, Uint8Array, Uint8Array, bigint | undefined][] = [
      [29n, r, s, undefined],
      [2n, r, s, CHAIN],
      [2n * CHAIN + 37n, r, s, CHAIN],
      [0n, new Uint8Array(32), s, undefined],
      [0n, nBytes, s, undefined],
      [0n, r, new Uint8Array(33), undefined],
    ];
    for (const [v, rr, ss, chainId] of cases) {
      expect(() => ecrecover(msg, v, rr, ss, chainId)).toThrow();
      let e: unknown;
      try {
        nativeEcrecover(msg, v, rr, ss, chainId);
      } catch (x) {
        e = x;
      }
      expect(e).toBeInstanceOf(ExecutionError);
      expect((e as ExecutionError).code).toBe(ExecutionErrorCode.BadSignature);
    }
  });

  it('plugged into Common, ethereumjs recovers through it (and gets the same sender)', () => {
    let calls = 0;
    const counting = makeCommon(CHAIN, {
      ...nativeCustomCrypto,
      ecrecover: (...args: Parameters<typeof nativeEcrecover>) => {
        calls++;
        return nativeEcrecover(...args);
      },
    });
    for (const kind of KINDS) {
      const raw = makeTx(kind, 3).serialize();
      const tx = decodeTransaction(raw, counting);
      expect(tx.getSenderAddress().bytes).toEqual(privateToAddress(keyOf(3)));
    }
    expect(calls).toBe(KINDS.length);
  });
});

describe('packed batch recoverers', () => {
  const addon = evmAddon();
  if (addon === undefined) throw new Error('the revm addon is not built (npm run build)');
  const fromAddon = addonRecoverer(addon);
  const fromPackage = packageRecoverer(secp256k1);

  /** A request of `sigs` (hash, r‖s, recovery id) in recoveryWorker.ts's layout. */
  function request(sigs: readonly { hash: Uint8Array; sig: Uint8Array; recid: number }[]): Uint8Array {
    const m = sigs.length;
    const out = new Uint8Array(m * REQUEST_BYTES_PER_ITEM);
    sigs.forEach(({ hash, sig, recid }, i) => {
      out.set(hash, 32 * i);
      out.set(sig, 32 * m + 64 * i);
      out[96 * m + i] = recid;
    });
    return out;
  }

  const word = (v: bigint): Uint8Array => Buffer.from(v.toString(16).padStart(64, '0'), 'hex');

  it('the addon answers byte for byte as the package: 200 good signatures and every kind of bad one', () => {
    const sigs: { hash: Uint8Array; sig: Uint8Array; recid: number }[] = [];
    for (let i = 0; i < 200; i++) {
      const hash = det('batch', i);
      const { signature, recid } = secp256k1.ecdsaSign(hash, keyOf(i));
      sigs.push({ hash, sig: signature, recid });
    }
    const good = sigs[0]!;
    const [r, s] = [good.sig.slice(0, 32), good.sig.slice(32)];
    const highS = word(SECP256K1_N - BigInt(`0x${Buffer.from(s).toString('hex')}`));
    const bad = [
      { ...good, recid: 2 }, // recovery id out of range
      { ...good, recid: 0xff },
      { ...good, sig: Buffer.concat([new Uint8Array(32), s]) }, // r = 0
      { ...good, sig: Buffer.concat([r, new Uint8Array(32)]) }, // s = 0
      { ...good, sig: Buffer.concat([word(SECP256K1_N), s]) }, // r = n
      { ...good, sig: Buffer.concat([r, word(SECP256K1_N + 1n)]) }, // s > n
      { ...good, sig: Buffer.concat([r, highS]), recid: good.recid ^ 1 }, // high s: recovers
      { ...good, hash: det('other message', 0) }, // recovers, to another key
    ];
    const all = [...bad, ...sigs];
    const req = request(all);
    const a = fromAddon(req, all.length);
    const p = fromPackage(req, all.length);
    expect(Buffer.from(a).equals(Buffer.from(p))).toBe(true);
    const status = a.subarray(64 * all.length);
    expect([...status.subarray(0, bad.length)]).toEqual([0, 0, 0, 0, 0, 0, 1, 1]);
    expect(status.subarray(bad.length).every((b) => b === 1)).toBe(true);
    for (let i = 0; i < 200; i++) {
      const key = a.subarray(64 * (bad.length + i), 64 * (bad.length + i + 1));
      expect(toHex(key)).toBe(toHex(privateToPublic(keyOf(i))));
    }
  });

  it('ecdsaSign signs as the package does (RFC 6979, low s) and refuses a bad key', () => {
    for (let i = 0; i < 200; i++) {
      const hash = det('sign', i);
      const ours = ecdsaSign(hash, keyOf(i));
      const theirs = secp256k1.ecdsaSign(hash, keyOf(i));
      expect(toHex(ours.signature)).toBe(toHex(theirs.signature));
      expect(ours.recid).toBe(theirs.recid);
    }
    expect(() => ecdsaSign(det('sign', 0), new Uint8Array(32))).toThrow(/zero or not below the curve order/);
    expect(() => ecdsaSign(det('sign', 0).subarray(1), keyOf(0))).toThrow(/32 bytes, found 31/);
  });

  it('the addon refuses a request or answer of the wrong size', () => {
    expect(() => addon.recoverPacked(new Uint8Array(96), 1, new Uint8Array(65))).toThrow(
      /97 bytes, found 96/,
    );
    expect(() => addon.recoverPacked(new Uint8Array(97), 1, new Uint8Array(64))).toThrow(
      /65 bytes, found 64/,
    );
    expect(fromAddon(new Uint8Array(0), 0)).toEqual(new Uint8Array(0));
  });
});

describe('recoverSenders', () => {
  it('300 keys × every kind: equals ethereumjs getSenderAddress() (noble) and the signing key', () => {
    const { txs, keys } = batch(300);
    const senders = recoverSenders(txs);
    expect(senders).toHaveLength(300);
    for (let i = 0; i < 300; i++) {
      const reference = createTxFromRLP(txs[i]!.serialize(), { common: makeCommon(CHAIN) });
      expect(senders[i]).toEqual(reference.getSenderAddress().bytes);
      expect(senders[i]).toEqual(privateToAddress(keys[i]!));
    }
  });

  it('caches each public key where ethereumjs looks for it, so execution does not recover again', () => {
    const { txs, keys } = batch(12);
    for (const tx of txs) expect(tx.cache.senderPubKey).toBeUndefined();
    recoverSenders(txs);
    for (let i = 0; i < txs.length; i++) {
      expect(txs[i]!.cache.senderPubKey).toEqual(privateToPublic(keys[i]!));
      expect(txs[i]!.getSenderAddress().bytes).toEqual(privateToAddress(keys[i]!));
    }
    // ethereumjs trusts the cache: a key cached by cacheSenderPublicKey is what it answers with.
    const other = privateToPublic(keyOf(999));
    expect(cacheSenderPublicKey(txs[0]!, other)).toBe(true);
    expect(txs[0]!.getSenderAddress().bytes).toEqual(privateToAddress(keyOf(999)));
    // Like ethereumjs, nothing is cached on a transaction that is not frozen.
    const unfrozen = createTxFromRLP(txs[1]!.serialize(), { common, freeze: false });
    expect(cacheSenderPublicKey(unfrozen, other)).toBe(false);
    expect(unfrozen.cache.senderPubKey).toBeUndefined();
    expect(() => cacheSenderPublicKey(txs[2]!, new Uint8Array(65))).toThrow(RangeError);
  });

  it('a bad signature gives a BadSignature error in its slot only', () => {
    const { txs, keys } = batch(10);
    const good = makeTx('legacy', 50);
    const v = good.v!;
    const fields = {
      nonce: good.nonce,
      gasPrice: 10n,
      gasLimit: good.gasLimit,
      to: good.to,
      value: good.value,
      data: good.data,
    };
    expect(createLegacyTx({ ...fields, v, r: good.r, s: good.s }, { common }).serialize()).toEqual(
      good.serialize(),
    );
    const flippedV = v % 2n === 1n ? v + 1n : v - 1n;
    const highS = createLegacyTx({ ...fields, v: flippedV, r: good.r, s: SECP256K1_N - good.s! }, { common });
    const unsigned = createLegacyTx({ gasPrice: 1n, gasLimit: 21_000n }, { common });
    const wrongV = createLegacyTx(
      { ...fields, v: v % 2n === 1n ? 27n : 28n, r: good.r, s: good.s },
      { common },
    );
    const bad = [highS, unsigned, noPointTx(), wrongV];
    const mixed = [...txs.slice(0, 3), ...bad, ...txs.slice(3)];
    const out = recoverSenders(mixed);
    const messages = [/at most n\/2/, /not signed/, /does not recover/, null];
    for (let j = 0; j < bad.length; j++) {
      const slot = out[3 + j];
      if (messages[j] === null) {
        // A valid signature over a different message (v 27/28: pre-155 hashing) is another sender.
        expect(slot).toBeInstanceOf(Uint8Array);
        expect(slot).not.toEqual(privateToAddress(keyOf(50)));
        continue;
      }
      expect(slot).toBeInstanceOf(ExecutionError);
      expect((slot as ExecutionError).code).toBe(ExecutionErrorCode.BadSignature);
      expect((slot as ExecutionError).message).toMatch(messages[j]!);
      expect((slot as ExecutionError).meta).toEqual({ index: 3 + j });
    }
    const goods = [...out.slice(0, 3), ...out.slice(3 + bad.length)];
    expect(goods).toEqual(keys.map((k) => privateToAddress(k)));
    expect(recoverSenders([])).toEqual([]);
  });

  it('claimed keys change no answer: right, wrong, swapped, zeros, with refusals among them', () => {
    const { txs, keys } = batch(40, 500);
    // An unsigned transaction (refused before recovery: the claims must skip its slot) and one
    // whose r has no point (recovered, and refused there).
    const unsigned = createLegacyTx({ gasPrice: 1n, gasLimit: 21_000n }, { common });
    const mixed = [...txs.slice(0, 10), unsigned, ...txs.slice(10, 19), noPointTx(), ...txs.slice(19)];
    const truth = recoverSenders(mixed.map((t) => createTxFromRLP(t.serialize(), { common })));
    expect(truth[10]).toBeInstanceOf(ExecutionError);
    expect(truth[20]).toBeInstanceOf(ExecutionError);
    const pack = (pick: (i: number) => Uint8Array): Uint8Array => {
      const out = new Uint8Array(64 * mixed.length);
      for (let i = 0; i < mixed.length; i++) out.set(pick(i), 64 * i);
      return out;
    };
    const trueKey = (i: number) =>
      i === 10 || i === 20 ? new Uint8Array(64) : privateToPublic(keys[i < 10 ? i : i < 20 ? i - 1 : i - 2]!);
    const claims = {
      right: pack(trueKey),
      swapped: pack((i) => trueKey(i === 3 ? 4 : i === 4 ? 3 : i)),
      'one flipped': pack((i) => (i === 30 ? trueKey(i).map((b, j) => (j === 10 ? b ^ 1 : b)) : trueKey(i))),
      zeros: new Uint8Array(64 * mixed.length),
    };
    for (const [name, claim] of Object.entries(claims)) {
      const copies = mixed.map((t) => createTxFromRLP(t.serialize(), { common }));
      expect([name, recoverSenders(copies, claim)]).toEqual([name, truth]);
      // And the key cached for execution is the signer's, not the claim.
      expect(copies[3]!.cache.senderPubKey).toEqual(privateToPublic(keys[3]!));
    }
    // Without refusals (every claim is a batch item) and all right: the batch passes.
    const clean = txs.map((t) => createTxFromRLP(t.serialize(), { common }));
    const cleanClaims = new Uint8Array(64 * txs.length);
    for (const [i, k] of keys.entries()) cleanClaims.set(privateToPublic(k), 64 * i);
    expect(recoverSenders(clean, cleanClaims)).toEqual(keys.map((k) => privateToAddress(k)));
    expect(() => recoverSenders(mixed, new Uint8Array(64 * mixed.length - 1))).toThrow(RangeError);
  });

  it('right claims around a refused transaction reach the addon aligned: its one batch check passes', () => {
    const addon = evmAddon()!;
    const { txs, keys } = batch(30, 700);
    const unsigned = createLegacyTx({ gasPrice: 1n, gasLimit: 21_000n }, { common });
    const mixed = [...txs.slice(0, 12), unsigned, ...txs.slice(12)];
    const claims = new Uint8Array(64 * mixed.length);
    mixed.forEach((_t, i) => {
      if (i !== 12) claims.set(privateToPublic(keys[i < 12 ? i : i - 1]!), 64 * i);
    });
    const checks: boolean[] = [];
    const spy = jest.spyOn(addon, 'recoverPackedWithKeys').mockImplementation((request, count, out) => {
      checks.push(addon.batchVerifyPacked(request, count, new Uint8Array(16 * count).fill(7), 0));
      addon.recoverPacked(request.subarray(0, 97 * count), count, out);
    });
    try {
      const out = recoverSenders(mixed, claims);
      expect(out[12]).toBeInstanceOf(ExecutionError);
      expect(checks).toEqual([true]);
    } finally {
      spy.mockRestore();
    }
  });

  it("keeps a SignedTx's recovered key for recoveredSenderKey (what a client sends its miner)", () => {
    const raws = [makeTx('1559', 7).serialize(), makeTx('legacy', 8).serialize()];
    const decoded = raws.map((r) => decodeSignedTx(r, common));
    expect(recoveredSenderKey(decoded[0]!)).toBeUndefined();
    recoverSenders(decoded);
    expect(recoveredSenderKey(decoded[0]!)).toEqual(privateToPublic(keyOf(7)));
    expect(recoveredSenderKey(decoded[1]!)).toEqual(privateToPublic(keyOf(8)));
    // Not kept when asked not to (a miner), nor by the pool.
    const again = raws.map((r) => decodeSignedTx(r, common));
    recoverSenders(again, undefined, false);
    expect(recoveredSenderKey(again[0]!)).toBeUndefined();
  });
});

describe('SenderRecoveryPool', () => {
  it.each([0, 1, 2])(
    'threads = %i: recoverSenders gives what the synchronous batch gives',
    async (threads) => {
      const pool = await SenderRecoveryPool.create({ threads, minItemsPerMessage: 8 });
      try {
        expect(pool.threads).toBe(threads);
        const { txs } = batch(120, 1000);
        const mixed = [...txs.slice(0, 50), noPointTx(), ...txs.slice(50)];
        const fromPool = await pool.recoverSenders(mixed);
        const copies = mixed.map((t) => createTxFromRLP(t.serialize(), { common }));
        const sync = recoverSenders(copies);
        expect(fromPool).toEqual(sync);
        expect((fromPool[50] as ExecutionError).code).toBe(ExecutionErrorCode.BadSignature);
        for (let i = 0; i < mixed.length; i++) {
          if (i !== 50) expect(mixed[i]!.cache.senderPubKey).toEqual(copies[i]!.cache.senderPubKey);
        }
        expect(await pool.recoverSenders([])).toEqual([]);
        // With claimed keys, right or one wrong: the same answers.
        const right = new Uint8Array(64 * mixed.length);
        mixed.forEach((_t, i) => {
          if (i !== 50) right.set(privateToPublic(keyOf(1000 + (i < 50 ? i : i - 1))), 64 * i);
        });
        const wrong = right.slice();
        wrong[64 * 7 + 3]! ^= 0x20;
        for (const claims of [right, wrong]) {
          const again = mixed.map((t) => createTxFromRLP(t.serialize(), { common }));
          expect(await pool.recoverSenders(again, claims)).toEqual(sync);
        }
      } finally {
        await pool.close();
      }
    },
  );

  it('recover(items): addresses, undefined where nothing recovers, concurrent batches kept apart', async () => {
    const pool = await SenderRecoveryPool.create({ threads: 2, minItemsPerMessage: 4 });
    try {
      const items: RecoveryItem[] = [];
      const expected: (Uint8Array | undefined)[] = [];
      for (let i = 0; i < 40; i++) {
        const msgHash = det('msg', i);
        const { signature, recid } = secp256k1.ecdsaSign(msgHash, keyOf(i));
        items.push({ msgHash, sig64: signature, recid });
        expected.push(privateToAddress(keyOf(i)));
      }
      items[5] = { ...items[5]!, recid: 2 };
      expected[5] = undefined;
      items[6] = { ...items[6]!, sig64: new Uint8Array(64) };
      expected[6] = undefined;
      const [a, b, c] = await Promise.all([
        pool.recover(items),
        pool.recover(items.slice(10, 13)),
        pool.recover(items.slice(20)),
      ]);
      expect(a).toEqual(expected);
      expect(b).toEqual(expected.slice(10, 13));
      expect(c).toEqual(expected.slice(20));
      await expect(
        pool.recover([{ msgHash: new Uint8Array(31), sig64: new Uint8Array(64), recid: 0 }]),
      ).rejects.toThrow(/msgHash must be 32 bytes, found 31/);
      await expect(
        pool.recover([{ msgHash: new Uint8Array(32), sig64: new Uint8Array(65), recid: 0 }]),
      ).rejects.toThrow(RangeError);
    } finally {
      await pool.close();
    }
  });

  it('close(): batches in flight reject, later calls reject, closing twice is fine', async () => {
    const pool = await SenderRecoveryPool.create({ threads: 1 });
    const { txs } = batch(40, 2000);
    const inFlight = expect(pool.recoverSenders(txs)).rejects.toThrow(
      /closed while this batch was in flight/,
    );
    await pool.close();
    await inFlight;
    await expect(pool.recoverSenders(txs)).rejects.toThrow(/is closed/);
    await pool.close();
  });

  it('a worker that dies fails the batches in flight and every later call, with why', async () => {
    const pool = await SenderRecoveryPool.create({ threads: 2, minItemsPerMessage: 1 });
    try {
      // Reach in to kill one worker as a crash would (terminate() makes it exit with code 1).
      const { workers } = pool as unknown as { workers: { worker: { terminate(): Promise<number> } }[] };
      const { txs } = batch(20, 3000);
      // Stopped before the batch is sent, so worker 0 cannot answer its part.
      const dying = workers[0]!.worker.terminate();
      const inFlight = expect(pool.recoverSenders(txs)).rejects.toThrow(/exited unexpectedly with code 1/);
      await dying;
      await inFlight;
      await expect(pool.recoverSenders(txs)).rejects.toThrow(
        /has failed: recovery worker exited unexpectedly/,
      );
    } finally {
      await pool.close();
    }
  });

  it('refuses bad options', async () => {
    await expect(SenderRecoveryPool.create({ threads: -1 })).rejects.toThrow(RangeError);
    await expect(SenderRecoveryPool.create({ threads: 1.5 })).rejects.toThrow(/non-negative integer/);
    await expect(SenderRecoveryPool.create({ threads: 0, minItemsPerMessage: 0 })).rejects.toThrow(
      /positive integer/,
    );
  });
});
