/**
 * A reused EVM is a fresh one: executors given EVMs from an EvmPool, each EVM passed from one
 * state to another (and through reverts, out-of-gas and refused transactions that leave
 * journal state behind), give exactly the receipts and roots of executors that built their own.
 */
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { makeAccount, StateTree, toHex } from '@monsoon/dsm-tree';
import { BlockExecutor, defaultChainRules, EvmPool, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';

const rules = { ...defaultChainRules, chainId: 77n };
const common = makeCommon(rules.chainId);
const keys = Array.from({ length: 6 }, (_, i) => keccak.keccak256(Uint8Array.of(5, i)));
const addrs = keys.map((k) => privateToAddress(k));
/** SSTORE(cd[0:32], cd[32:64]) then REVERT if cd[64:96] is non-zero. */
const CODE = Uint8Array.from(Buffer.from('60203560003555604035600e57005b60006000fd', 'hex'));
const contract = new Uint8Array(20).fill(0xcc);
const env = { number: 1n, timestamp: 10n, coinbase: new Uint8Array(20).fill(0xee), gasLimit: 30_000_000n };

function state(seed: number): StateTree {
  const st = new StateTree();
  addrs.forEach((a, i) => {
    st.putAccount(a, makeAccount({ balance: 10n ** 20n + BigInt(seed * 1000 + i) }));
  });
  st.putAccount(contract, makeAccount({ codeHash: st.putCode(CODE) }));
  return st;
}

const word = (n: number) => {
  const b = new Uint8Array(32);
  b[31] = n;
  return b;
};

function txs(seed: number) {
  return [0, 1, 2, 3].map((i) => {
    const data = Uint8Array.from([...word(i + seed), ...word(7 + i), ...word(i === 1 ? 1 : 0)]);
    const gasLimit = i === 2 ? 21_500n : 100_000n; // 2: out of gas; 1: reverts
    return {
      tx: createFeeMarket1559Tx(
        { nonce: 0n, to: contract, data, gasLimit, maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1n },
        { common },
      ).sign(keys[i]!),
      sender: addrs[i]!,
    };
  });
}

async function run(seed: number, evm?: Awaited<ReturnType<EvmPool['take']>>) {
  const ex = await BlockExecutor.create(state(seed), env, rules, { common, ...(evm ? { evm } : {}) });
  const outcomes = [];
  for (const { tx, sender } of txs(seed)) {
    const o = await ex.execute(tx, sender);
    outcomes.push(o.status === 'included' ? [o.receipt.status, o.receipt.gasUsed] : o.status);
  }
  // A transaction refused before the EVM (nonce reused) must leave nothing behind either.
  outcomes.push((await ex.execute(txs(seed)[0]!.tx, addrs[0]!)).status);
  const done = await ex.finish();
  return { outcomes, root: toHex(done.stateRoot) };
}

describe('EvmPool', () => {
  it('executors on reused EVMs give what executors on fresh ones give, state after state', async () => {
    const pool = new EvmPool(common, 1);
    const evm = await pool.take();
    for (const seed of [1, 2, 3]) {
      const fresh = await run(seed);
      const reused = await run(seed, evm);
      expect(reused).toEqual(fresh);
      expect(fresh.outcomes).toContainEqual([0, expect.anything()]);
    }
    pool.give(evm);
    expect(await pool.take()).toBe(evm);
  });
});
