/**
 * TrafficGenerator: every transaction recovers to its sender and does what it says, nonces run
 * 0, 1, 2, … per sender, the mix is RainBlock's, and the output is reproducible.
 */

import { Capability, createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { makeCommon } from '@monsoon/execution';
import { toHex as hex } from '@monsoon/util';
import {
  AccountSet,
  DEFAULT_TOKEN_ADDRESS,
  defaultTrafficOptions,
  encodeTokenTransfer,
  type GeneratedTx,
  TrafficGenerator,
  WorkloadErrorCode,
} from '@monsoon/workload';
import { nativeCommon } from '../helpers/evm.js';

const SEED = new TextEncoder().encode('traffic test');
const COUNT = 200;
const N = 20_000;

let accounts: AccountSet;
let gen: TrafficGenerator;
let txs: GeneratedTx[];
let parsed: TypedTransaction[];

beforeAll(async () => {
  accounts = await AccountSet.create({ seed: SEED, count: COUNT, eager: true });
  gen = new TrafficGenerator({}, { accounts });
  txs = gen.take(N);
  const common = nativeCommon();
  parsed = txs.map((t) => createTxFromRLP(t.raw, { common }));
});

describe('TrafficGenerator with the default mix', () => {
  it('signs every transaction so that ethereumjs recovers the intended sender', () => {
    let wrong = 0;
    for (let k = 0; k < N; k++) {
      if (hex(parsed[k]!.getSenderAddress().bytes) !== hex(accounts.address(txs[k]!.from))) wrong++;
    }
    expect(wrong).toBe(0);
  });

  it('recovers the same senders with ethereumjs’ own (pure JS) crypto', () => {
    const common = makeCommon(1337n);
    for (const t of txs.slice(0, 100)) {
      expect(hex(createTxFromRLP(t.raw, { common }).getSenderAddress().bytes)).toBe(
        hex(accounts.address(t.from)),
      );
    }
  });

  it('gives each transaction the fields its kind calls for', () => {
    const o = defaultTrafficOptions;
    // Checked in a plain loop (160k expect() calls would take seconds); the first problems are reported.
    const problems: string[] = [];
    const want = (k: number, what: string, ok: boolean) => {
      if (!ok && problems.length < 10) problems.push(`tx ${k}: ${what}`);
    };
    for (let k = 0; k < N; k++) {
      const t = txs[k]!;
      const tx = parsed[k]!;
      want(k, 'type 2', tx.type === 2 && 'maxFeePerGas' in tx);
      if (!('maxFeePerGas' in tx)) continue;
      want(k, 'hash', hex(tx.hash()) === hex(t.hash));
      want(k, 'nonce', tx.nonce === t.nonce);
      want(k, 'recipient is not the sender', t.to !== t.from);
      want(
        k,
        'fees',
        tx.maxFeePerGas === o.maxFeePerGas && tx.maxPriorityFeePerGas === o.maxPriorityFeePerGas,
      );
      if (t.kind === 'transfer') {
        want(k, 'to', hex(tx.to!.bytes) === hex(accounts.address(t.to)));
        want(k, 'value', tx.value === t.value && t.value >= o.minValue && t.value <= o.maxValue);
        want(k, 'no tokens', t.tokenAmount === 0n && tx.data.length === 0);
        want(k, 'gas', tx.gasLimit === 21_000n);
      } else {
        want(k, 'to the token', hex(tx.to!.bytes) === hex(DEFAULT_TOKEN_ADDRESS));
        want(k, 'no value', tx.value === 0n && t.value === 0n);
        want(k, 'calldata', hex(tx.data) === hex(encodeTokenTransfer(accounts.address(t.to), t.tokenAmount)));
        want(k, 'amount', t.tokenAmount >= o.minTokenAmount && t.tokenAmount <= o.maxTokenAmount);
        want(k, 'gas', tx.gasLimit === 100_000n);
      }
    }
    expect(problems).toEqual([]);
  });

  it('numbers each sender’s transactions 0, 1, 2, … in order, with no gap', () => {
    const next = new Map<number, bigint>();
    let bad = 0;
    for (const t of txs) {
      const expected = next.get(t.from) ?? 0n;
      if (t.nonce !== expected) bad++;
      next.set(t.from, expected + 1n);
    }
    expect(bad).toBe(0);
    for (let i = 0; i < COUNT; i++) expect(gen.nonceOf(i)).toBe(next.get(i) ?? 0n);
    expect(gen.generated).toBe(N);
  });

  it('makes ≈15% ERC-20 calls and sends ≈90% of the traffic from and to the hot 10%', () => {
    expect(gen.hotCount).toBe(20);
    const share = (pred: (t: GeneratedTx) => boolean) => txs.filter(pred).length / N;
    // Binomial standard deviations at n = 20,000: 0.25% for 15%, 0.21% for 90%; bounds are ~4σ.
    expect(share((t) => t.kind === 'erc20')).toBeGreaterThan(0.14);
    expect(share((t) => t.kind === 'erc20')).toBeLessThan(0.16);
    expect(share((t) => t.from < 20)).toBeGreaterThan(0.89);
    expect(share((t) => t.from < 20)).toBeLessThan(0.91);
    // Recipients are redrawn when equal to the sender, which shifts a little weight off the hot set.
    expect(share((t) => t.to < 20)).toBeGreaterThan(0.88);
    expect(share((t) => t.to < 20)).toBeLessThan(0.91);
    // Within each set the choice is uniform: every account sends something.
    expect(new Set(txs.map((t) => t.from)).size).toBe(COUNT);
  });

  it('is reproducible: the same seed gives the same bytes, another seed other ones', () => {
    const again = new TrafficGenerator({}, { accounts }).take(500);
    expect(again.map((t) => hex(t.raw))).toEqual(txs.slice(0, 500).map((t) => hex(t.raw)));
    const other = new TrafficGenerator({ seed: new TextEncoder().encode('other') }, { accounts }).take(500);
    const same = other.filter((t, k) => hex(t.raw) === hex(txs[k]!.raw)).length;
    expect(same).toBe(0);
  });
});

/** A generated transaction with its bytes as hex, to compare whole. */
function plainTx(t: GeneratedTx): Record<string, unknown> {
  return { ...t, raw: hex(t.raw), hash: hex(t.hash) };
}

describe('TrafficGenerator.signAhead', () => {
  it('hands out the same transactions in the same order as signing each when asked', () => {
    const g = new TrafficGenerator({}, { accounts });
    const seen: number[] = [];
    g.signAhead(300, (n) => seen.push(n));
    expect(g.signedAhead).toBe(300);
    expect(g.generated).toBe(300);
    const first = g.take(120);
    g.signAhead(250); // the 180 left go first, then 250 more
    expect(g.signedAhead).toBe(430);
    const rest = g.take(500); // 430 ahead, then 70 signed when asked
    expect(g.signedAhead).toBe(0);
    expect([...first, ...rest].map(plainTx)).toEqual(txs.slice(0, 620).map(plainTx));
    expect(seen).toEqual([]);
    // Across the packed store's chunks (8,192 a chunk), every field as signed.
    const many = new TrafficGenerator({}, { accounts });
    many.signAhead(N, (n) => seen.push(n));
    expect(seen).toEqual([10_000, 20_000]);
    expect(many.take(N).map(plainTx)).toEqual(txs.map(plainTx));
  });

  it('refuses a count that is not a whole number ≥ 0', () => {
    for (const bad of [-1, 1.5, Number.NaN])
      expect(() => new TrafficGenerator({}, { accounts }).signAhead(bad)).toThrow(
        expect.objectContaining({ code: WorkloadErrorCode.BadOptions }),
      );
  });
});

describe('TrafficGenerator options', () => {
  it('makes legacy EIP-155 transactions for the chain id when asked', () => {
    const chainId = 4242n;
    const gen = new TrafficGenerator({ txType: 'legacy', chainId, gasPrice: 3_000_000_000n }, { accounts });
    const common = nativeCommon(chainId);
    for (const t of gen.take(300)) {
      const tx = createTxFromRLP(t.raw, { common });
      expect(tx.type).toBe(0);
      expect(tx.supports(Capability.EIP155ReplayProtection)).toBe(true);
      expect([35n + 2n * chainId, 36n + 2n * chainId]).toContain(tx.v);
      expect('gasPrice' in tx && tx.gasPrice).toBe(3_000_000_000n);
      expect(hex(tx.getSenderAddress().bytes)).toBe(hex(accounts.address(t.from)));
    }
  });

  it('gives identical bytes through the ethereumjs encoder, for both transaction types', () => {
    for (const txType of ['eip1559', 'legacy'] as const) {
      const direct = new TrafficGenerator({ txType }, { accounts }).take(300);
      const reference = new TrafficGenerator({ txType, encoder: 'ethereumjs' }, { accounts }).take(300);
      expect(reference.map((t) => hex(t.raw))).toEqual(direct.map((t) => hex(t.raw)));
      expect(reference.map((t) => hex(t.hash))).toEqual(direct.map((t) => hex(t.hash)));
    }
  });

  it('follows a custom mix: all ERC-20, no hot set preference', () => {
    const txs = new TrafficGenerator({ erc20Share: 1, hotShare: 0.1 }, { accounts }).take(2000);
    expect(txs.every((t) => t.kind === 'erc20')).toBe(true);
    const hot = txs.filter((t) => t.from < 20).length / txs.length;
    expect(hot).toBeGreaterThan(0.07);
    expect(hot).toBeLessThan(0.13);
  });

  it('never sends to the sender, even with a hot set of one at a 100% share', async () => {
    const ten = await AccountSet.create({ seed: SEED, count: 10 });
    const gen = new TrafficGenerator({ hotFraction: 0.1, hotShare: 1 }, { accounts: ten });
    expect(gen.hotCount).toBe(1);
    const txs = gen.take(200);
    expect(txs.every((t) => t.from === 0 && t.to !== 0)).toBe(true);
    expect(txs.at(-1)!.nonce).toBe(199n);
  });

  it('refuses inconsistent options with BAD_OPTIONS', () => {
    const bads = [
      { hotFraction: 0 },
      { hotShare: 1.5 },
      { erc20Share: -0.1 },
      { maxFeePerGas: 1n, maxPriorityFeePerGas: 2n },
      { transferGasLimit: 20_999n },
      { minValue: 5n, maxValue: 4n },
      { txType: 'blob' as never },
      { chainId: 0n },
    ];
    for (const bad of bads) {
      expect(() => new TrafficGenerator(bad, { accounts })).toThrow(
        expect.objectContaining({ code: WorkloadErrorCode.BadOptions }),
      );
    }
    expect(
      () =>
        new TrafficGenerator(
          {},
          { accounts: { count: 1, privateKey: () => new Uint8Array(32), address: () => new Uint8Array(20) } },
        ),
    ).toThrow(expect.objectContaining({ code: WorkloadErrorCode.BadOptions }));
  });
});
