/**
 * What BlockExecutor does itself instead of @ethereumjs/vm's runTx, against runTx on a full
 * @ethereumjs/statemanager state: gas refunds (EIP-3529 cap), access lists on EIP-2930 and
 * EIP-1559 transactions, contract creation (plain, reverting, out of gas), out-of-gas calls,
 * transactions to precompiles (with and without data), value to oneself, the coinbase as
 * sender and as recipient, touched empty accounts (EIP-161), self-destructs, calls that move
 * value inside the EVM. Same receipts (status, gas, logs, created address) and state root, with
 * the transfer fast path on and off, for @ethereumjs/tx transactions and for SignedTx decoded
 * from their bytes (what the miner executes), over a full tree and over a tree known only by
 * its root whose nodes come from a bag. The block's logical updates replay to the same root.
 */
import { createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import {
  type AccessList,
  createAccessList2930Tx,
  createFeeMarket1559Tx,
  createLegacyTx,
  type TypedTransaction,
} from '@ethereumjs/tx';
import { Account, Address, privateToAddress } from '@ethereumjs/util';
import { createVM, runTx } from '@ethereumjs/vm';
import { describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, makeAccount, NodeBag, StateTree, toHex } from '@monsoon/dsm-tree';
import {
  type BlockEnv,
  BlockExecutor,
  decodeSignedTx,
  defaultChainRules,
  type ExecutableTx,
  emptyAccessSet,
  makeCommon,
  mergeAccessSet,
  preExecute,
  witnessOf,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { applyAccountUpdate } from '@monsoon/protocol';

const rules = { ...defaultChainRules, chainId: 4242n };
const common: Common = makeCommon(rules.chainId);

const hexBytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
const word = (n: number | bigint): Uint8Array => {
  const b = new Uint8Array(32);
  let v = BigInt(n);
  for (let i = 31; i >= 0 && v > 0n; i--, v >>= 8n) b[i] = Number(v & 0xffn);
  return b;
};
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));

/** SSTORE(cd[0:32], cd[32:64]); LOG1(topic cd[0:32]). */
const STORE = hexBytes('602035600035556000356000600' + '0a100');
/** SSTORE(cd[0:32], cd[32:64]); SSTORE(cd[0:32], cd[64:96]): set and reset in one transaction. */
const STORE2 = hexBytes('602035600035556040356000355500');
/** SELFDESTRUCT(cd[0:32]). */
const DESTRUCT = hexBytes('600035ff');
/** An endless loop: runs out of gas. */
const LOOP = hexBytes('5b600056');
/** CALL(gas, cd[0:32], callvalue, no data): moves value on, to anything (a precompile too). */
const FORWARD = hexBytes('60006000600060003460003' + '55af15000');
/** REVERT(0, 0). */
const REVERT = hexBytes('60006000fd');

/** Init code that returns `runtime` as the new contract's code. */
function initFor(runtime: Uint8Array): Uint8Array {
  const n = runtime.length;
  return cat(Uint8Array.from([0x60, n, 0x60, 12, 0x60, 0, 0x39, 0x60, n, 0x60, 0, 0xf3]), runtime);
}

interface GenesisAccount {
  readonly address: Uint8Array;
  readonly balance: bigint;
  readonly nonce?: bigint;
  readonly code?: Uint8Array;
  readonly storage?: readonly [Uint8Array, Uint8Array][];
}

interface Scenario {
  readonly name: string;
  readonly env: BlockEnv;
  readonly genesis: readonly GenesisAccount[];
  readonly txs: readonly { readonly tx: TypedTransaction; readonly sender: Uint8Array }[];
}

type Outcome =
  | 'refused'
  | {
      status: number;
      gasUsed: bigint;
      cumulative: bigint;
      logs: string[];
      created: string | undefined;
    };

