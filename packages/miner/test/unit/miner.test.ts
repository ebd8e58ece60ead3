/**
 * The miner in-process: transactions executed from its top layer plus bags a "client" builds
 * from a full state; forged bag nodes refused; a witness stale only above an unrelated change
 * revised, one whose account changed reported stale; blocks verified and adopted by a second
 * miner, a block with a wrong root refused, a fork resolved to the heavier chain.
 */

import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, makeAccount, StateTree, toHex } from '@monsoon/dsm-tree';
import { defaultChainRules, ExecutionErrorCode, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { Miner } from '@monsoon/miner';
import { type AccountUpdate, decodeHeader, encodeHeader, TxStatus } from '@monsoon/protocol';
import { fundedGenesis } from '@monsoon/test-utils';
import { signedTransfer } from '../helpers/transfer.js';

const rules = { ...defaultChainRules, chainId: 4242n };
const common = makeCommon(rules.chainId);
const N = 96;
const keys = Array.from({ length: N }, (_, i) => keccak.keccak256(Uint8Array.of(7, i)));
const addrs = keys.map((k) => privateToAddress(k));
const shardOf = (a: Uint8Array) => keccak.keccak256(a)[0]! >> 4;

const genesis = fundedGenesis(addrs, rules.chainId, rules.gasLimit);

/** What a client holds: the full state, kept current by replaying each block's updates. */
class FullState {
  readonly st = new StateTree();
  constructor() {
    for (const a of genesis.alloc) this.st.putAccount(a.address, makeAccount({ balance: a.balance }));
  }
  bag(addresses: Uint8Array[]): Uint8Array[] {
    return this.st.proveAccounts(addresses);
  }
  apply(updates: readonly AccountUpdate[]): void {
    for (const u of updates) {
      if (u.deleted) this.st.deleteAccount(u.address);
      else
        this.st.putAccount(
          u.address,
          makeAccount({ nonce: u.nonce, balance: u.balance, codeHash: EMPTY_CODE_HASH }),
        );
    }
  }
}

const nonces = new Map<number, bigint>();
function transfer(from: number, to: Uint8Array, value = 1000n) {
  const nonce = nonces.get(from) ?? 0n;
  nonces.set(from, nonce + 1n);
  return signedTransfer(common, keys[from]!, nonce, to, value);
}

const coinbase = new Uint8Array(20).fill(0xc0);
const make = (difficulty = 0n) => Miner.create(genesis, { rules, coinbase, retention: 2, difficulty });

describe('Miner', () => {
  it('executes from top layer + bags, seals a block whose updates replay to its state root', async () => {
    nonces.clear();
    const m = await make();
    const full = new FullState();
    const root0 = full.st.root();
    expect(toHex(m.head.header.stateRoot)).toBe(toHex(root0));
    const txs = [transfer(0, addrs[1]!), transfer(2, addrs[3]!), transfer(0, addrs[4]!)];
    const res = await m.submit({
      transactions: txs,
      bag: full.bag([addrs[0]!, addrs[1]!, addrs[2]!, addrs[3]!, addrs[4]!, coinbase]),
      prefetchedRoot: root0,
    });
    expect(res.results.map((r) => r.status)).toEqual([
      TxStatus.Accepted,
      TxStatus.Accepted,
      TxStatus.Accepted,
    ]);
    const sealed = await m.seal();
    expect(sealed.block.header.number).toBe(1n);
    expect(sealed.block.transactions).toHaveLength(3);
    full.apply(sealed.shards.flatMap((s) => s.accounts));
    expect(toHex(full.st.root())).toBe(toHex(sealed.block.header.stateRoot));
    for (const r of sealed.expectedRoots) {
      expect(toHex(r.root)).toBe(toHex(full.st.accounts.refAt([r.shard]) ?? new Uint8Array(0)));
    }
    expect(sealed.shards.find((s) => s.shard === shardOf(addrs[0]!))!.accounts.length).toBeGreaterThan(0);
    expect(full.st.getAccount(addrs[1]!)!.balance).toBe(10n ** 21n + 1000n);
  });

  it("adopts a peer's block whose reward goes to a coinbase below the top layer (its path only in the block's bag)", async () => {
    // A coinbase whose key shares its first byte with an account's: its path leaves the top layer
    // (r = 2), so the receiver has only stubs there and needs the sealer's nodes for the reward.
    const firstBytes = new Set(addrs.map((a) => keccak.keccak256(a)[0]));
    const other = Array.from({ length: 256 }, (_, j) =>
      Uint8Array.from({ length: 20 }, (_, k) => (k === 19 ? j : 0xc7)),
    ).find((a) => firstBytes.has(keccak.keccak256(a)[0]))!;
    const sealer = await Miner.create(genesis, { rules, coinbase: other, retention: 2, difficulty: 0n });
    const receiver = await make();
    const empty = await sealer.seal();
    const adopted = await receiver.receiveBlock(empty.peer);
    expect(adopted?.block.header.number).toBe(1n);
    expect(toHex(receiver.head.header.stateRoot)).toBe(toHex(empty.block.header.stateRoot));
  });

  it('refuses a transaction whose bag has a forged node, and a bad signature, each with a reason', async () => {
    nonces.clear();
    const m = await make();
    const full = new FullState();
    const forgedState = new FullState();
    forgedState.st.putAccount(addrs[5]!, makeAccount({ balance: 10n ** 30n }));
    const tx = transfer(5, addrs[6]!, 10n ** 25n); // only the forged balance could pay for it
    const res = await m.submit({
      transactions: [tx],
      bag: [...forgedState.bag([addrs[5]!]), ...full.bag([addrs[6]!, coinbase])],
      prefetchedRoot: full.st.root(),
    });
    expect(res.results[0]!.status).toBe(TxStatus.Invalid);
    expect(res.results[0]!.reason).toMatch(ExecutionErrorCode.MissingNode);
    const garbled = transfer(7, addrs[8]!);
    garbled[garbled.length - 5]! ^= 0xff;
    const bad = await m.submit({
      transactions: [garbled, Uint8Array.of(1, 2, 3)],
      bag: [],
      prefetchedRoot: full.st.root(),
    });
    expect(bad.results.map((r) => r.status)).toEqual([TxStatus.Invalid, TxStatus.Invalid]);
    expect(m.pendingCount).toBe(0);
  });

  it('revises a witness stale only elsewhere or by a recent block; reports stale, by key, one whose account changed longer ago', async () => {
    nonces.clear();
    const m = await make();
    const full = new FullState();
    const oldRoot = full.st.root();
    const a = 10;
    const other = addrs.findIndex(
      (x, i) => i > 20 && shardOf(x) !== shardOf(addrs[a]!) && shardOf(x) !== shardOf(addrs[a + 1]!),
    );
    const oldBagA = full.bag([addrs[a]!, addrs[a + 1]!, coinbase]);
    // Block 1 changes an account in another shard only.
    await m.submit({
      transactions: [transfer(other, addrs[other]!)],
      bag: full.bag([addrs[other]!, coinbase]),
      prefetchedRoot: oldRoot,
    });
    const b1 = await m.seal();
    full.apply(b1.shards.flatMap((s) => s.accounts));
    // A's bag from before block 1 is revised and the transaction runs.
    const r1 = await m.submit({
      transactions: [transfer(a, addrs[a + 1]!)],
      bag: oldBagA,
      prefetchedRoot: oldRoot,
    });
    expect(r1.results[0]!.status).toBe(TxStatus.Accepted);
    const b2 = await m.seal();
    full.apply(b2.shards.flatMap((s) => s.accounts));
    // A changed in block 2, but the miner keeps the paths its last blocks changed: the old bag
    // is revised with them and the transaction runs.
    const r2 = await m.submit({
      transactions: [transfer(a, addrs[a + 1]!)],
      bag: oldBagA,
      prefetchedRoot: oldRoot,
    });
    expect(r2.results[0]!.status).toBe(TxStatus.Accepted);
    full.apply((await m.seal()).shards.flatMap((s) => s.accounts));
    // Four blocks later (none touching A) A's path is forgotten: the old bag cannot cover A.
    for (let i = 0; i < 4; i++) full.apply((await m.seal()).shards.flatMap((s) => s.accounts));
    const r4 = await m.submit({
      transactions: [transfer(a, addrs[a + 1]!)],
      bag: oldBagA,
      prefetchedRoot: oldRoot,
    });
    expect(r4.results[0]!.status).toBe(TxStatus.Stale);
    expect(r4.results[0]!.staleKeys.map(toHex)).toContain(toHex(keccak.keccak256(addrs[a]!)));
    // Refetched at the head, it goes through.
    nonces.set(a, (nonces.get(a) ?? 1n) - 1n);
    const r3 = await m.submit({
      transactions: [transfer(a, addrs[a + 1]!)],
      bag: full.bag([addrs[a]!, addrs[a + 1]!, coinbase]),
      prefetchedRoot: full.st.root(),
    });
    expect(r3.results[0]!.status).toBe(TxStatus.Accepted);
  });

  it('a peer re-executes and adopts a block, refuses one with a wrong root; forks resolve to the heavier chain', async () => {
    nonces.clear();
    const m1 = await make(1n);
    const m2 = await make(1n);
    const full = new FullState();
    const root0 = full.st.root();
    await m1.submit({
      transactions: [transfer(30, addrs[31]!)],
      bag: full.bag([addrs[30]!, addrs[31]!, coinbase]),
      prefetchedRoot: root0,
    });
    const a1 = await m1.seal();

    const tampered = {
      ...a1.peer,
      headerRlp: encodeHeader({ ...decodeHeader(a1.peer.headerRlp), stateRoot: new Uint8Array(32).fill(1) }),
    };
    await expect(m2.receiveBlock(tampered)).rejects.toThrow(/BAD_BLOCK/);

    // m2 mines its own block 1 from other transactions: a fork at height 1.
    await m2.submit({
      transactions: [transfer(40, addrs[41]!)],
      bag: full.bag([addrs[40]!, addrs[41]!, coinbase]),
      prefetchedRoot: root0,
    });
    const b1 = await m2.seal();
    expect(toHex(b1.block.hash)).not.toBe(toHex(a1.block.hash));
    await m2.receiveBlock(a1.peer); // same weight: m2 keeps its own head
    expect(toHex(m2.head.hash)).toBe(toHex(b1.block.hash));

    const a2 = await m1.seal(); // m1's branch grows heavier
    await m2.receiveBlock(a2.peer);
    expect(toHex(m2.head.hash)).toBe(toHex(a2.block.hash));
    expect(toHex(m2.head.header.stateRoot)).toBe(toHex(m1.head.header.stateRoot));
    // m2's own transaction (from the losing branch) goes back into its pending block.
    expect(m2.counters.requeued).toBe(1);
    expect(m2.pendingCount).toBe(1);
  });
});

describe('a full pending block', () => {
  it('is sealed to make room, and every block sealed is heard by onSealed (a node sends it on)', async () => {
    nonces.clear();
    const m = await Miner.create(genesis, { rules, maxBlockTransactions: 2 });
    const heard: bigint[] = [];
    m.onSealed = (s) => heard.push(s.block.header.number);
    const full = new FullState();
    const res = await m.submit({
      transactions: [40, 41, 42, 43, 44].map((i) => transfer(i, addrs[50]!)),
      bag: full.bag([40, 41, 42, 43, 44, 50].map((i) => addrs[i]!)),
      prefetchedRoot: full.st.root(),
    });
    expect(res.results.map((r) => r.status)).toEqual(Array(5).fill(TxStatus.Accepted));
    await m.seal();
    expect(heard).toEqual([1n, 2n, 3n]);
    expect(m.head.header.number).toBe(3n);
    expect(m.head.transactions).toHaveLength(1);
  });
});
