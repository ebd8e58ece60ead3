/**
 * Reads the client trusts only as far as they are proven. In-process storage servers answer
 * BatchGet from a real state tree; a lying one claims a wrong balance under an honest proof,
 * another sends a forged proof node. Either is refused (BAD_PROOF, counted, the replica
 * marked) and the read is served by the honest replica; with only liars, the read fails with
 * an error naming the node — nothing unproven is ever returned or cached.
 */
import type { Server } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ClientErrorCode, isClientError, RemoteState, ShardedStorage } from '@monsoon/client';
import { makeAccount, NodeBag, StateTree } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { serveStorage } from '../helpers/storageStandIn.js';

const N = 64;
const addrs = Array.from({ length: N }, (_, i) => keccak.keccak256(Uint8Array.of(3, i)).subarray(12));
const token = addrs[0]!;
const slot = new Uint8Array(32).fill(7);
const state = new StateTree();
addrs.forEach((a, i) => {
  state.putAccount(a, makeAccount({ nonce: BigInt(i), balance: 1000n + BigInt(i) }));
});
state.putStorage(token, slot, Uint8Array.of(42));
/** A contract with code (a run loads it by its code hash, not through the trie). */
const coded = keccak.keccak256(Uint8Array.of(5, 1)).subarray(12);
const code = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) & 0xff);
state.putAccount(coded, makeAccount({ balance: 1n, codeHash: state.putCode(code) }));
const root = state.root();
const blockHash = new Uint8Array(32).fill(0xbb);

const servers: Server[] = [];
const at = { blockHash, stateRoot: root };
let honest: string;
let liarValue: string;
let liarProof: string;

beforeAll(async () => {
  const h = await serveStorage(state, blockHash, 'none');
  const v = await serveStorage(state, blockHash, 'value');
  const p = await serveStorage(state, blockHash, 'proof');
  servers.push(h.server, v.server, p.server);
  honest = h.address;
  liarValue = v.address;
  liarProof = p.address;
});
afterAll(() => {
  for (const s of servers) s.forceShutdown();
});

async function remoteOver(addresses: string[], compactLevels = 1) {
  const storage = await ShardedStorage.connect(addresses);
  return new RemoteState(storage, { compactLevels, maxCachedNodes: 1_000_000 });
}