const KEYS = Array.from({ length: 6 }, (_, i) => keccak.keccak256(Uint8Array.of(7, i)));
const ADDRS = KEYS.map((k) => privateToAddress(k));
const at = (b: number): Uint8Array => new Uint8Array(20).fill(b);
const STORE_AT = at(0x51);
const STORE2_AT = at(0x52);
const DESTRUCT_AT = at(0xde);
const LOOP_AT = at(0x10);
const FORWARD_AT = at(0xf0);
const REVERT_AT = at(0x7e);
/** An account that exists and is empty (nonce 0, balance 0, no code): EIP-161 removes it when touched. */
const EMPTY_AT = at(0xe0);
const precompile = (n: number): Uint8Array => {
  const a = new Uint8Array(20);
  a[19] = n;
  return a;
};

function baseGenesis(): GenesisAccount[] {
  return [
    ...ADDRS.map((address) => ({ address, balance: 10n ** 21n })),
    {
      address: STORE_AT,
      balance: 0n,
      code: STORE,
      storage: [1, 2, 3, 4, 5].map((i) => [word(i), word(100 + i)] as [Uint8Array, Uint8Array]),
    },
    { address: STORE2_AT, balance: 0n, code: STORE2 },
    { address: DESTRUCT_AT, balance: 5n * 10n ** 18n, code: DESTRUCT, storage: [[word(9), word(9)]] },
    { address: LOOP_AT, balance: 0n, code: LOOP },
    { address: FORWARD_AT, balance: 0n, code: FORWARD },
    { address: REVERT_AT, balance: 0n, code: REVERT },
    { address: EMPTY_AT, balance: 0n },
  ];
}

/** Signs transactions from each key, nonces counted per sender. */
class Signer {
  private readonly nonces = new Map<number, bigint>();
  readonly txs: { tx: TypedTransaction; sender: Uint8Array }[] = [];

  add(
    from: number,
    kind: 'legacy' | '2930' | '1559',
    fields: {
      to?: Uint8Array;
      value?: bigint;
      data?: Uint8Array;
      gasLimit?: bigint;
      accessList?: AccessList;
      tip?: bigint;
    },
  ): void {
    const nonce = this.nonces.get(from) ?? 0n;
    this.nonces.set(from, nonce + 1n);
    const base = {
      nonce,
      to: fields.to,
      value: fields.value ?? 0n,
      data: fields.data ?? new Uint8Array(0),
      gasLimit: fields.gasLimit ?? 200_000n,
    };
    const accessList = fields.accessList ?? [];
    const tx =
      kind === 'legacy'
        ? createLegacyTx({ ...base, gasPrice: 3_000_000_000n }, { common })
        : kind === '2930'
          ? createAccessList2930Tx({ ...base, gasPrice: 3_000_000_000n, accessList }, { common })
          : createFeeMarket1559Tx(
              {
                ...base,
                maxFeePerGas: 5_000_000_000n,
                maxPriorityFeePerGas: fields.tip ?? 1_000_000_000n,
                accessList,
              },
              { common },
            );
    this.txs.push({ tx: tx.sign(KEYS[from]!), sender: ADDRS[from]! });
  }
}

const hexAddr = (a: Uint8Array): `0x${string}` => `0x${toHex(a)}`;
const ENV = (coinbase: Uint8Array): BlockEnv => ({
  number: 3n,
  timestamp: 1_700_000_100n,
  coinbase,
  gasLimit: 30_000_000n,
});

