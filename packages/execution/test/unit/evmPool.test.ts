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

async function run(seed: number, evm?: Awaited<ReturnType<EvmPool['take']>> | EvmPool) {
  const ex = await BlockExecutor.create(state(seed), env, rules, {
    common,
    engine: 'ethereumjs', // the pool is the ethereumjs engine's
    ...(evm instanceof EvmPool ? { evms: evm } : evm ? { evm } : {}),
  });
  const outcomes = [];
  for (const { tx, sender } of txs(seed)) {
    const o = await ex.execute(tx, sender);
    outcomes.push(o.status === 'included' ? [o.receipt.status, o.receipt.gasUsed] : o.status);
  }
  // A transaction refused before the EVM (nonce reused) must leave nothing behind either.
  outcomes.push((await ex.execute(txs(seed)[0]!.tx, addrs[0]!)).status);
  const done = await ex.finish();
  ex.release();
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

  it('an executor borrowing from the pool gives what one with its own EVM gives, and takes none for plain transfers', async () => {
    const pool = new EvmPool(common, 4);
    pool.give(await pool.take());
    for (const seed of [1, 2]) expect(await run(seed, pool)).toEqual(await run(seed));
    expect(pool.idle).toBe(1);

    const ex = await BlockExecutor.create(state(4), env, rules, { common, engine: 'ethereumjs', evms: pool });
    const transfer = createFeeMarket1559Tx(
      {
        nonce: 0n,
        to: addrs[5]!,
        value: 5n,
        gasLimit: 21_000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1n,
      },
      { common },
    ).sign(keys[4]!);
    expect((await ex.execute(transfer, addrs[4]!)).status).toBe('included');
    expect(pool.idle).toBe(1); // no EVM held for a plain transfer
    const call = txs(4)[0]!;
    expect((await ex.execute(call.tx, call.sender)).status).toBe('included');
    expect(pool.idle).toBe(0); // the call borrowed it…
    ex.release();
    expect(pool.idle).toBe(1); // …until released
  });
});
