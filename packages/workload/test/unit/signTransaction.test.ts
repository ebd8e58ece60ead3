/** The direct transaction encoding against @ethereumjs/tx, byte for byte (RLP itself is tested in @monsoon/util). */

import { Capability, createTxFromRLP } from '@ethereumjs/tx';
import { describe, expect, it } from '@jest/globals';
import { makeCommon } from '@monsoon/execution';
import { toHex as hex } from '@monsoon/util';
import {
  deriveAccount,
  Prng,
  signingHash,
  signTransaction,
  signTransactionWithEthereumjs,
  type TxFields,
  WorkloadErrorCode,
} from '@monsoon/workload';
import { nativeCommon } from '../helpers/evm.js';

const SEED = new TextEncoder().encode('sign test');

/** Random fields covering zero values, 1-byte values below 0x80, and data across the 55-byte RLP boundary. */
function randomFields(r: Prng, chainId: bigint): TxFields {
  const pick = (choices: bigint[]): bigint => choices[r.nextInt(choices.length)]!;
  const q = (): bigint =>
    pick([0n, 1n, 0x7fn, 0x80n, 0xffn, 256n, r.nextBigInt(0n, 2n ** 64n - 1n), r.nextBigInt(0n, 2n ** 200n)]);
  const dataLength = [0, 1, 55, 56, 68, 300][r.nextInt(6)]!;
  const data = Uint8Array.from({ length: dataLength }, () => r.nextInt(256));
  if (dataLength === 1) data[0] = r.nextInt(2) === 0 ? 0x05 : 0x90;
  const base = {
    chainId,
    nonce: pick([0n, 1n, 127n, 128n, r.nextBigInt(0n, 2n ** 63n)]),
    gasLimit: pick([21_000n, 100_000n, 30_000_000n]),
    to: Uint8Array.from({ length: 20 }, () => r.nextInt(256)),
    value: q(),
    data,
  };
  if (r.nextInt(2) === 0) {
    const tip = pick([0n, 1n, 1_000_000_000n, r.nextBigInt(0n, 2n ** 60n)]);
    return {
      ...base,
      type: 'eip1559',
      maxPriorityFeePerGas: tip,
      maxFeePerGas: tip + pick([0n, 1n, 10n ** 9n]),
    };
  }
  return { ...base, type: 'legacy', gasPrice: pick([0n, 1n, 2_000_000_000n, r.nextBigInt(0n, 2n ** 60n)]) };
}

describe('signTransaction', () => {
  it('gives the bytes, hash and signing hash of @ethereumjs/tx for random fields', () => {
    const r = new Prng(new TextEncoder().encode('fields'));
    for (const chainId of [1n, 1337n, 2n ** 40n + 3n]) {
      const common = makeCommon(chainId);
      for (let k = 0; k < 60; k++) {
        const fields = randomFields(r, chainId);
        const { privateKey, address } = deriveAccount(SEED, k);
        const direct = signTransaction(fields, privateKey);
        const reference = signTransactionWithEthereumjs(fields, privateKey, common);
        expect(hex(direct.raw)).toBe(hex(reference.raw));
        expect(hex(direct.hash)).toBe(hex(reference.hash));

        const tx = createTxFromRLP(direct.raw, { common });
        expect(hex(tx.getHashedMessageToSign())).toBe(hex(signingHash(fields)));
        expect(hex(tx.getSenderAddress().bytes)).toBe(hex(address));
        expect(tx.verifySignature()).toBe(true);
        expect(tx.nonce).toBe(fields.nonce);
        expect(tx.value).toBe(fields.value);
        expect(hex(tx.data)).toBe(hex(fields.data));
      }
    }
  });

  it('makes legacy transactions replay-protected by EIP-155 for the chain id', () => {
    for (const chainId of [1337n, 99_999n]) {
      const common = nativeCommon(chainId);
      const vs = new Set<bigint>();
      for (let k = 0; k < 20; k++) {
        const { privateKey, address } = deriveAccount(SEED, k);
        const fields: TxFields = {
          type: 'legacy',
          chainId,
          nonce: BigInt(k),
          gasLimit: 21_000n,
          gasPrice: 2_000_000_000n,
          to: new Uint8Array(20).fill(1),
          value: 1n,
          data: new Uint8Array(0),
        };
        const tx = createTxFromRLP(signTransaction(fields, privateKey).raw, { common });
        expect(tx.type).toBe(0);
        expect(tx.v === 35n + 2n * chainId || tx.v === 36n + 2n * chainId).toBe(true);
        expect(tx.supports(Capability.EIP155ReplayProtection)).toBe(true);
        expect(hex(tx.getSenderAddress().bytes)).toBe(hex(address));
        vs.add(tx.v!);
      }
      expect(vs.size).toBe(2); // both y-parities occur in 20 signatures
      // Parsed for another chain, the same bytes are refused.
      const other = signTransaction(
        {
          type: 'legacy',
          chainId,
          nonce: 0n,
          gasLimit: 21_000n,
          gasPrice: 1n,
          to: new Uint8Array(20),
          value: 0n,
          data: new Uint8Array(0),
        },
        deriveAccount(SEED, 0).privateKey,
      );
      expect(() => createTxFromRLP(other.raw, { common: nativeCommon(chainId + 1n) })).toThrow();
    }
  });

  it('refuses a recipient that is not 20 bytes and a Common for another chain', () => {
    const fields: TxFields = {
      type: 'eip1559',
      chainId: 1337n,
      nonce: 0n,
      gasLimit: 21_000n,
      maxFeePerGas: 2n,
      maxPriorityFeePerGas: 1n,
      to: new Uint8Array(19),
      value: 0n,
      data: new Uint8Array(0),
    };
    const key = deriveAccount(SEED, 0).privateKey;
    expect(() => signTransaction(fields, key)).toThrow(
      expect.objectContaining({ code: WorkloadErrorCode.BadOptions }),
    );
    expect(() =>
      signTransactionWithEthereumjs({ ...fields, to: new Uint8Array(20) }, key, makeCommon(1n)),
    ).toThrow(expect.objectContaining({ code: WorkloadErrorCode.BadOptions }));
  });
});