function scenarios(): Scenario[] {
  const out: Scenario[] = [];

  // Refunds, access lists, creations, out of gas, precompiles, self-destructs, EVM value moves.
  const a = new Signer();
  a.add(0, '1559', { to: STORE_AT, data: cat(word(1), word(0)) }); // clear: refund
  a.add(1, 'legacy', { to: STORE_AT, data: cat(word(2), word(0)), gasLimit: 30_000n }); // refund above the cap
  a.add(2, '1559', { to: STORE2_AT, data: cat(word(7), word(1), word(0)) }); // set and reset
  a.add(3, '2930', {
    to: STORE_AT,
    data: cat(word(3), word(77)),
    accessList: [
      { address: hexAddr(STORE_AT), storageKeys: [hexAddr(word(3)), hexAddr(word(4))] },
      { address: hexAddr(ADDRS[5]!), storageKeys: [] },
    ],
  });
  a.add(4, '1559', {
    to: STORE_AT,
    data: cat(word(4), word(0)),
    accessList: [{ address: hexAddr(STORE_AT), storageKeys: [hexAddr(word(4))] }],
  });
  a.add(5, '1559', { to: FORWARD_AT, value: 1000n, data: word(BigInt(`0x${toHex(ADDRS[0]!)}`)) }); // value on
  a.add(0, '1559', { to: FORWARD_AT, value: 7n, data: word(99n) }); // value to a new account via CALL
  a.add(1, '1559', { to: FORWARD_AT, value: 5n, data: word(2n) }); // CALL to a precompile, with value
  a.add(2, 'legacy', { to: LOOP_AT, gasLimit: 60_000n }); // out of gas
  a.add(3, '1559', { to: REVERT_AT, gasLimit: 60_000n }); // reverts
  a.add(4, '1559', { data: initFor(STORE) }); // creation
  a.add(5, 'legacy', { data: initFor(STORE), value: 10n ** 15n }); // creation with value
  a.add(0, '1559', { data: REVERT }); // creation that reverts
  a.add(1, '1559', { data: LOOP, gasLimit: 100_000n }); // creation out of gas
  a.add(2, '1559', { to: precompile(1), value: 3n }); // plain-looking transfer to ECRECOVER
  a.add(3, 'legacy', { to: precompile(4), value: 0n }); // to IDENTITY, nothing sent
  a.add(4, '1559', { to: precompile(2), data: Uint8Array.of(1, 2, 3) }); // SHA256 with data
  a.add(5, '1559', { to: precompile(1), data: new Uint8Array(128).fill(1), gasLimit: 25_000n }); // ECRECOVER
  a.add(0, '1559', { to: precompile(9), data: new Uint8Array(3) }); // BLAKE2F with bad input: fails
  a.add(1, '1559', { to: DESTRUCT_AT, data: word(BigInt(`0x${toHex(ADDRS[2]!)}`)) }); // self-destruct
  a.add(2, '1559', { to: DESTRUCT_AT, data: word(1n) }); // a destroyed account again (now empty)
  a.add(3, '1559', { to: ADDRS[3]!, value: 12345n }); // value to oneself
  a.add(3, 'legacy', { to: ADDRS[3]!, value: 0n }); // nothing to oneself
  a.add(4, '1559', { to: EMPTY_AT, value: 0n }); // touches an empty account: it goes
  a.add(5, '1559', { to: at(0x99), value: 0n }); // touches nothing new
  a.add(5, '1559', { to: at(0x98), value: 1n }); // creates an account
  a.add(0, '1559', { to: STORE_AT, data: cat(word(5), word(0)), tip: 0n }); // no tip: coinbase gets 0
  out.push({ name: 'EVM features', env: ENV(at(0xcb)), genesis: baseGenesis(), txs: a.txs });

  // The coinbase sends, receives, and is paid nothing while existing empty.
  const b = new Signer();
  b.add(0, '1559', { to: ADDRS[1]!, value: 10n }); // coinbase is the sender
  b.add(1, '1559', { to: ADDRS[0]!, value: 20n }); // coinbase is the recipient
  b.add(0, 'legacy', { to: ADDRS[0]!, value: 30n }); // coinbase sends to itself
  b.add(0, '1559', { to: STORE_AT, data: cat(word(1), word(3)) }); // coinbase calls a contract
  b.add(2, '1559', { to: FORWARD_AT, value: 9n, data: word(BigInt(`0x${toHex(ADDRS[0]!)}`)) });
  out.push({ name: 'coinbase is a sender', env: ENV(ADDRS[0]!), genesis: baseGenesis(), txs: b.txs });

  const c = new Signer();
  c.add(1, '1559', { to: ADDRS[2]!, value: 10n, tip: 0n }); // pays the empty coinbase nothing
  c.add(2, '1559', { to: EMPTY_AT, value: 0n, tip: 0n }); // the coinbase is the recipient
  out.push({ name: 'empty coinbase', env: ENV(EMPTY_AT), genesis: baseGenesis(), txs: c.txs });
  return out;
}

