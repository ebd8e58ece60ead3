/**
 * A witness gap with each engine: a call whose storage read (or code) is not in the bag aborts
 * MISSING_NODE with the same error from revm as from @ethereumjs/evm — same message, same
 * account and slot — and leaves the tree and the block as they were. A read that only a wrong
 * guess would make (revm runs on with defaults for keys it lacks, then again with them) does
 * not abort: the gap must be on the path real execution takes.
 */
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, makeAccount, NodeBag, StateTree, toHex } from '@monsoon/dsm-tree';
import {
  BlockExecutor,
  defaultChainRules,
  type EngineName,
  ExecutionErrorCode,
  makeCommon,
  type TxOutcome,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { ENGINES, skipRevmWhereUnbuilt } from './engines.js';
import { gapBlockEnv, word } from './witnessFixtures.js';

const rules = defaultChainRules;
const common = makeCommon(rules);
const KEY = keccak.keccak256(Uint8Array.of(0x9a));
const SENDER = privateToAddress(KEY);
const CONTRACT = new Uint8Array(20).fill(0xc7);
const env = gapBlockEnv;
/** if (SLOAD(0) == 0) SLOAD(1); SSTORE(2, 7). */
const CODE = Uint8Array.from([
  0x60, 0x00, 0x54, 0x60, 0x0a, 0x57, 0x60, 0x01, 0x54, 0x50, 0x5b, 0x60, 0x07, 0x60, 0x02, 0x55, 0x00,
]);

/** A tree known by its root, its bag proving the accounts and the slots `proven` (and the code when `withCode`). */
function partialState(slot0: number, proven: number[], withCode = true, code = CODE): StateTree {
  const full = new StateTree();
  full.putAccount(SENDER, makeAccount({ nonce: 0n, balance: 10n ** 20n, codeHash: EMPTY_CODE_HASH }));
  full.putAccount(CONTRACT, makeAccount({ nonce: 1n, balance: 0n, codeHash: full.putCode(code) }));
  for (const [slot, value] of [
    [0, slot0],
    [1, 9],
    [2, 3],
    [3, 4],
  ] as const) {
    if (value !== 0) full.putStorage(CONTRACT, word(slot), word(value));
  }
  const bag = new NodeBag();
  bag.addNodes(full.proveAccounts([SENDER, CONTRACT, env.coinbase]));
  bag.addNodes(full.proveStorageMany(CONTRACT, proven.map(word)));
  if (withCode) bag.add(code);
  return StateTree.fromRootHash(full.root(), { source: bag });
}

const tx = createFeeMarket1559Tx(
  {
    nonce: 0n,
    to: CONTRACT,
    gasLimit: 100_000n,
    maxFeePerGas: 5_000_000_000n,
    maxPriorityFeePerGas: 10n ** 9n,
  },
  { common },
).sign(KEY);

async function attempt(state: StateTree, engine: EngineName, call = tx) {
  const root = toHex(state.root());
  const ex = await BlockExecutor.create(state, env, rules, { common, engine, recordAccesses: false });
  const outcome: TxOutcome = await ex.execute(call, SENDER);
  const gas = ex.blockGasUsed;
  const unchanged = toHex(state.root()) === root;
  const done = await ex.finish();
  return { outcome, gas, unchanged, updated: done.updates.map((u) => toHex(u.address)) };
}

/** What an aborted transaction's error says, to compare across engines. */
function described(o: TxOutcome) {
  if (o.status !== 'missing') return o.status;
  const m = o.error.meta;
  const hex = (v: unknown) => (v instanceof Uint8Array ? toHex(v) : v === undefined ? undefined : String(v));
  return {
    code: o.error.code,
    message: o.error.message,
    address: hex(m.address),
    slot: hex(m.slot),
    hash: hex(m.hash),
  };
}

skipRevmWhereUnbuilt('a witness gap aborts as in @ethereumjs/evm');

describe.each(ENGINES)('a witness gap [%s]', (engine) => {
  it('a slot the call reads is not in the bag: MISSING_NODE naming it, the state untouched', async () => {
    const r = await attempt(partialState(0, [0, 2]), engine);
    expect(r.outcome.status).toBe('missing');
    const d = described(r.outcome);
    expect(d).toMatchObject({
      code: ExecutionErrorCode.MissingNode,
      address: toHex(CONTRACT),
      slot: toHex(word(1)),
    });
    expect(r.gas).toBe(0n);
    expect(r.unchanged).toBe(true);
    expect(r.updated).toEqual([toHex(env.coinbase)]); // the block reward only
  });

  it('the code is not in the bag: MISSING_NODE naming the account and code hash', async () => {
    const r = await attempt(partialState(0, [0, 1, 2], false), engine);
    expect(described(r.outcome)).toMatchObject({
      code: ExecutionErrorCode.MissingNode,
      address: toHex(CONTRACT),
      hash: toHex(keccak.keccak256(CODE)),
    });
    expect(r.unchanged).toBe(true);
  });

  it('a slot only a wrong guess would read is not needed: the call runs', async () => {
    const r = await attempt(partialState(1, [0, 2]), engine);
    expect(r.outcome.status).toBe('included');
    expect(r.unchanged).toBe(false);
  });
});

describe('a witness gap, engine against engine', () => {
  const cases: [string, () => StateTree][] = [
    ['slot', () => partialState(0, [0, 2])],
    ['code', () => partialState(0, [0, 1, 2], false)],
    ['first slot', () => partialState(0, [2])],
  ];
  it.each(cases)('%s: revm aborts with the error @ethereumjs/evm gives', async (_name, state) => {
    const reference = described((await attempt(state(), 'ethereumjs')).outcome);
    expect(reference).not.toBe('included');
    for (const engine of ENGINES)
      expect(described((await attempt(state(), engine)).outcome)).toEqual(reference);
  });
});

/** SLOAD(calldata[0:32]); SSTORE(2, SLOAD(2) + 1): every call shares slot 2, each reads a slot of its choice. */
const COUNTER = Uint8Array.from([
  0x60, 0x00, 0x35, 0x54, 0x50, 0x60, 0x02, 0x54, 0x60, 0x01, 0x01, 0x60, 0x02, 0x55, 0x00,
]);

/**
 * One block: calls sharing slot 2, a call in the middle whose slot is not in the bag, a plain
 * transfer (the fast path, which writes around the engine), and calls after them.
 */
async function gapMidBlock(engine: EngineName) {
  const state = partialState(5, [0, 2, 3], true, COUNTER);
  const ex = await BlockExecutor.create(state, env, rules, { common, engine, recordAccesses: false });
  const call = (nonce: bigint, slot: number) =>
    createFeeMarket1559Tx(
      {
        nonce,
        to: CONTRACT,
        data: word(slot),
        gasLimit: 100_000n,
        maxFeePerGas: 5_000_000_000n,
        maxPriorityFeePerGas: 10n ** 9n,
      },
      { common },
    ).sign(KEY);
  const transfer = createFeeMarket1559Tx(
    { nonce: 2n, to: env.coinbase, value: 7n, gasLimit: 21_000n, maxFeePerGas: 5_000_000_000n },
    { common },
  ).sign(KEY);
  const outcomes = [];
  for (const t of [call(0n, 0), call(1n, 1), call(1n, 3), transfer, call(3n, 2)]) {
    const o = await ex.execute(t, SENDER);
    outcomes.push(
      o.status === 'included'
        ? { status: o.receipt.status, gas: o.receipt.gasUsed, cumulative: o.receipt.cumulativeGasUsed }
        : described(o),
    );
  }
  const done = await ex.finish();
  return {
    outcomes,
    root: toHex(done.stateRoot),
    // In address order: the engines write accounts in different orders, which no root depends on.
    updates: done.updates
      .map((u) =>
        u.deleted
          ? toHex(u.address)
          : [toHex(u.address), u.nonce, u.balance, u.storage.map((w) => [toHex(w.slot), toHex(w.value)])],
      )
      .sort((a, b) => String(a).localeCompare(String(b))),
  };
}

describe('a witness gap mid-block', () => {
  it.each(ENGINES)(
    '[%s] the call on the gap aborts alone: the calls before keep their effects, the ones after build on them',
    async (engine) => {
      const r = await gapMidBlock(engine);
      expect(r.outcomes.map((o) => (typeof o === 'object' && 'status' in o ? o.status : o))).toEqual([
        1,
        expect.anything(),
        1,
        1,
        1,
      ]);
      expect(r.outcomes[1]).toMatchObject({
        code: ExecutionErrorCode.MissingNode,
        address: toHex(CONTRACT),
        slot: toHex(word(1)),
      });
      // Slot 2 went 3 → 4 → 5 → 6 over the three calls that ran; the sender's nonce is 4.
      const contract = r.updates.find((u) => Array.isArray(u) && u[0] === toHex(CONTRACT)) as unknown[];
      expect(contract[3]).toEqual([[toHex(word(2)), '06']]); // values as updates carry them: minimal bytes
      const sender = r.updates.find((u) => Array.isArray(u) && u[0] === toHex(SENDER)) as unknown[];
      expect(sender[1]).toBe(4n);
      expect(await gapMidBlock('ethereumjs')).toEqual(r);
    },
  );
});

/** SSTORE(1, 7) with 1,994 gas left: under the EIP-2200 stipend, so it fails out of gas. */
const SSTORE_CODE = Uint8Array.from([0x60, 0x07, 0x60, 0x01, 0x55, 0x00]);
const starved = createFeeMarket1559Tx(
  { nonce: 0n, to: CONTRACT, gasLimit: 23_000n, maxFeePerGas: 5_000_000_000n, maxPriorityFeePerGas: 1n },
  { common },
).sign(KEY);

describe('a witness gap where revm would not read', () => {
  // revm checks the stipend before loading the slot, @ethereumjs/evm loads it first: the engines
  // must need the same witness, or a block one builds is refused by a miner running the other.
  it.each(ENGINES)(
    '[%s] an SSTORE out of gas still needs its slot: MISSING_NODE naming it',
    async (engine) => {
      const r = await attempt(partialState(0, [0, 2], true, SSTORE_CODE), engine, starved);
      expect(described(r.outcome)).toMatchObject({
        code: ExecutionErrorCode.MissingNode,
        address: toHex(CONTRACT),
        slot: toHex(word(1)),
      });
      expect(r.unchanged).toBe(true);
      // With the slot in the bag, the call is included and fails (out of gas), in both engines.
      const proven = await attempt(partialState(0, [0, 1, 2], true, SSTORE_CODE), engine, starved);
      expect(proven.outcome.status === 'included' && proven.outcome.receipt.status).toBe(0);
    },
  );
});
