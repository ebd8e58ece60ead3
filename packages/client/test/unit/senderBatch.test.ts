/**
 * What the bulk path saves must not change what it decides: senders recovered for a whole
 * SendTransactions call in one batch come back in request order, each the one a transaction
 * alone gives, with a malformed or unrecoverable transaction's error in its own place; and a
 * pre-execution picks the engine it needs from the transaction (none built for what can only be a
 * plain transfer).
 */
import { createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { decodeWithSender, decodeWithSenders, engineOf } from '@monsoon/client';
import { decodeSignedTx, defaultChainRules, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';

const rules = { ...defaultChainRules, chainId: 1337n };
const common = makeCommon(rules.chainId);
const keys = [1, 2, 3].map((i) => keccak.keccak256(Uint8Array.of(0x5e, i)));
const to = new Uint8Array(20).fill(0x42);

function signed(key: Uint8Array, nonce: bigint, data = new Uint8Array(0)): Uint8Array {
  return createFeeMarket1559Tx(
    { nonce, to, value: 1n, data, gasLimit: 60_000n, maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1n },
    { common },
  )
    .sign(key)
    .serialize();
}

describe('decodeWithSenders', () => {
  it('recovers a batch in request order, with each bad transaction refused in its own place', () => {
    const good = keys.map((k, i) => signed(k, BigInt(i)));
    // A signature whose r is zero recovers nothing; a few bytes decode to nothing.
    const unsigned = createLegacyTx(
      { nonce: 0n, to, value: 1n, gasLimit: 21_000n, gasPrice: 1n, v: 2709n, r: 0n, s: 1n },
      { common },
    ).serialize();
    const raws = [good[0]!, Uint8Array.of(0xc0), good[1]!, unsigned, good[2]!];
    const out = decodeWithSenders(raws, common);
    expect(out).toHaveLength(5);
    expect(out[1]).toBeInstanceOf(Error);
    expect(out[3]).toBeInstanceOf(Error);
    for (const [i, k] of [
      [0, 0],
      [2, 1],
      [4, 2],
    ] as const) {
      const r = out[i] as Exclude<(typeof out)[number], Error>;
      expect(Buffer.from(r.from)).toEqual(Buffer.from(privateToAddress(keys[k]!)));
      expect(Buffer.from(r.tx.hash)).toEqual(Buffer.from(keccak.keccak256(raws[i]!)));
      expect(r.from).toEqual(decodeWithSender(raws[i]!, common).from);
    }
    expect(() => decodeWithSender(raws[3]!, common)).toThrow((out[3] as Error).message);
  });
});

describe('engineOf', () => {
  it('builds no engine for what can only be a plain transfer, revm (the default) for the rest', () => {
    expect(engineOf(decodeSignedTx(signed(keys[0]!, 0n), common))).toBe('ethereumjs');
    expect(engineOf(decodeSignedTx(signed(keys[0]!, 0n, Uint8Array.of(1)), common))).toBeUndefined();
    const creation = createFeeMarket1559Tx(
      { nonce: 0n, data: Uint8Array.of(0), gasLimit: 60_000n, maxFeePerGas: 3_000_000_000n },
      { common },
    )
      .sign(keys[0]!)
      .serialize();
    expect(engineOf(decodeSignedTx(creation, common))).toBeUndefined();
    const withList = createFeeMarket1559Tx(
      {
        nonce: 0n,
        to,
        value: 1n,
        gasLimit: 60_000n,
        maxFeePerGas: 3_000_000_000n,
        accessList: [{ address: `0x${'11'.repeat(20)}`, storageKeys: [] }],
      },
      { common },
    )
      .sign(keys[0]!)
      .serialize();
    expect(engineOf(decodeSignedTx(withList, common))).toBeUndefined();
  });
});