async function reference(s: Scenario): Promise<{ root: string; outcomes: Outcome[] }> {
  const sm = new MerkleStateManager();
  for (const g of s.genesis) {
    const address = new Address(g.address);
    await sm.putAccount(address, new Account(g.nonce ?? 0n, g.balance));
    if (g.code !== undefined) await sm.putCode(address, g.code);
    for (const [slot, value] of g.storage ?? []) await sm.putStorage(address, slot, value);
  }
  const vm = await createVM({ common, stateManager: sm });
  const block = createBlock(
    { header: { ...s.env, baseFeePerGas: rules.baseFeePerGas, difficulty: 0n } },
    { common, skipConsensusFormatValidation: true },
  );
  const outcomes: Outcome[] = [];
  let used = 0n;
  for (const { tx } of s.txs) {
    try {
      const r = await runTx(vm, { tx, block, blockGasUsed: used, skipHardForkValidation: true });
      used += r.totalGasSpent;
      const receipt = r.receipt as { status: number; logs: [Uint8Array, Uint8Array[], Uint8Array][] };
      outcomes.push({
        status: receipt.status,
        gasUsed: r.totalGasSpent,
        cumulative: used,
        logs: receipt.logs.map(([a, t, d]) => `${toHex(a)}:${t.map(toHex).join(',')}:${toHex(d)}`),
        created: r.createdAddress === undefined ? undefined : toHex(r.createdAddress.bytes),
      });
    } catch {
      outcomes.push('refused');
    }
  }
  const cb = new Address(s.env.coinbase);
  const m = (await sm.getAccount(cb)) ?? new Account();
  m.balance += rules.blockReward;
  await sm.putAccount(cb, m);
  return { root: toHex(await sm.getStateRoot()), outcomes };
}

function genesisTree(s: Scenario): StateTree {
  const st = new StateTree();
  for (const g of s.genesis) {
    const codeHash = g.code === undefined ? EMPTY_CODE_HASH : st.putCode(g.code);
    st.putAccount(g.address, makeAccount({ nonce: g.nonce ?? 0n, balance: g.balance, codeHash }));
    for (const [slot, value] of g.storage ?? []) st.putStorage(g.address, slot, value);
  }
  return st;
}

type Input = 'ethereumjs' | 'SignedTx';

async function ours(state: StateTree, s: Scenario, fastTransfers: boolean, input: Input) {
  const ex = await BlockExecutor.create(state, s.env, rules, { fastTransfers, common });
  const outcomes: Outcome[] = [];
  for (const { tx, sender } of s.txs) {
    const t: TypedTransaction | ExecutableTx =
      input === 'SignedTx' ? decodeSignedTx(tx.serialize(), common) : tx;
    const o = await ex.execute(t, sender);
    if (o.status === 'missing') throw o.error;
    if (o.status === 'invalid') {
      outcomes.push('refused');
      continue;
    }
    const r = o.receipt;
    outcomes.push({
      status: r.status,
      gasUsed: r.gasUsed,
      cumulative: r.cumulativeGasUsed,
      logs: r.logs.map((l) => `${toHex(l.address)}:${l.topics.map(toHex).join(',')}:${toHex(l.data)}`),
      created: r.contractAddress === undefined ? undefined : toHex(r.contractAddress),
    });
  }
  return { ...(await ex.finish()), outcomes };
}

