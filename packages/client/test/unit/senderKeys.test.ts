/**
 * SendTransactions with its signers' public keys (a load generator knows them): the client checks
 * the call's signatures against them in one batch instead of recovering each, and must decide
 * exactly what it decides without them. True, missing, swapped, flipped, zero or another sender's
 * keys give the same senders and the same refusals; the key the client keeps for its Submit to a
 * miner is the one the signature recovers to, never a claimed one; a bad signature among good
 * ones is refused alone; keys of the wrong length are a caller's bug. And the batch check is
 * given each decodable transaction's own key (one that does not decode, or whose r or s is out of
 * range, takes no slot), so true keys are never wasted on the one-by-one fallback.
 */
import { createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import { bigIntToUnpaddedBytes, privateToAddress, privateToPublic } from '@ethereumjs/util';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { decodeWithSenders, MIN_CLAIMED_KEYS_BATCH } from '@monsoon/client';
import { evmAddon } from '@monsoon/evm';
import { makeCommon, nativeEcrecover, recoveredSenderKey } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';

const common = makeCommon(1337n);
const keys = [1, 2, 3, 4].map((i) => keccak.keccak256(Uint8Array.of(0x17, i)));
const pubs = keys.map((k) => privateToPublic(k));
const to = new Uint8Array(20).fill(0x42);

function signed(key: Uint8Array, nonce: bigint): Uint8Array {
  return createFeeMarket1559Tx(
    { nonce, to, value: 1n, gasLimit: 21_000n, maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1n },
    { common },
  )
    .sign(key)
    .serialize();
}

/** A legacy transaction whose r is in range but is the x of no curve point: only the curve says no. */
function noPointSignature(): Uint8Array {
  for (let r = 1n; ; r++) {
    const tx = createLegacyTx(
      { nonce: 0n, to, value: 1n, gasLimit: 21_000n, gasPrice: 1n, v: 2709n, r, s: 1n },
      { common },
    );
    try {
      nativeEcrecover(
        tx.getMessageToVerifySignature(),
        2709n,
        bigIntToUnpaddedBytes(r),
        bigIntToUnpaddedBytes(1n),
        1337n,
      );
    } catch {
      return tx.serialize();
    }
  }
}

// Senders 0, 1, 2, then each again twice; a few bytes that do not decode; a signature that
// recovers nothing. Nine decode: enough for the batch check (MIN_CLAIMED_KEYS_BATCH).
const raws = [
  signed(keys[0]!, 0n),
  Uint8Array.of(0xc0),
  signed(keys[1]!, 0n),
  noPointSignature(),
  signed(keys[2]!, 0n),
  signed(keys[0]!, 1n),
  signed(keys[1]!, 1n),
  signed(keys[2]!, 1n),
  signed(keys[0]!, 2n),
  signed(keys[1]!, 2n),
  // r = 0: refused before any curve arithmetic, so it takes no slot in the batch either.
  createLegacyTx(
    { nonce: 0n, to, value: 1n, gasLimit: 21_000n, gasPrice: 1n, v: 2709n, r: 0n, s: 1n },
    { common },
  ).serialize(),
  signed(keys[2]!, 2n),
];
const signers = [0, -1, 1, -1, 2, 0, 1, 2, 0, 1, -1, 2];

/** Claimed keys for `raws`: signer i's key where `pick(i)` names one, zeros elsewhere. */
function claim(pick: (i: number) => Uint8Array | undefined): Uint8Array {
  const out = new Uint8Array(64 * raws.length);
  for (let i = 0; i < raws.length; i++) {
    const k = pick(i);
    if (k !== undefined) out.set(k, 64 * i);
  }
  return out;
}
const trueKeys = claim((i) => pubs[signers[i]!]);

/** What a decode decided, comparable: each sender's address, or the refusal's message. */
function decisions(senderKeys?: Uint8Array): string[] {
  return decodeWithSenders(raws, common, senderKeys).map((d) =>
    d instanceof Error ? `refused: ${d.message}` : Buffer.from(d.from).toString('hex'),
  );
}

const without = decisions();

afterEach(() => {
  jest.restoreAllMocks();
});

describe('decodeWithSenders with claimed sender keys', () => {
  it('without keys: the signers, and each bad transaction refused in its own place', () => {
    expect(without).toHaveLength(raws.length);
    for (let i = 0; i < raws.length; i++) {
      if (signers[i]! < 0) expect(without[i]).toMatch(/^refused: /);
      else expect(without[i]).toBe(Buffer.from(privateToAddress(keys[signers[i]!]!)).toString('hex'));
    }
    expect(without[3]).toMatch(/does not recover/);
    expect(without[10]).toMatch(/^refused: /);
  });

  const cases: [string, Uint8Array][] = [
    ['true keys', trueKeys],
    ['zero keys', new Uint8Array(64 * raws.length)],
    [
      'swapped keys (first and third transaction)',
      claim((i) => pubs[i === 0 ? 1 : i === 2 ? 0 : signers[i]!]),
    ],
    [
      'a flipped bit in one key',
      (() => {
        const k = Uint8Array.from(trueKeys);
        k[64 * 2 + 17]! ^= 0x04;
        return k;
      })(),
    ],
    ['another sender’s key for every transaction', claim(() => pubs[3])],
    ['true keys but for the bad signature, given a real one', claim((i) => pubs[i === 3 ? 3 : signers[i]!])],
  ];
  it.each(cases)('%s: the same senders and refusals as without keys', (_name, claimed) => {
    expect(decisions(claimed)).toEqual(without);
  });

  it.each(cases)('%s: the key kept for the miner is the one the signature recovers to', (_name, claimed) => {
    const out = decodeWithSenders(raws, common, claimed);
    for (let i = 0; i < raws.length; i++) {
      const d = out[i]!;
      if (d instanceof Error) continue;
      expect(Buffer.from(recoveredSenderKey(d.tx)!)).toEqual(Buffer.from(pubs[signers[i]!]!));
    }
  });

  it('checks the decodable transactions against their own keys, in order, in one batch', () => {
    const addon = evmAddon();
    if (addon?.recoverPackedWithKeys === undefined) return; // no batch verifier built: nothing to check
    const claimedSeen: Buffer[] = [];
    const spy = jest.spyOn(addon, 'recoverPackedWithKeys').mockImplementation(function (
      this: unknown,
      request: Uint8Array,
      count: number,
      out: Uint8Array,
    ) {
      claimedSeen.push(Buffer.from(request.subarray(97 * count, 161 * count)));
      spy.mockRestore();
      addon.recoverPackedWithKeys!(request, count, out);
    });
    expect(decisions(trueKeys)).toEqual(without);
    // All but transaction 1 decode; 10's r = 0 is refused before the batch; 3's signature is
    // refused by the curve, in the batch.
    const decodable = [0, 2, 3, 4, 5, 6, 7, 8, 9, 11];
    expect(decodable.length).toBeGreaterThanOrEqual(MIN_CLAIMED_KEYS_BATCH);
    expect(claimedSeen).toEqual([
      Buffer.from(decodable.flatMap((i) => [...trueKeys.subarray(64 * i, 64 * i + 64)])),
    ]);
  });

  it('recovers a call of fewer than MIN_CLAIMED_KEYS_BATCH one by one, whatever keys it claims', () => {
    const addon = evmAddon();
    if (addon?.recoverPackedWithKeys === undefined) return;
    const spy = jest.spyOn(addon, 'recoverPackedWithKeys');
    const few = raws.slice(0, MIN_CLAIMED_KEYS_BATCH); // one does not decode: one short
    const out = decodeWithSenders(few, common, trueKeys.subarray(0, 64 * few.length));
    expect(spy).not.toHaveBeenCalled();
    expect(
      out.map((d) => (d instanceof Error ? `refused: ${d.message}` : Buffer.from(d.from).toString('hex'))),
    ).toEqual(without.slice(0, few.length));
  });

  it('recovers as before when no keys are given (no batch check)', () => {
    const addon = evmAddon();
    if (addon?.recoverPackedWithKeys === undefined) return;
    const spy = jest.spyOn(addon, 'recoverPackedWithKeys');
    expect(decisions()).toEqual(without);
    expect(spy).not.toHaveBeenCalled();
  });

  it('throws RangeError for keys that are not 64 bytes a transaction', () => {
    for (const length of [0, 64, 64 * raws.length - 1, 64 * raws.length + 64])
      expect(() => decodeWithSenders(raws, common, new Uint8Array(length))).toThrow(RangeError);
  });
});
