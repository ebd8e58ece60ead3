/**
 * BlockExecutor against @ethereumjs/vm on a full @ethereumjs/statemanager state: the same
 * transactions (transfers to old, new and own addresses, storage writes and deletes, logs,
 * reverts, a contract creation, invalid ones) give the same receipts and state root, with the
 * transfer fast path on and off, over a full tree and over a tree known only by its root whose
 * nodes come from a bag. The logical updates replayed on the genesis state give the root too.
 * Every case runs with both engines (revm where its addon is built, and @ethereumjs/evm).
 */

import { createBlock } from '@ethereumjs/block';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import type { TypedTransaction } from '@ethereumjs/tx';
import { createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import { Account, Address, privateToAddress } from '@ethereumjs/util';
import { createVM, runTx } from '@ethereumjs/vm';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { bytesEqual, makeAccount, NodeBag, StateTree, toHex } from '@monsoon/dsm-tree';
import { BlockExecutor, type EngineName, ExecutionErrorCode, keyBytes } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { type AccountUpdate, applyAccountUpdate } from '@monsoon/protocol';
import { Prng } from '@monsoon/test-utils';
import { common, ENGINES, env, rules, skipRevmWhereUnbuilt } from './engines.js';

const keyOf = (b: Uint8Array) => Buffer.from(b).toString('latin1');

/** SSTORE(calldata[0..32], calldata[32..64]); LOG1(topic = calldata[0..32]); STOP. */
const STORE = Uint8Array.from(Buffer.from('602035600035556000356000600' + '0a100', 'hex'));
/** REVERT(0, 0). */
const REVERT = Uint8Array.from(Buffer.from('60006000fd', 'hex'));
/** Init code returning STORE as the new contract's code. */
const INIT = (() => {
  const n = STORE.length;
  // PUSH1 n PUSH1 12 PUSH1 0 CODECOPY PUSH1 n PUSH1 0 RETURN, then the runtime
  const head = Uint8Array.from([0x60, n, 0x60, 12, 0x60, 0, 0x39, 0x60, n, 0x60, 0, 0xf3]);
  return Uint8Array.from([...head, ...STORE]);
})();

interface Fixture {
  keys: Uint8Array[];
  addrs: Uint8Array[];
  store: Uint8Array;
  revert: Uint8Array;
  txs: { tx: TypedTransaction; sender: Uint8Array }[];
}

function fixture(seed: number): Fixture {
  const r = new Prng(seed);
  const keys = Array.from({ length: 24 }, () => {
    const k = r.bytes(32);
    k[0] = 1 + (k[0]! % 200);
    return k;
  });
  const addrs = keys.map((k) => privateToAddress(k));
  const store = new Uint8Array(20).fill(0x5e);
  const revert = new Uint8Array(20).fill(0x7e);
  const nonces = addrs.map(() => 0n);
  const txs: Fixture['txs'] = [];
  const word = (n: number) => {
    const b = new Uint8Array(32);
    b[31] = n;
    return b;
  };
  for (let i = 0; i < 90; i++) {
    const s = r.int(addrs.length);
    const legacy = r.chance(0.3);
    const kind = r.int(10);
    let to: Uint8Array | undefined;
    let data = new Uint8Array(0);
    let value = BigInt(r.int(3)) * 10n ** 15n;
    let gasLimit = 21_000n;
    if (kind < 4) to = addrs[r.int(addrs.length)];
    else if (kind < 5)
      to = r.bytes(20); // a new account (or none, at value 0)
    else if (kind < 6) to = addrs[s];
    else if (kind < 8) {
      to = store;
      data = Uint8Array.from([...word(r.int(6)), ...(r.chance(0.3) ? word(0) : r.bytes(32))]);
      gasLimit = 100_000n;
    } else if (kind < 9) {
      to = revert;
      gasLimit = 60_000n;
    } else {
      to = undefined;
      data = INIT;
      value = 0n;
      gasLimit = 200_000n;
    }
    let nonce = nonces[s]!;
    if (r.chance(0.04))
      nonce += 1n; // invalid: nonce too high
    else nonces[s]! += 1n;
    if (r.chance(0.03)) value = 10n ** 30n; // invalid: cannot pay
    const fields = { nonce, to, data, value, gasLimit };
    const tx = legacy
      ? createLegacyTx({ ...fields, gasPrice: 3_000_000_000n }, { common }).sign(keys[s]!)
      : createFeeMarket1559Tx(
          {
            ...fields,
            maxFeePerGas: 4_000_000_000n,
            maxPriorityFeePerGas: BigInt(r.int(3)) * 1_000_000_000n,
          },
          { common },
        ).sign(keys[s]!);
    if (value === 10n ** 30n) nonces[s]! -= nonce === nonces[s]! - 1n ? 1n : 0n;
    txs.push({ tx, sender: addrs[s]! });
  }
  return { keys, addrs, store, revert, txs };
}

function genesisTree(f: Fixture): StateTree {
  const st = new StateTree();
  for (const a of f.addrs) st.putAccount(a, makeAccount({ balance: 10n ** 20n }));
  st.putAccount(f.store, makeAccount({ codeHash: st.putCode(STORE) }));
  st.putStorage(
    f.store,
    new Uint8Array(32).fill(0).map((_, i) => (i === 31 ? 1 : 0)),
    Uint8Array.of(9),
  );
  st.putAccount(f.revert, makeAccount({ codeHash: st.putCode(REVERT) }));
  return st;
}

async function reference(f: Fixture) {
  const sm = new MerkleStateManager();
  for (const a of f.addrs) await sm.putAccount(new Address(a), new Account(0n, 10n ** 20n));
  await sm.putAccount(new Address(f.store), new Account());
  await sm.putCode(new Address(f.store), STORE);
  const one = new Uint8Array(32);
  one[31] = 1;
  await sm.putStorage(new Address(f.store), one, Uint8Array.of(9));
  await sm.putAccount(new Address(f.revert), new Account());
  await sm.putCode(new Address(f.revert), REVERT);
  const vm = await createVM({ common, stateManager: sm });
  const block = createBlock(
    { header: { ...env, baseFeePerGas: rules.baseFeePerGas, difficulty: 0n } },
    { common, skipConsensusFormatValidation: true },
  );
  const outcomes: ({ status: number; gasUsed: bigint } | 'refused')[] = [];
  let used = 0n;
  for (const { tx } of f.txs) {
    try {
      const res = await runTx(vm, { tx, block, blockGasUsed: used, skipHardForkValidation: true });
      used += res.totalGasSpent;
      outcomes.push({ status: (res.receipt as { status: number }).status, gasUsed: res.totalGasSpent });
    } catch {
      outcomes.push('refused');
    }
  }
  const cb = new Address(env.coinbase);
  const m = (await sm.getAccount(cb)) ?? new Account();
  m.balance += rules.blockReward;
  await sm.putAccount(cb, m);
  return { root: await sm.getStateRoot(), outcomes };
}

async function ours(state: StateTree, f: Fixture, fastTransfers: boolean, engine: EngineName) {
  const ex = await BlockExecutor.create(state, env, rules, { fastTransfers, common, engine });
  const outcomes: ({ status: number; gasUsed: bigint } | 'refused')[] = [];
  for (const { tx, sender } of f.txs) {
    const o = await ex.execute(tx, sender);
    if (o.status === 'included') outcomes.push({ status: o.receipt.status, gasUsed: o.receipt.gasUsed });
    else {
      if (o.status === 'missing') throw o.error;
      expect(o.status).toBe('invalid');
      outcomes.push('refused');
    }
  }
  return { ...(await ex.finish()), outcomes };
}

skipRevmWhereUnbuilt('BlockExecutor');

describe.each(ENGINES)('BlockExecutor [%s]', (engine) => {
  const f = fixture(42);
  let ref: Awaited<ReturnType<typeof reference>>;
  beforeAll(async () => {
    ref = await reference(f);
  });

  it('the fixture exercises every path: refusals, reverts, creations, new accounts', () => {
    const refused = ref.outcomes.filter((o) => o === 'refused').length;
    const reverted = ref.outcomes.filter((o) => o !== 'refused' && o.status === 0).length;
    expect(refused).toBeGreaterThan(2);
    expect(reverted).toBeGreaterThan(2);
    expect(f.txs.some(({ tx }) => tx.to === undefined)).toBe(true);
  });

  it.each([true, false])("gives ethereumjs' receipts and state root (fast transfers %s)", async (fast) => {
    const res = await ours(genesisTree(f), f, fast, engine);
    expect(res.outcomes).toEqual(ref.outcomes);
    expect(toHex(res.stateRoot)).toBe(toHex(ref.root));
  });

  it('over a tree known only by its root, every node from a bag of what a first run read; the updates replay', async () => {
    // A client's flow: execute once on a full state, collect what was read, prove exactly that.
    const full = genesisTree(f);
    const probe = await BlockExecutor.create(genesisTree(f), env, rules, { common, engine });
    const accounts = new Set<string>();
    const slots = new Map<string, Set<string>>();
    for (const { tx, sender } of f.txs) {
      await probe.execute(tx, sender);
      for (const a of probe.accesses.accounts) accounts.add(a);
      for (const [a, ss] of probe.accesses.slots) {
        const mine = slots.get(a) ?? new Set<string>();
        for (const x of ss) mine.add(x);
        slots.set(a, mine);
      }
    }
    accounts.add(keyOf(env.coinbase));
    const bag = new NodeBag();
    bag.addNodes(full.proveAccounts([...accounts].map(keyBytes)));
    for (const [a, ss] of slots) bag.addNodes(full.proveStorageMany(keyBytes(a), [...ss].map(keyBytes)));
    const codes = new Map([STORE, REVERT].map((c) => [toHex(keccak.keccak256(c)), c]));
    const partial = StateTree.fromRootHash(full.root(), {
      resolver: (h) => bag.get(h) ?? codes.get(toHex(h)),
    });
    const res = await ours(partial, f, true, engine);
    expect(res.outcomes).toEqual(ref.outcomes);
    expect(toHex(res.stateRoot)).toBe(toHex(ref.root));

    const replay = genesisTree(f);
    applyUpdates(replay, res.updates);
    expect(toHex(replay.root())).toBe(toHex(ref.root));
  });

  it('a transaction whose witness is not in the bag is MISSING and leaves no trace', async () => {
    const full = genesisTree(f);
    const root = full.root();
    const partial = StateTree.fromRootHash(root, { resolver: () => undefined });
    const ex = await BlockExecutor.create(partial, env, rules, { common, engine });
    const limit = Error.stackTraceLimit;
    const o = await ex.execute(f.txs[0]!.tx, f.txs[0]!.sender);
    expect(o.status).toBe('missing');
    if (o.status === 'missing') {
      expect(o.error.code).toBe(ExecutionErrorCode.MissingNode);
      expect(bytesEqual(o.error.meta.address as Uint8Array, f.txs[0]!.sender)).toBe(true);
      expect(o.error.message).toContain('neither in the top layer nor in the bag (MISSING_NODE: node ');
    }
    // Missing-node errors are made without a stack trace: every other error still gets one.
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error('after').stack).toContain('blockExecutor.test');
    expect(ex.blockGasUsed).toBe(0n);
    expect(toHex(partial.root())).toBe(toHex(root));
  });

  it('a read leaves a storage root the tree has yet to compute as it is; the block root is the same', async () => {
    // A state built by writes (a genesis) has every storage root stale until asked: reading an
    // account for its balance must not hash its storage trie (100,000 token slots in the bench).
    const holder = new Uint8Array(20).fill(0x40);
    const one = new Uint8Array(32);
    one[31] = 1;
    // PUSH20 holder BALANCE POP STOP: reads the holder, writes nothing of it.
    const reads = Uint8Array.from([0x73, ...holder, 0x31, 0x50, 0x00]);
    const reader = new Uint8Array(20).fill(0x41);
    const build = () => {
      const st = genesisTree(f);
      st.putAccount(holder, makeAccount({ balance: 1n }));
      st.putStorage(holder, one, Uint8Array.of(5));
      st.putAccount(reader, makeAccount({ codeHash: st.putCode(reads) }));
      return st;
    };
    const tx = createLegacyTx(
      { nonce: 0n, to: reader, gasLimit: 60_000n, gasPrice: 2_000_000_000n },
      { common },
    ).sign(f.keys[0]!);
    const roots: string[] = [];
    for (const hashedFirst of [false, true]) {
      const st = build();
      if (hashedFirst) st.root();
      const ex = await BlockExecutor.create(st, env, rules, { common, engine, fastTransfers: false });
      expect((await ex.execute(tx, f.addrs[0]!)).status).toBe('included');
      expect(st.storageRootStale(st.hashKey(holder))).toBe(!hashedFirst);
      roots.push(toHex((await ex.finish()).stateRoot));
    }
    expect(roots[0]).toBe(roots[1]);
  });

  it('refuses with precise codes: nonce, funds, fee below the base fee, gas', async () => {
    const ex = await BlockExecutor.create(genesisTree(f), env, rules, { common, engine });
    const k = f.keys[0]!;
    const to = f.addrs[1]!;
    const cases: [TypedTransaction, ExecutionErrorCode, RegExp][] = [
      [
        createLegacyTx({ nonce: 5n, to, gasLimit: 21_000n, gasPrice: 2_000_000_000n }, { common }).sign(k),
        ExecutionErrorCode.BadNonce,
        /nonce too high/,
      ],
      [
        createLegacyTx(
          { nonce: 0n, to, gasLimit: 21_000n, gasPrice: 2_000_000_000n, value: 10n ** 21n },
          { common },
        ).sign(k),
        ExecutionErrorCode.InsufficientFunds,
        /insufficient funds/,
      ],
      [
        createLegacyTx({ nonce: 0n, to, gasLimit: 21_000n, gasPrice: 1n }, { common }).sign(k),
        ExecutionErrorCode.BadGas,
        /less than block base fee/,
      ],
      [
        createLegacyTx({ nonce: 0n, to, gasLimit: 20_000n, gasPrice: 2_000_000_000n }, { common }).sign(k),
        ExecutionErrorCode.BadGas,
        /intrinsic gas too low/,
      ],
    ];
    for (const [tx, code, msg] of cases) {
      const o = await ex.execute(tx, f.addrs[0]!);
      if (o.status === 'missing') throw o.error;
      expect(o.status).toBe('invalid');
      if (o.status === 'invalid') {
        expect(o.error.code).toBe(code);
        expect(o.error.message).toMatch(msg);
      }
    }
  });
});

/** What a storage node does with a block's updates, on a full state. */
function applyUpdates(st: StateTree, updates: readonly AccountUpdate[]): void {
  for (const u of updates) applyAccountUpdate(st, u);
}