describe.each(scenarios())('BlockExecutor vs runTx: $name', (s) => {
  let ref: Awaited<ReturnType<typeof reference>>;

  it('the scenario does what it is meant to (checked on runTx)', async () => {
    ref = await reference(s);
    expect(ref.outcomes).not.toContain('refused');
    if (s.name === 'EVM features') {
      const statuses = ref.outcomes.map((o) => (o === 'refused' ? -1 : o.status));
      expect(statuses.filter((x) => x === 0).length).toBeGreaterThanOrEqual(4); // OOG, reverts, bad precompile input
      expect(ref.outcomes.filter((o) => o !== 'refused' && o.created !== undefined).length).toBeGreaterThan(
        1,
      );
    }
  });

  it.each<[boolean, Input]>([
    [true, 'ethereumjs'],
    [false, 'ethereumjs'],
    [true, 'SignedTx'],
    [false, 'SignedTx'],
  ])('same receipts and state root (fast transfers %s, %s input); updates replay', async (fast, input) => {
    const res = await ours(genesisTree(s), s, fast, input);
    expect(res.outcomes).toEqual(ref.outcomes);
    expect(toHex(res.stateRoot)).toBe(ref.root);
    const replay = genesisTree(s);
    for (const u of res.updates) applyAccountUpdate(replay, u); // what a storage node does
    expect(toHex(replay.root())).toBe(ref.root);
  });

  it('over a tree known only by its root, with a bag of what a first run read', async () => {
    // A client's flow: pre-execute on a full state, prove what was read (and the coinbase).
    const pre = await preExecute(genesisTree(s), s.env, rules, s.txs, { common });
    const access = emptyAccessSet();
    for (const a of pre.accesses) mergeAccessSet(access, a);
    access.accounts.add(Buffer.from(s.env.coinbase).toString('latin1'));
    const full = genesisTree(s);
    const bag = new NodeBag();
    bag.addNodes(witnessOf(full, access));
    const partial = StateTree.fromRootHash(full.root(), { source: bag });
    const res = await ours(partial, s, true, 'SignedTx');
    expect(res.outcomes).toEqual(ref.outcomes);
    expect(toHex(res.stateRoot)).toBe(ref.root);
  });
});

describe('a slot deletion whose collapse needs a node the bag lacks', () => {
  // Two slots whose trie keys part at the first nibble: zeroing one collapses the root branch
  // of the storage trie onto the other's leaf, which no read brought in.
  const s1 = word(1);
  let s2 = word(2);
  for (let i = 2; keccak.keccak256(s2)[0]! >> 4 === keccak.keccak256(s1)[0]! >> 4; i++) s2 = word(i);
  const env = ENV(at(0xcb));
  const genesis: GenesisAccount[] = [
    { address: ADDRS[0]!, balance: 10n ** 21n },
    {
      address: STORE_AT,
      balance: 0n,
      code: STORE,
      storage: [
        [s1, word(1)],
        [s2, word(2)],
      ],
    },
  ];
  const signer = new Signer();
  signer.add(0, '1559', { to: STORE_AT, data: cat(s1, word(0)) });
  const { tx, sender } = signer.txs[0]!;
  const scenario: Scenario = { name: 'collapse', env, genesis, txs: signer.txs };

  function partial(withSibling: boolean): StateTree {
    const full = genesisTree(scenario);
    const bag = new NodeBag();
    bag.addNodes(full.proveAccounts([ADDRS[0]!, STORE_AT, env.coinbase]));
    bag.addNodes(full.proveStorageMany(STORE_AT, withSibling ? [s1, s2] : [s1]));
    bag.add(STORE);
    return StateTree.fromRootHash(full.root(), { source: bag });
  }

  it('is MISSING and leaves the tree exactly as it was, nothing of the transaction applied', async () => {
    const state = partial(false);
    const root = toHex(state.root());
    const ex = await BlockExecutor.create(state, env, rules, { common });
    const o = await ex.execute(decodeSignedTx(tx.serialize(), common), sender);
    expect(o.status).toBe('missing');
    expect(ex.blockGasUsed).toBe(0n);
    expect(toHex(state.root())).toBe(root);
    const done = await ex.finish();
    expect(done.updates.map((u) => toHex(u.address))).toEqual([toHex(env.coinbase)]); // the reward only
  });

  it('with the sibling in the bag, gives what runTx gives', async () => {
    const ref = await reference(scenario);
    const res = await ours(partial(true), scenario, true, 'SignedTx');
    expect(res.outcomes).toEqual(ref.outcomes);
    expect(toHex(res.stateRoot)).toBe(ref.root);
  });
});
