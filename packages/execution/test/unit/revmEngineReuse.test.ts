/**
 * revm's addon engines are given back when an executor is done (`release`, `finish`) and taken
 * only by a run that needs one: a client makes an executor per pre-executed transaction, and an
 * engine left to the garbage collector keeps ~84 KiB of Rust memory the collector does not see
 * until two full collections have passed (the soak's clients grew by gigabytes that way).
 * Counted at the addon: engines built, and spare ones reset for another executor.
 */
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, makeAccount, StateTree, toHex } from '@monsoon/dsm-tree';
import { type EngineBinding, type EvmAddon, evmAddon } from '@monsoon/evm';
import {
  type BlockEnv,
  BlockExecutor,
  defaultChainRules,
  makeCommon,
  TreeStateManager,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { skipRevmWhereUnbuilt } from './engines.js';

const rules = defaultChainRules;
const common = makeCommon(rules);
const KEY = keccak.keccak256(Uint8Array.of(0x5e));
const SENDER = privateToAddress(KEY);
const CONTRACT = new Uint8Array(20).fill(0xc3);
const PAYEE = new Uint8Array(20).fill(0xe0);
const env: BlockEnv = {
  number: 9n,
  timestamp: 1_700_000_900n,
  coinbase: new Uint8Array(20).fill(0xcb),
  gasLimit: 30_000_000n,
};
/** SSTORE(0, SLOAD(0) + 1) */
const CODE = Uint8Array.from([0x60, 0x00, 0x54, 0x60, 0x01, 0x01, 0x60, 0x00, 0x55, 0x00]);

function genesis(): StateTree {
  const t = new StateTree();
  t.putAccount(SENDER, makeAccount({ nonce: 0n, balance: 10n ** 20n, codeHash: EMPTY_CODE_HASH }));
  t.putAccount(CONTRACT, makeAccount({ nonce: 1n, balance: 0n, codeHash: t.putCode(CODE) }));
  return t;
}

const sign = (nonce: bigint, to: Uint8Array, value = 0n) =>
  createFeeMarket1559Tx(
    { nonce, to, value, gasLimit: 100_000n, maxFeePerGas: 5_000_000_000n, maxPriorityFeePerGas: 10n ** 9n },
    { common },
  ).sign(KEY);

skipRevmWhereUnbuilt('engines are given back when an executor is done');

describe.each(evmAddon() === undefined ? [] : ['revm'])('revm engines reused [%s]', () => {
  const addon = evmAddon() as EvmAddon;
  const Real = addon.Engine;
  const realReset = Real.prototype.reset as EngineBinding['reset'];
  let built = 0;
  let reset = 0;
  beforeAll(() => {
    addon.Engine = function Counted(config: Uint8Array) {
      built++;
      return new Real(config);
    } as unknown as EvmAddon['Engine'];
    Real.prototype.reset = function (this: EngineBinding, config: Uint8Array) {
      reset++;
      return realReset.call(this, config);
    };
  });
  afterAll(() => {
    addon.Engine = Real;
    Real.prototype.reset = realReset;
  });

  it('executors released after each contract call build one engine between them', async () => {
    const state = genesis();
    built = 0;
    for (let i = 0; i < 40; i++) {
      const ex = await BlockExecutor.create(state.snapshot(), env, rules, { common, engine: 'revm' });
      try {
        const o = await ex.execute(sign(0n, CONTRACT), SENDER);
        expect(o.status).toBe('included');
      } finally {
        ex.release();
      }
    }
    // Without giving engines back, each executor built its own (none is reclaimed in between).
    expect(built).toBeLessThanOrEqual(1);
  });

  it('the writers go back with the engine: executors released in turn send records from one buffer, from the start', async () => {
    const realExecute = Real.prototype.execute as EngineBinding['execute'];
    const buffers = new Set<ArrayBufferLike>();
    const firstBytes: number[] = [];
    let calls = 0;
    Real.prototype.execute = function (
      this: EngineBinding,
      tx: Uint8Array,
      records: Uint8Array,
      out: Uint8Array,
    ) {
      buffers.add(records.buffer);
      if (calls++ === 0) firstBytes.push(records[0]!);
      return realExecute.call(this, tx, records, out);
    };
    try {
      const state = genesis();
      for (let i = 0; i < 20; i++) {
        const ex = await BlockExecutor.create(state.snapshot(), env, rules, { common, engine: 'revm' });
        calls = 0;
        try {
          // Each leaves a commit record pending (for its engine's next call) when released.
          expect((await ex.execute(sign(0n, CONTRACT), SENDER)).status).toBe('included');
        } finally {
          ex.release();
        }
      }
    } finally {
      Real.prototype.execute = realExecute;
    }
    // Made per executor, each had a records buffer of its own (20).
    expect(buffers.size).toBe(1);
    // A recording run starts by dropping what the engine holds (9), never with the pending
    // commit (11) a released executor left for its own engine.
    expect(firstBytes).toEqual(Array(20).fill(9));
  });

  it('a wave of executors holding engines at once gives them back for the next wave to reuse', async () => {
    // As a client pre-executes its contract calls: a few hundred at once, each holding an engine.
    const wave = async () => {
      const held = await Promise.all(
        Array.from({ length: 64 }, () =>
          BlockExecutor.create(genesis(), env, rules, { common, engine: 'revm' }),
        ),
      );
      for (const ex of held) expect((await ex.execute(sign(0n, CONTRACT), SENDER)).status).toBe('included');
      for (const ex of held) ex.release();
    };
    await wave();
    built = 0;
    await wave();
    // With 16 kept, each wave after the first built 48 engines and left 48 to the collector.
    expect(built).toBe(0);
  });

  it('a block of plain transfers takes no engine, and a finished block gives its engine back', async () => {
    built = 0;
    reset = 0;
    const transfers = await BlockExecutor.create(genesis(), env, rules, { common, engine: 'revm' });
    for (let n = 0n; n < 3n; n++) {
      expect((await transfers.execute(sign(n, PAYEE, 1000n), SENDER)).status).toBe('included');
    }
    await transfers.finish();
    expect(built + reset).toBe(0);
    const calls = await BlockExecutor.create(genesis(), env, rules, { common, engine: 'revm' });
    expect((await calls.execute(sign(0n, CONTRACT), SENDER)).status).toBe('included');
    await calls.finish();
    const next = await BlockExecutor.create(genesis(), env, rules, { common, engine: 'revm' });
    expect((await next.execute(sign(0n, CONTRACT), SENDER)).status).toBe('included');
    await next.finish();
    expect(built).toBeLessThanOrEqual(1);
    expect(built + reset).toBe(2);
  });

  it('an executor released between transactions takes an engine again and gives the same block', async () => {
    const run = async (releaseBetween: boolean) => {
      const ex = await BlockExecutor.create(genesis(), env, rules, { common, engine: 'revm' });
      for (let n = 0n; n < 4n; n++) {
        const o = await ex.execute(sign(n, n === 2n ? PAYEE : CONTRACT, n === 2n ? 7n : 0n), SENDER);
        expect(o.status).toBe('included');
        if (releaseBetween) ex.release();
      }
      const done = await ex.finish();
      return { root: toHex(done.stateRoot), gas: done.gasUsed };
    };
    const kept = await run(false);
    expect(await run(true)).toEqual(kept);
    // The counter slot really went up three times: the released runs read it anew.
    const ref = await BlockExecutor.create(genesis(), env, rules, { common, engine: 'ethereumjs' });
    for (let n = 0n; n < 4n; n++)
      await ref.execute(sign(n, n === 2n ? PAYEE : CONTRACT, n === 2n ? 7n : 0n), SENDER);
    expect(toHex((await ref.finish()).stateRoot)).toBe(kept.root);
  });
});

describe('code read from outside the tree', () => {
  // A tree that names the contract's code hash without holding the code (as a client's tree
  // from a bag does): the code comes from the code source, checked by hash.
  const withoutCode = () => {
    const t = new StateTree();
    t.putAccount(CONTRACT, makeAccount({ nonce: 1n, balance: 0n, codeHash: keccak.keccak256(CODE) }));
    return t;
  };
  const codeSource = (h: Uint8Array) => (toHex(h) === toHex(keccak.keccak256(CODE)) ? CODE : undefined);

  it('is put into the tree by default (a miner keeps it for later blocks)', () => {
    const tree = withoutCode();
    const sm = new TreeStateManager(tree, { codeSource });
    expect(toHex(sm.readCode(CONTRACT))).toBe(toHex(CODE));
    expect(toHex(tree.getCode(keccak.keccak256(CODE))!)).toBe(toHex(CODE));
  });

  it('is read but not put into a tree that keeps none (a client pre-execution, thrown away)', () => {
    const tree = withoutCode();
    const sm = new TreeStateManager(tree, { codeSource, keepCode: false });
    expect(toHex(sm.readCode(CONTRACT))).toBe(toHex(CODE));
    expect(toHex(sm.readCode(CONTRACT))).toBe(toHex(CODE));
    expect(tree.getCode(keccak.keccak256(CODE))).toBeUndefined();
  });
});
