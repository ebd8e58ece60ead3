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
import { makeAccount, StateTree } from '@monsoon/dsm-tree';
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

async function remoteOver(addresses: string[]) {
  const storage = await ShardedStorage.connect(addresses);
  return new RemoteState(storage, { compactLevels: 1, maxCachedNodes: 1_000_000 });
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
});