describe('RemoteState', () => {
  it('reads proven accounts and slots from an honest node, and keeps the top levels out of bags', async () => {
    const remote = await remoteOver([honest]);
    const { value, served } = await remote.withState(
      at,
      [{ address: addrs[5]!, slots: [], code: false }],
      (t) => t.getAccount(addrs[5]!),
    );
    expect(value).toEqual(state.getAccount(addrs[5]!));
    const slotRead = await remote.withState(at, [{ address: token, slots: [slot], code: false }], (t) => {
      t.getAccount(token);
      return t.getStorage(token, slot);
    });
    expect(slotRead.value).toEqual(Uint8Array.of(42));
    // The root node is above the compaction level: used, but never put in a bag.
    const rootNode = state.proveAccount(addrs[5]!)[0]!;
    expect(served.values().some((n) => Buffer.from(n).equals(Buffer.from(rootNode)))).toBe(true);
    expect(
      remote
        .bagOf(served)
        .values()
        .some((n) => Buffer.from(n).equals(Buffer.from(rootNode))),
    ).toBe(false);
    expect(remote.bagOf(served).size).toBe(served.size - 1);
    // Added to a submission's bag the same way, with the bytes the transaction alone ships.
    const bag = new NodeBag();
    bag.add(rootNode);
    expect(remote.addToBag(bag, served)).toBe(served.byteSize - rootNode.length);
    expect(bag.size).toBe(served.size);
    expect(bag.byteSize).toBe(served.byteSize);
    remote.storage.close();
  });

  it('asks for the accounts of every shard one node holds in one BatchGet', async () => {
    const remote = await remoteOver([honest]);
    const wanted = addrs.slice(10, 30);
    const shards = new Set(wanted.map((a) => keccak.keccak256(a)[0]! >> 4));
    expect(shards.size).toBeGreaterThan(4);
    const { value } = await remote.withState(
      at,
      wanted.map((address) => ({ address, slots: [], code: false })),
      (t) => wanted.map((a) => t.getAccount(a)?.nonce),
    );
    expect(value).toEqual(wanted.map((_, i) => BigInt(10 + i)));
    expect(remote.counters.calls).toBe(1);
    remote.storage.close();
  });

  it('reads started in different event-loop turns within the batching window share one BatchGet', async () => {
    const storage = await ShardedStorage.connect([honest]);
    const read = (window: number, a: Uint8Array[]) => {
      const remote = new RemoteState(storage, {
        compactLevels: 1,
        maxCachedNodes: 1000,
        batchWindowMs: window,
      });
      const get = (x: Uint8Array) =>
        remote.withState(at, [{ address: x, slots: [], code: false }], (t) => t.getAccount(x)?.nonce);
      const first = get(a[0]!);
      // The second read starts a turn later (setImmediate: after this turn's I/O phase).
      const second = new Promise<bigint | undefined>((resolve, reject) =>
        setImmediate(() => get(a[1]!).then((r) => resolve(r.value), reject)),
      );
      return Promise.all([first.then((r) => r.value), second]).then((v) => ({
        v,
        calls: remote.counters.calls,
      }));
    };
    // Accounts of one route (the one node holds every shard): one BatchGet would do.
    expect(await read(1_000, [addrs[40]!, addrs[41]!])).toEqual({ v: [40n, 41n], calls: 1 });
    expect(await read(0, [addrs[42]!, addrs[43]!])).toEqual({ v: [42n, 43n], calls: 2 });
    storage.close();
  });

  it('fetches a slot of an account it already holds (the account alone being cached is not enough)', async () => {
    const remote = await remoteOver([honest]);
    await remote.withState(at, [{ address: token, slots: [], code: false }], (t) => t.getAccount(token));
    const calls = remote.counters.calls;
    const { value } = await remote.withState(at, [{ address: token, slots: [slot], code: false }], (t) =>
      t.getStorage(token, slot),
    );
    expect(value).toEqual(Uint8Array.of(42));
    expect(remote.counters.calls).toBe(calls + 1);
    remote.storage.close();
  });

  it('notes the code a run loads in its witness under its code hash, and ships it in the bag', async () => {
    const remote = await remoteOver([honest]);
    const codeHash = keccak.keccak256(code);
    const { value, served } = await remote.withState(at, [{ address: coded, slots: [], code: true }], (t) => {
      const a = t.getAccount(coded)!;
      return t.getCode(a.codeHash) ?? t.resolver?.(a.codeHash);
    });
    expect(value).toEqual(code);
    expect(served.get(codeHash)).toEqual(code);
    expect(remote.bagOf(served).get(codeHash)).toEqual(code);
    // A second run (a new tree, the code cached) notes it just the same.
    const again = await remote.withState(at, [{ address: coded, slots: [], code: true }], (t) =>
      t.resolver?.(codeHash),
    );
    expect(again.served.get(codeHash)).toEqual(code);
    remote.storage.close();
  });

  it('keeps every node above the compaction level out of bags when one answer holds many proofs', async () => {
    const remote = await remoteOver([honest], 2);
    const wanted = addrs.slice(20, 60);
    const { served } = await remote.withState(
      at,
      wanted.map((address) => ({ address, slots: [], code: false })),
      (t) => wanted.map((a) => t.getAccount(a)),
    );
    expect(remote.counters.calls).toBe(1);
    const inBag = new Set(
      remote
        .bagOf(served)
        .values()
        .map((n) => Buffer.from(n).toString('hex')),
    );
    for (const a of wanted) {
      const proof = state.proveAccount(a).map((n) => Buffer.from(n).toString('hex'));
      expect(proof.length).toBeGreaterThan(2);
      expect(proof.slice(0, 2).filter((n) => inBag.has(n))).toEqual([]);
      expect(proof.slice(2).every((n) => inBag.has(n))).toBe(true);
    }
    remote.storage.close();
  });

  it('hands every read at a root its whole witness, the branches decoded once shared by all', async () => {
    const remote = await remoteOver([honest], 0);
    const q = [{ address: token, slots: [slot], code: false }];
    const read = () => remote.withState(at, q, (t) => t.getStorage(token, slot));
    const first = await read();
    // The same keys again on a new tree: its branches come decoded already, not decoded
    // again; yet the witness, every node the run used, is the same.
    const again = await read();
    expect(again.read.tree).not.toBe(first.read.tree);
    expect(again.value).toEqual(Uint8Array.of(42));
    const nodesOf = (bag: { values(): Uint8Array[] }) =>
      new Set(bag.values().map((n) => Buffer.from(n).toString('hex')));
    const witness = nodesOf(again.served);
    expect(witness).toEqual(nodesOf(first.served));
    for (const n of state.accounts.prove(keccak.keccak256(token)))
      expect(witness.has(Buffer.from(n).toString('hex'))).toBe(true);
    remote.storage.close();
  });

  it("runs on a read tree handed on only at that tree's own root", async () => {
    const remote = await remoteOver([honest]);
    const q = [{ address: addrs[7]!, slots: [], code: false }];
    const first = await remote.withState(at, q, (t) => t.getAccount(addrs[7]!));
    const calls = remote.counters.calls;
    // The same root: the very tree is run on, nothing is fetched or looked up again.
    const again = await remote.withState(at, q, (t) => t, { from: first.read });
    expect(again.value).toBe(first.read.tree);
    expect(again.served).toBe(first.read.served);
    expect(remote.counters.calls).toBe(calls);

    // Keys the tree handed on lacks: fetched in one round once the run stops at the first.
    const more = [addrs[7]!, addrs[21]!, addrs[22]!].map((address) => ({ address, slots: [], code: false }));
    const both = await remote.withState(
      at,
      more,
      (t) => [t.getAccount(addrs[21]!)?.nonce, t.getAccount(addrs[22]!)?.nonce],
      { from: first.read },
    );
    expect(both.value).toEqual([21n, 22n]);
    expect(both.rounds).toBe(1);
    expect(remote.counters.calls).toBe(calls + 1);
    remote.storage.close();

    // Another root (the account changed): the tree proven under the first root is not read.
    const moved = new StateTree();
    addrs.forEach((a, i) => {
      moved.putAccount(
        a,
        makeAccount({ nonce: BigInt(i) + (i === 7 ? 1n : 0n), balance: 1000n + BigInt(i) }),
      );
    });
    const movedHash = new Uint8Array(32).fill(0xcc);
    const node = await serveStorage(moved, movedHash, 'none');
    servers.push(node.server);
    const other = await remoteOver([node.address]);
    const atMoved = { blockHash: movedHash, stateRoot: moved.root() };
    const read = await other.withState(atMoved, q, (t) => t.getAccount(addrs[7]!), { from: first.read });
    expect(read.value?.nonce).toBe(8n);
    expect(read.read).not.toBe(first.read);
    other.storage.close();
  });

  for (const [lie, liar] of [
    ['a wrong value', () => liarValue],
    ['a forged proof', () => liarProof],
  ] as const) {
    it(`refuses ${lie} and reads from the honest replica instead`, async () => {
      const remote = await remoteOver([liar(), honest]);
      // Make the liar the first choice.
      remote.storage.replicas[1]!.failures = 5;
      const { value } = await remote.withState(at, [{ address: addrs[9]!, slots: [], code: false }], (t) =>
        t.getAccount(addrs[9]!),
      );
      expect(value?.balance).toBe(1009n);
      expect(remote.counters.refused).toBe(1);
      expect(remote.storage.replicas[0]!.badAnswers).toBe(1);
      remote.storage.close();
    });

    it(`refuses ${lie} to readAccounts too (paths walked, no tree), and keeps only the honest read`, async () => {
      const remote = await remoteOver([liar(), honest]);
      remote.storage.replicas[1]!.failures = 5;
      const q = [{ address: addrs[9]!, slots: [], code: false }];
      const reads = await remote.readAccounts(at, q);
      expect(reads?.[0]?.account?.balance).toBe(1009n);
      expect(remote.counters.refused).toBe(1);
      // What is kept for the root is the honest read: asked again, nothing is fetched.
      const calls = remote.counters.calls;
      expect((await remote.readAccounts(at, q))?.[0]?.account?.balance).toBe(1009n);
      expect(remote.counters.calls).toBe(calls);
      remote.storage.close();
    });

    it(`with only a node giving ${lie}, the read fails with BAD_PROOF naming it`, async () => {
      const remote = await remoteOver([liar()]);
      let caught: unknown;
      try {
        await remote.withState(at, [{ address: addrs[9]!, slots: [], code: false }], (t) =>
          t.getAccount(addrs[9]!),
        );
      } catch (e) {
        caught = e;
      }
      expect(isClientError(caught, ClientErrorCode.BadProof)).toBe(true);
      expect((caught as Error).message).toContain(liar());
      // Nothing was cached: an honest tree at the root still misses the account.
      expect(() => remote.tree(root).getAccount(addrs[9]!)).toThrow();
      remote.storage.close();
    });
  }

  describe('slots, proven by walking the storage trie', () => {
    const lying: Record<string, string> = {};
    const empty = keccak.keccak256(Uint8Array.of(9)).subarray(12);
    beforeAll(async () => {
      for (const lie of ['slotValue', 'slotProof'] as const) {
        const s = await serveStorage(state, blockHash, lie);
        servers.push(s.server);
        lying[lie] = s.address;
      }
    });
    const readSlots = (remote: RemoteState, address: Uint8Array, slots: Uint8Array[]) =>
      remote.withState(at, [{ address, slots, code: false }], (t) =>
        slots.map((s) => t.getStorage(address, s)),
      );
    const absent = new Uint8Array(32).fill(8);

    for (const lie of ['slotValue', 'slotProof'] as const) {
      it(`refuses ${lie} and reads the slot from the honest replica`, async () => {
        const remote = await remoteOver([lying[lie]!, honest]);
        remote.storage.replicas[1]!.failures = 5;
        // Without its proof, a slot claimed absent must be refused too (not taken as absent).
        const slots = lie === 'slotProof' ? [absent] : [slot, absent];
        const { value } = await readSlots(remote, token, slots);
        expect(value).toEqual(lie === 'slotProof' ? [undefined] : [Uint8Array.of(42), undefined]);
        expect(remote.counters.refused).toBe(1);
        remote.storage.close();
      });

      it(`with only a node giving ${lie}, a slot read fails with BAD_PROOF naming it`, async () => {
        const remote = await remoteOver([lying[lie]!]);
        await expect(readSlots(remote, token, [slot])).rejects.toThrow(lying[lie]!);
        expect(remote.counters.refused).toBeGreaterThan(0);
        remote.storage.close();
      });
    }

    it('refuses a value claimed for a slot the trie does not hold, and for an account without storage', async () => {
      for (const address of [token, addrs[3]!, empty]) {
        const remote = await remoteOver([lying.slotValue!]);
        await expect(readSlots(remote, address, [absent])).rejects.toThrow(
          /slot .* that its proof does not give/,
        );
        remote.storage.close();
      }
    });
  });

  it('keeps at most maxCachedNodes nodes, in two generations, and what is still read survives', async () => {
    const storage = await ShardedStorage.connect([honest]);
    const max = 24;
    const remote = new RemoteState(storage, { compactLevels: 1, maxCachedNodes: max });
    const read = (a: Uint8Array) =>
      remote.withState(at, [{ address: a, slots: [], code: false }], (t) => t.getAccount(a));
    const hot = addrs[1]!;
    await read(hot);
    let hotCalls = 0;
    let most = 0;
    for (const a of addrs.slice(2)) {
      await read(a);
      most = Math.max(most, remote.cachedNodes);
      const calls = remote.counters.calls;
      expect((await read(hot)).value?.nonce).toBe(1n);
      hotCalls += remote.counters.calls - calls;
    }
    // One answer's nodes (an account's proof: a few) may go over before the next rotation.
    expect(most).toBeLessThanOrEqual(max + 4);
    expect(most).toBeGreaterThan(max / 2);
    // Read between every other read, the hot account's nodes moved to each new generation:
    // never fetched again (a cache that starts over when full fetches them after each reset).
    expect(hotCalls).toBe(0);
    storage.close();
  });

  it('hands each read of an account its own whole path, known at the root or not, fetched again once the cache let it go', async () => {
    const storage = await ShardedStorage.connect([honest]);
    const remote = new RemoteState(storage, { compactLevels: 1, maxCachedNodes: 24 });
    const hex = (ns: readonly Uint8Array[]) => ns.map((n) => Buffer.from(n).toString('hex'));
    const readOne = async (a: Uint8Array) =>
      (await remote.readAccounts(at, [{ address: a, slots: [], code: false }]))![0]!;
    const picked = [addrs[3]!, addrs[17]!, addrs[40]!];
    for (const a of picked) {
      const first = await readOne(a);
      const calls = remote.counters.calls;
      // Read again (the view knows it): no fetch, the same account and exactly its proof.
      const again = await readOne(a);
      expect(remote.counters.calls).toBe(calls);
      for (const r of [first, again]) {
        expect(r.account).toEqual(state.getAccount(a));
        expect(hex(r.path.nodes)).toEqual(hex(state.proveAccount(a)));
        expect(r.path.hashes.map((h) => Buffer.from(h, 'latin1').toString('hex'))).toEqual(
          state.proveAccount(a).map((n) => Buffer.from(keccak.keccak256(n)).toString('hex')),
        );
      }
    }
    // An account read again and again (the coinbase, by every transaction): from its third read
    // on, the same read is handed out.
    const third = await readOne(picked[1]!);
    expect(await readOne(picked[1]!)).toBe(third);
    expect(hex(third.path.nodes)).toEqual(hex(state.proveAccount(picked[1]!)));
    // Other reads turn the cache's generations until the first account's nodes are gone: its next
    // read is fetched again, and its path is whole.
    for (const a of addrs.slice(44, 64)) await readOne(a);
    const calls = remote.counters.calls;
    const late = await readOne(picked[0]!);
    expect(remote.counters.calls).toBe(calls + 1);
    expect(hex(late.path.nodes)).toEqual(hex(state.proveAccount(picked[0]!)));
    storage.close();
  });
  it("hands reads fetched together each its own account's path, the one the answer's check walked", async () => {
    const storage = await ShardedStorage.connect([honest]);
    const remote = new RemoteState(storage, { compactLevels: 1, maxCachedNodes: 1_000_000 });
    const hex = (ns: readonly Uint8Array[]) => ns.map((n) => Buffer.from(n).toString('hex'));
    const q = (a: Uint8Array) => ({ address: a, slots: [], code: false });
    // Two calls in one turn, sharing accounts: one BatchGet, each account once in it.
    const one = addrs.slice(20, 32);
    const two = [...addrs.slice(26, 32).reverse(), ...addrs.slice(32, 36)];
    const [r1, r2] = await Promise.all([
      remote.readAccounts(at, one.map(q)),
      remote.readAccounts(at, two.map(q)),
    ]);
    expect(remote.counters.calls).toBe(1);
    for (const [reads, asked] of [
      [r1!, one],
      [r2!, two],
    ] as const) {
      expect(reads.map((r) => r.address)).toEqual(asked);
      reads.forEach((r, i) => {
        expect(r.account).toEqual(state.getAccount(asked[i]!));
        expect(hex(r.path.nodes)).toEqual(hex(state.proveAccount(asked[i]!)));
        expect(r.path.hashes.map((h) => Buffer.from(h, 'latin1').toString('hex'))).toEqual(
          state.proveAccount(asked[i]!).map((n) => Buffer.from(keccak.keccak256(n)).toString('hex')),
        );
      });
    }
    // Read once more: nothing fetched, the same paths.
    const again = (await remote.readAccounts(at, two.map(q)))!;
    expect(remote.counters.calls).toBe(1);
    expect(again.map((r) => hex(r.path.nodes))).toEqual(two.map((a) => hex(state.proveAccount(a))));
    storage.close();
  });
});
