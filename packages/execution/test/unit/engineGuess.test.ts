/**
 * A recording executor (a client's pre-execution) handed the callee's slots it will read: revm
 * gets them and the coinbase with its first call, so a right guess costs one call into the addon;
 * the accesses recorded are what the transaction read whatever the guess (a wrong one adds
 * nothing to the witness), and the same as @ethereumjs/evm records.
 */

import { createLegacyTx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { makeAccount, StateTree } from '@monsoon/dsm-tree';
import { BlockExecutor, type EngineName } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { common, ENGINES, env, rules, skipRevmWhereUnbuilt } from './engines.js';

/** SLOAD(calldata[0..32]), SLOAD(calldata[32..64]), STOP: reads the two slots it is told. */
const READS = Uint8Array.from(Buffer.from('600035545060203554' + '5000', 'hex'));
const key = new Uint8Array(32).fill(0x11);
const sender = privateToAddress(key);
const callee = new Uint8Array(20).fill(0x5e);
const word = (n: number) => {
  const b = new Uint8Array(32);
  b[31] = n;
  return b;
};

function state(): StateTree {
  const st = new StateTree({ hash: keccak });
  st.putAccount(sender, makeAccount({ balance: 10n ** 20n }));
  st.putAccount(callee, makeAccount({ codeHash: st.putCode(READS) }));
  st.putStorage(callee, word(5), Uint8Array.of(7));
  st.putStorage(callee, word(6), Uint8Array.of(8));
  st.putAccount(env.coinbase, makeAccount({ balance: 1n }));
  st.root();
  return st;
}

const tx = createLegacyTx(
  {
    nonce: 0n,
    to: callee,
    data: Uint8Array.from([...word(5), ...word(6)]),
    gasLimit: 100_000n,
    gasPrice: 2n * 10n ** 9n,
  },
  { common },
).sign(key);

/** Executes `tx` with a new recording executor: calls into the addon and the accesses, sorted. */
async function run(engine: EngineName, guess?: Uint8Array[]) {
  const ex = await BlockExecutor.create(state(), env, rules, { common, engine });
  const o = await ex.execute(tx, sender, guess);
  expect(o.status).toBe('included');
  const a = ex.accesses;
  const hex = (s: string) => Buffer.from(s, 'latin1').toString('hex');
  return {
    crossings: ex.engineCrossings,
    accesses: {
      accounts: [...a.accounts].map(hex).sort(),
      slots: [...a.slots].map(([k, ss]) => [hex(k), [...ss].map(hex).sort()]).sort(),
      code: [...a.code].map(hex).sort(),
    },
  };
}

skipRevmWhereUnbuilt('guessed slots with the first call');

describe.each(ENGINES.filter((e) => e === 'revm'))('guessed callee slots [%s]', (engine) => {
  it('a right guess costs one call; accesses as read, whatever the guess, and as @ethereumjs/evm records', async () => {
    const none = await run(engine);
    const right = await run(engine, [word(5), word(6)]);
    const wrong = await run(engine, [word(9)]);
    const half = await run(engine, [word(6), word(9)]);
    expect(none.crossings).toBeGreaterThan(1);
    expect(right.crossings).toBe(1);
    for (const r of [right, wrong, half]) expect(r.accesses).toEqual(none.accesses);
    expect(none.accesses.slots).toEqual([
      [Buffer.from(callee).toString('hex'), [word(5), word(6)].map((w) => Buffer.from(w).toString('hex'))],
    ]);
    expect(none.accesses.accounts).toContain(Buffer.from(env.coinbase).toString('hex'));
    const reference = await run('ethereumjs', [word(9)]);
    expect(reference.accesses).toEqual(none.accesses);
  });
});
