/**
 * revm batches (BlockExecutor.executeBatch) where they must hand a transaction back to a call of
 * its own mid-batch: a deletion whose collapsing sibling is not in the bag aborts MISSING_NODE
 * exactly as it does one call per transaction (the tree prepares deletions per transaction),
 * a refused transaction keeps its error, and the transactions around them run in the batch
 * and see the state the ones before them left; and one call per transaction ends as
 * @ethereumjs/evm does there. And a batch whose transactions each read a slot the engine
 * lacks gets them all in one round (they are run ahead), with the same outcomes, receipts
 * (logs bloom from revm) and root; a transaction whose run ahead read nothing that changed
 * since is not run again (the coinbase's fees aside), one that read the coinbase's balance is.
 * The random blocks of engineFuzz.test.ts hold batches to
 * single calls more broadly.
 */
import { createFeeMarket1559Tx, type TypedTransaction } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, makeAccount, NodeBag, StateTree, toHex } from '@monsoon/dsm-tree';
import {
  BlockExecutor,
  defaultChainRules,
  encodeReceipt,
  logsBloom,
  makeCommon,
  revmAvailable,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { runMinerItems, showOutcome, skipRevmWhereUnbuilt } from './engines.js';
import { gapBlockEnv, word } from './witnessFixtures.js';

const rules = defaultChainRules;
const common = makeCommon(rules);
const KEYS = [0xa1, 0xa2, 0xa3].map((b) => keccak.keccak256(Uint8Array.of(b)));
const [A, B, C] = KEYS.map((k) => privateToAddress(k)) as [Uint8Array, Uint8Array, Uint8Array];
/** SSTORE(0, 0): deletes slot 0. */
const ZERO_SLOT0 = new Uint8Array(20).fill(0xd0);
/** SSTORE(CALLVALUE, 5): writes a slot of a trie whose other nodes are all in the bag. */
const WRITER = new Uint8Array(20).fill(0xd1);
const env = gapBlockEnv;
/** A value long enough that its leaf is hashed, not inlined in its branch. */
const LONG = new Uint8Array(32).fill(0xab);

/**
 * A tree known by its root: every account and code proven; ZERO_SLOT0's slot 0 proven but not
 * slot 1 (so deleting slot 0, which collapses the branch into slot 1's leaf, needs a node the
 * bag lacks); WRITER's storage proven whole.
 */
function partialState(): StateTree {
  const full = new StateTree();
  for (const a of [A, B, C])
    full.putAccount(a, makeAccount({ nonce: 0n, balance: 10n ** 20n, codeHash: EMPTY_CODE_HASH }));
  const zeroing = full.putCode(Uint8Array.from([0x60, 0x00, 0x60, 0x00, 0x55, 0x00]));
  full.putAccount(ZERO_SLOT0, makeAccount({ nonce: 1n, balance: 0n, codeHash: zeroing }));
  full.putStorage(ZERO_SLOT0, word(0), LONG);
  full.putStorage(ZERO_SLOT0, word(1), LONG);
  const writing = full.putCode(Uint8Array.from([0x60, 0x05, 0x34, 0x55, 0x00]));
  full.putAccount(WRITER, makeAccount({ nonce: 1n, balance: 0n, codeHash: writing }));
  full.putStorage(WRITER, word(9), LONG);
  const bag = new NodeBag();
  bag.addNodes(full.proveAccounts([A, B, C, ZERO_SLOT0, WRITER, env.coinbase]));
  bag.addNodes(full.proveStorageMany(ZERO_SLOT0, [word(0)]));
  bag.addNodes(full.proveStorageMany(WRITER, [word(9), word(1), word(2), word(3)]));
  bag.add(full.getCode(zeroing)!);
  bag.add(full.getCode(writing)!);
  return StateTree.fromRootHash(full.root(), { source: bag });
}

function tx(key: Uint8Array, nonce: bigint, to: Uint8Array, value: bigint): TypedTransaction {
  return createFeeMarket1559Tx(
    { nonce, to, value, gasLimit: 100_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n },
    { common },
  ).sign(key);
}

/** The block: A writes, B deletes (a gap), C's nonce is wrong, A sends on, then writes again. */
const block = (): { tx: TypedTransaction; sender: Uint8Array }[] => [
  { tx: tx(KEYS[0]!, 0n, WRITER, 1n), sender: A },
  { tx: tx(KEYS[1]!, 0n, ZERO_SLOT0, 0n), sender: B },
  { tx: tx(KEYS[2]!, 5n, WRITER, 2n), sender: C },
  { tx: tx(KEYS[0]!, 1n, B, 7n), sender: A },
  { tx: tx(KEYS[0]!, 2n, WRITER, 3n), sender: A },
  { tx: tx(KEYS[2]!, 0n, WRITER, 2n), sender: C },
];

const show = showOutcome;

/** A miner's executor (no access recording) over `state`, revm batches on or off. */
const executor = (state: StateTree, batch: boolean, engine: 'revm' | 'ethereumjs') =>
  BlockExecutor.create(state, env, rules, { engine, common, recordAccesses: false, batch });

const run = (batch: boolean, engine: 'revm' | 'ethereumjs' = 'revm') =>
  runMinerItems(partialState(), block(), { env, rules, common, batch, engine });

skipRevmWhereUnbuilt('revm batches hand a transaction back mid-batch');
const describeRevm = revmAvailable() ? describe : describe.skip;

describeRevm('revm batches hand a transaction back mid-batch', () => {
  it('a deletion the bag cannot prepare aborts as one call per transaction does; the rest runs in the batch', async () => {
    const one = await run(false);
    // One call per transaction is the reference's (a fast-path transfer after the failed
    // deletion once committed that deletion's fee into the engine's state).
    const reference = await run(false, 'ethereumjs');
    expect(one.outcomes).toEqual(reference.outcomes);
    expect(one.root).toBe(reference.root);
    expect(one.outcomes[1]).toMatch(/^missing MISSING_NODE .*slot/);
    expect(one.outcomes[2]).toMatch(/^invalid BAD_NONCE/);
    expect(one.outcomes.filter((o) => o.startsWith('1 '))).toHaveLength(4);
    const batch = await run(true);
    expect(batch.outcomes).toEqual(one.outcomes);
    expect(batch.root).toBe(one.root);
    // Everything but the two handed back ran inside batches.
    expect(batch.batched).toBe(4);
  });
});

/** Eight senders, each calling READER once. */
const READER_KEYS = Array.from({ length: 8 }, (_, i) => keccak.keccak256(Uint8Array.of(0xb0 + i)));
const READERS = READER_KEYS.map((k) => privateToAddress(k));
/** A ninth caller, funded, its slot set and proven like the readers'. */
const LATE_KEY = keccak.keccak256(Uint8Array.of(0xb8));
const LATE = privateToAddress(LATE_KEY);
/** LOG1(topic CALLER) of SLOAD(CALLER), then SSTORE(0, SLOAD(CALLER)): a slot per caller, one shared. */
const READER = new Uint8Array(20).fill(0xd2);
const READER_CODE = Uint8Array.from(
  Buffer.from(
    // MSTORE(0, SLOAD(CALLER)); LOG1(0, 32, CALLER); SSTORE(0, SLOAD(CALLER)); STOP
    '3354600052' + '3360206000a1' + '335460005500',
    'hex',
  ),
);
const callerWord = (a: Uint8Array): Uint8Array => {
  const w = new Uint8Array(32);
  w.set(a, 12);
  return w;
};

/**
 * Every reader funded, READER (running `code`) with the slot of each reader set (and slot 0),
 * all proven (and a ninth caller's, LATE, below); the coinbase, when `coinbase` is given,
 * holding that balance.
 */
function readerState(code: Uint8Array = READER_CODE, coinbase?: bigint): StateTree {
  const full = new StateTree();
  for (const a of [...READERS, LATE])
    full.putAccount(a, makeAccount({ nonce: 0n, balance: 10n ** 20n, codeHash: EMPTY_CODE_HASH }));
  if (coinbase !== undefined)
    full.putAccount(env.coinbase, makeAccount({ balance: coinbase, codeHash: EMPTY_CODE_HASH }));
  const codeHash = full.putCode(code);
  full.putAccount(READER, makeAccount({ nonce: 1n, balance: 0n, codeHash }));
  full.putStorage(READER, word(0), LONG);
  for (const [i, a] of [...READERS, LATE].entries()) full.putStorage(READER, callerWord(a), word(i + 1));
  const bag = new NodeBag();
  bag.addNodes(full.proveAccounts([...READERS, LATE, READER, env.coinbase]));
  bag.addNodes(full.proveStorageMany(READER, [word(0), ...[...READERS, LATE].map(callerWord)]));
  bag.add(code);
  return StateTree.fromRootHash(full.root(), { source: bag });
}

async function readAll(
  batch: boolean,
  engine: 'revm' | 'ethereumjs' = 'revm',
  state: () => StateTree = () => readerState(),
) {
  const ex = await executor(state(), batch, engine);
  const items = READER_KEYS.map((k, i) => ({ tx: tx(k, 0n, READER, 0n), sender: READERS[i]! }));
  const outcomes = await ex.executeBatch(items);
  const crossings = ex.engineCrossings;
  const reused = ex.reusedRuns;
  const done = await ex.finish();
  return {
    outcomes: outcomes.map(show),
    receipts: done.receipts.map((r) => toHex(encodeReceipt(r))),
    blooms: done.receipts.map((r) => r.bloom && toHex(r.bloom)),
    logs: done.receipts.map((r) => toHex(logsBloom(r.logs))),
    root: toHex(done.stateRoot),
    crossings,
    reused,
  };
}

type ReadAll = Awaited<ReturnType<typeof readAll>>;

/** revm one call per transaction and in a batch end as @ethereumjs/evm does: every call succeeds. */
function expectReference(reference: ReadAll, one: ReadAll, batch: ReadAll): void {
  expect(reference.outcomes.every((o) => o.startsWith('1 '))).toBe(true);
  expect(one.outcomes).toEqual(reference.outcomes);
  expect(batch.outcomes).toEqual(reference.outcomes);
  expect(batch.receipts).toEqual(reference.receipts);
  expect(batch.root).toBe(reference.root);
  expect(one.root).toBe(reference.root);
}

describeRevm('revm batches read what their transactions lack in one round', () => {
  it('eight transactions, each lacking a slot of its own, take two calls, as one call each would end', async () => {
    const reference = await readAll(false, 'ethereumjs');
    const one = await readAll(false);
    const batch = await readAll(true);
    expectReference(reference, one, batch);
    // revm's bloom is the one computed from the logs (and what the receipts encode).
    expect(batch.blooms).toEqual(batch.logs);
    expect(one.blooms).toEqual(one.logs);
    // The first call finds the first transaction lacking its slot, runs the other seven ahead
    // and asks for all eight slots; the second executes the batch. One call a transaction
    // needs a round each.
    expect(batch.crossings).toBe(2);
    expect(one.crossings).toBeGreaterThanOrEqual(2 * READERS.length);
    // Each run ahead read slot 0, which every transaction before it wrote: none is taken.
    expect(batch.reused).toBe(0);
  });
});

/** SSTORE(CALLER, SLOAD(CALLER) + 1); LOG1(0, 0, CALLER): each caller's own slot only. */
const COUNTER_CODE = Uint8Array.from(Buffer.from('33546001013355' + '3360006000a1' + '00', 'hex'));
/** SSTORE(CALLER, BALANCE(COINBASE)): what each caller saw of the coinbase's balance. */
const COINBASE_READER_CODE = Uint8Array.from(Buffer.from('4131335500', 'hex'));

/**
 * Two batches over `code`: the eight readers once (the engine learns their slots), then the
 * ninth caller (whose slot it lacks, so it runs the eight ahead of it) and the eight again.
 */
async function twice(code: Uint8Array, engine: 'revm' | 'ethereumjs') {
  const full = readerState(code, 10n ** 18n);
  const ex = await executor(full, engine === 'revm', engine);
  const first = READER_KEYS.map((k, i) => ({ tx: tx(k, 0n, READER, 0n), sender: READERS[i]! }));
  const second = [
    { tx: tx(LATE_KEY, 0n, READER, 0n), sender: LATE },
    ...READER_KEYS.map((k, i) => ({ tx: tx(k, 1n, READER, 0n), sender: READERS[i]! })),
  ];
  const outcomes = [...(await ex.executeBatch(first))];
  const reusedFirst = ex.reusedRuns;
  outcomes.push(...(await ex.executeBatch(second)));
  const reused = ex.reusedRuns - reusedFirst;
  const done = await ex.finish();
  return {
    outcomes: outcomes.map(show),
    receipts: done.receipts.map((r) => toHex(encodeReceipt(r))),
    root: toHex(done.stateRoot),
    reusedFirst,
    reused,
  };
}

describeRevm('revm batches take a run ahead instead of a second run when what it read still holds', () => {
  it('runs ahead that lacked nothing and read only their own slots are taken (the fees paid since added to the coinbase)', async () => {
    const reference = await twice(COUNTER_CODE, 'ethereumjs');
    const batch = await twice(COUNTER_CODE, 'revm');
    expect(batch.outcomes).toEqual(reference.outcomes);
    expect(batch.outcomes.every((o) => o.startsWith('1 '))).toBe(true);
    expect(batch.receipts).toEqual(reference.receipts);
    expect(batch.root).toBe(reference.root);
    // First batch: every run ahead lacked its slot, so none could be taken. Second: the ninth
    // caller lacked its slot and ran again; the eight run ahead of it were taken.
    expect(batch.reusedFirst).toBe(0);
    expect(batch.reused).toBe(READERS.length);
  });

  it('a run ahead that read the coinbase balance is run again (every fee before it moved that balance)', async () => {
    const reference = await twice(COINBASE_READER_CODE, 'ethereumjs');
    const batch = await twice(COINBASE_READER_CODE, 'revm');
    expect(batch.outcomes).toEqual(reference.outcomes);
    expect(batch.root).toBe(reference.root);
    expect(batch.reused).toBe(0);
  });
});

/**
 * An ERC-20 transfer's shape: SLOAD(CALLER), a revert when it is zero (the balance check), then
 * SSTORE(CALLER + 1, SLOAD(CALLER + 1) + 1): the second slot it needs is read only when the
 * first is not zero.
 */
const GATED_CODE = Uint8Array.from(
  // CALLER SLOAD ISZERO PUSH1 0x12 JUMPI; PUSH1 1 CALLER ADD DUP1 SLOAD PUSH1 1 ADD SWAP1 SSTORE
  // STOP; 0x12: JUMPDEST PUSH1 0 DUP1 REVERT
  Buffer.from('3354156012576001330180546001019055005b600080fd', 'hex'),
);
const slotAfter = (a: Uint8Array): Uint8Array => {
  const n = BigInt(`0x${Buffer.from(callerWord(a)).toString('hex')}`) + 1n;
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
};

/** readerState over GATED_CODE, each reader's second slot (CALLER + 1) set and proven too. */
function gatedState(): StateTree {
  const full = new StateTree();
  for (const a of READERS)
    full.putAccount(a, makeAccount({ nonce: 0n, balance: 10n ** 20n, codeHash: EMPTY_CODE_HASH }));
  const codeHash = full.putCode(GATED_CODE);
  full.putAccount(READER, makeAccount({ nonce: 1n, balance: 0n, codeHash }));
  for (const [i, a] of READERS.entries()) {
    full.putStorage(READER, callerWord(a), word(i + 1));
    full.putStorage(READER, slotAfter(a), word(i + 100));
  }
  const bag = new NodeBag();
  bag.addNodes(full.proveAccounts([...READERS, READER, env.coinbase]));
  bag.addNodes(full.proveStorageMany(READER, [...READERS.map(callerWord), ...READERS.map(slotAfter)]));
  bag.add(GATED_CODE);
  return StateTree.fromRootHash(full.root(), { source: bag });
}

describeRevm('a run that lacks a slot reads a non-zero guess in its place', () => {
  it('a second slot behind a check of the first is asked for in the same round (an ERC-20 transfer: two calls, not three)', async () => {
    const reference = await readAll(false, 'ethereumjs', gatedState);
    const one = await readAll(false, 'revm', gatedState);
    const batch = await readAll(true, 'revm', gatedState);
    expectReference(reference, one, batch);
    // A zero in place of the first slot would revert before the second is read: one round for
    // the first slots, another for the second ones, then the run that executes.
    expect(batch.crossings).toBe(2);
    expect(one.crossings).toBe(2 * READERS.length);
  });
});
