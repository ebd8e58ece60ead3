/**
 * The shm transport end to end, in one process with real sockets: two storage nodes over gRPC,
 * one exporting its region as a file under the temp dir (shards 0-7), one not (8-15). A client
 * reading over shm must get exactly what a gRPC-only client gets — accounts, slots, code — with
 * the first node's shards walked one-sidedly (no BatchGet) and the second's over gRPC. A transport
 * that can't run says what is missing: shm with no region to map, rdma without verbs or a device.
 * A transport that fails under a read (its mapping closed, as a queue pair breaks when its node
 * restarts) fails no read: gRPC answers, and the region is renewed once it can be. Where an RDMA device exists, rdma (a queue pair per node, connected over ConnectRdma, the same
 * native walk over READs) must answer as gRPC too; elsewhere that test says why it skipped.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  openStorageTransport,
  RemoteState,
  ShardedStorage,
  ShmReads,
  type StateRef,
  type StorageTransportKind,
} from '@monsoon/client';
import { keccak } from '@monsoon/keccak';
import type { AccountQuery, Genesis } from '@monsoon/protocol';
import { SharedRegion, verbsInfo } from '@monsoon/rdma';
import { RdmaExport, RegionExport, StorageNode, StorageServer } from '@monsoon/storage-node';
import { Prng, tempDir } from '@monsoon/test-utils';

function genesisOf(seed: number, n: number): Genesis {
  const r = new Prng(seed);
  return {
    chainId: 1337n,
    difficulty: 0n,
    gasLimit: 30_000_000n,
    timestamp: 1_700_000_000n,
    extraData: new Uint8Array(0),
    coinbase: new Uint8Array(20),
    nonce: new Uint8Array(8),
    alloc: Array.from({ length: n }, (_, i) => ({
      address: r.bytes(20),
      nonce: BigInt(r.int(9)),
      balance: BigInt(r.u32()) * 1_000_003n,
      code: i % 9 === 0 ? r.bytes(1 + r.int(80)) : new Uint8Array(0),
      storage: i % 5 === 0 ? [[r.bytes(32), Uint8Array.of(1 + r.int(200))] as [Uint8Array, Uint8Array]] : [],
    })),
  };
}

const genesis = genesisOf(3, 600);

describe('storage transports', () => {
  let dir: { dir: string; remove: () => Promise<void> };
  const servers: StorageServer[] = [];
  const nodes: StorageNode[] = [];
  let region: RegionExport;
  let addresses: string[] = [];

  beforeAll(async () => {
    dir = await tempDir('monsoon-shm-');
    const available = SharedRegion.available();
    expect(available).toBe(true); // the addon is part of npm run build:native
    region = await RegionExport.create({
      path: join(dir.dir, 's0.region'),
      nodes: 20_000,
      arenaBytes: 8 << 20,
    });
    for (const [shards, observers] of [
      [[0, 1, 2, 3, 4, 5, 6, 7], [region]],
      [[8, 9, 10, 11, 12, 13, 14, 15], []],
    ] as const) {
      const node = StorageNode.fromGenesis(genesis, { shards: [...shards] }, { observers: [...observers] });
      await node.startObservers();
      nodes.push(node);
      const info = observers.length > 0 ? region.info() : undefined;
      servers.push(
        await StorageServer.create(
          { listen: '127.0.0.1:0' },
          { node, ...(info !== undefined ? { region: info } : {}) },
        ),
      );
    }
    addresses = servers.map((s) => s.address());
  });

  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const n of nodes) await n.close();
    await dir.remove();
  });

  async function client(kind: StorageTransportKind) {
    const storage = await ShardedStorage.connect(addresses);
    const oneSided = await openStorageTransport(kind, storage);
    return new RemoteState(storage, { compactLevels: 0, maxCachedNodes: 1_000_000 }, undefined, oneSided);
  }

  it('shm answers exactly what gRPC answers, its node one-sidedly and the other over gRPC', async () => {
    const grpc = await client('grpc');
    const shm = await client('shm');
    const head = nodes[0]!.head;
    const at: StateRef = { blockHash: head.hash, stateRoot: head.header.stateRoot };
    const r = new Prng(9);
    const queries: AccountQuery[] = [
      ...genesis.alloc.map((a) => ({ address: a.address, slots: a.storage.map(([s]) => s), code: true })),
      ...Array.from({ length: 40 }, () => ({ address: r.bytes(20), slots: [r.bytes(32)], code: true })),
    ];
    await Promise.all([grpc.fetch(at, queries), shm.fetch(at, queries)]);
    const hex = (b: Uint8Array | undefined) => (b === undefined ? '-' : Buffer.from(b).toString('hex'));
    let inRegion = 0;
    for (const q of queries) {
      const a = grpc.tree(at.stateRoot);
      const b = shm.tree(at.stateRoot);
      const acc = a.getAccount(q.address);
      expect(b.getAccount(q.address)).toEqual(acc);
      expect(b.proveAccount(q.address).map(hex)).toEqual(a.proveAccount(q.address).map(hex));
      for (const s of q.slots) expect(hex(b.getStorage(q.address, s))).toBe(hex(a.getStorage(q.address, s)));
      if (acc !== undefined)
        expect(hex(b.getCode(acc.codeHash) ?? b.resolver?.(acc.codeHash))).toBe(
          hex(a.getCode(acc.codeHash) ?? a.resolver?.(acc.codeHash)),
        );
      if (keccak.keccak256(q.address)[0]! >> 4 < 8) inRegion++;
    }
    expect(inRegion).toBeGreaterThan(0);
    // One batch per storage node (route): the exporting node's was answered one-sidedly and never
    // went to BatchGet; the other node's did, as both of grpc's.
    expect(shm.counters.oneSided).toBe(1);
    expect(shm.counters.calls).toBe(1);
    expect(grpc.counters.calls).toBe(2);
    expect(shm.oneSided!.counters.fellBack).toBe(1);
    expect(shm.oneSided!.counters.misses).toBe(0);
    shm.oneSided!.close();
    shm.storage.close();
    grpc.storage.close();
  });

  it('shm with no region to map fails at start, naming why', async () => {
    const both = await ShardedStorage.connect(addresses);
    // The same nodes, as if the exporting one ran on another host (its region left out).
    const onlyOther = Object.create(both) as ShardedStorage;
    Object.defineProperty(onlyOther, 'replicas', {
      value: both.replicas.filter((x) => x.region === undefined),
    });
    await expect(openStorageTransport('shm', onlyOther)).rejects.toThrow(
      /no storage node's region could be mapped.*--export-region/,
    );
    both.close();
  });

  it('rdma fails at start with what is missing (here: a device, or verbs in the build)', async () => {
    const storage = await ShardedStorage.connect(addresses);
    const e = (await openStorageTransport('rdma', storage).catch((x) => x)) as Error;
    expect(e).toBeInstanceOf(Error);
    expect(e.message).toMatch(/--storage-transport rdma: .*(RDMA device|verbs|not built|not implemented)/);
    console.log(`rdma transport refused here: ${e.message}`);
    storage.close();
  });

  it('re-maps a region its node re-created on restart (new file, new generation) instead of staying on gRPC', async () => {
    const path = join(dir.dir, 'restart.region');
    const start = async (g: Genesis, listen: string) => {
      const r = await RegionExport.create({ path, nodes: 20_000, arenaBytes: 8 << 20 });
      const n = StorageNode.fromGenesis(g, {}, { observers: [r] });
      await n.startObservers();
      const s = await StorageServer.create({ listen }, { node: n, region: r.info()! });
      return { r, n, s };
    };
    const first = await start(genesis, '127.0.0.1:0');
    const address = first.s.address();
    const storage = await ShardedStorage.connect([address]);
    const shm = await ShmReads.open(storage, undefined, { recheckMs: 0 });
    const remote = new RemoteState(storage, { compactLevels: 0, maxCachedNodes: 1_000_000 }, undefined, shm);
    const stateAt = (n: StorageNode): StateRef => ({
      blockHash: n.head.hash,
      stateRoot: n.head.header.stateRoot,
    });
    const queries = (g: Genesis) =>
      g.alloc.slice(0, 50).map((a) => ({ address: a.address, slots: [], code: false }));
    await remote.fetch(stateAt(first.n), queries(genesis));
    expect(shm.counters.answered).toBe(1);
    const oldGeneration = first.r.info()!.generation;
    // The node restarts on the same address with another state; its region file is re-created.
    await first.s.close();
    await first.n.close();
    await first.r.close();
    const other = genesisOf(4, 300);
    const second = await start(other, address);
    expect(second.r.info()!.generation).not.toBe(oldGeneration);
    const at = stateAt(second.n);
    await remote.fetch(at, queries(other));
    // The old mapping lacked the new state's nodes: the miss made the client ask the node, map
    // its new region and walk that, with no BatchGet.
    expect(shm.counters.remapped).toBe(1);
    expect(shm.counters.answered).toBe(2);
    expect(shm.counters.fellBack).toBe(0);
    expect(remote.counters.calls).toBe(0);
    for (const a of other.alloc.slice(0, 50))
      expect(remote.tree(at.stateRoot).getAccount(a.address)?.balance).toBe(a.balance);
    shm.close();
    storage.close();
    await second.s.close();
    await second.n.close();
    await second.r.close();
  });

  it('a transport that fails under a read (its mapping gone) fails no read: gRPC answers, then it is renewed', async () => {
    const storage = await ShardedStorage.connect(addresses);
    const mapped: SharedRegion[] = [];
    let refuse = false;
    const shm = await ShmReads.open(storage, undefined, {
      recheckMs: 0,
      mapRegion: async (path) => {
        if (refuse) throw new Error(`${path}: refused by the test`);
        const r = await SharedRegion.map(path);
        mapped.push(r);
        return r;
      },
    });
    const remote = new RemoteState(storage, { compactLevels: 0, maxCachedNodes: 1_000_000 }, undefined, shm);
    const node = nodes[0]!;
    const at: StateRef = { blockHash: node.head.hash, stateRoot: node.head.header.stateRoot };
    const ownShard = (a: Uint8Array) => storage.shardOfKey(keccak.keccak256(a)) < 8;
    const mine = genesis.alloc.filter((a) => ownShard(a.address));
    const ask = (from: number) =>
      mine.slice(from, from + 40).map((a) => ({ address: a.address, slots: [], code: false }));
    const balances = (from: number) =>
      mine.slice(from, from + 40).map((a) => remote.tree(at.stateRoot).getAccount(a.address)?.balance);
    const truth = (from: number) => mine.slice(from, from + 40).map((a) => a.balance);
    await remote.fetch(at, ask(0));
    expect(shm.counters.answered).toBe(1);
    // The mapping goes away under the transport (as a queue pair breaks when its node restarts).
    // The node can't be mapped again yet: the batch is read over gRPC, answering the same.
    mapped[0]!.close();
    refuse = true;
    await remote.fetch(at, ask(40));
    expect(shm.counters.failed).toBe(1);
    expect(remote.counters.calls).toBe(1);
    expect(balances(40)).toEqual(truth(40));
    // Once it can be mapped again, the next batch renews it and is walked one-sidedly.
    refuse = false;
    await remote.fetch(at, ask(80));
    expect(shm.counters.remapped).toBe(1);
    expect(shm.counters.answered).toBe(2);
    expect(remote.counters.calls).toBe(1);
    expect(balances(80)).toEqual(truth(80));
    shm.close();
    storage.close();
  });

  it('rdma answers exactly what gRPC answers, where a device exists', async () => {
    const info = verbsInfo();
    if (info.devices.length === 0) {
      console.log(`rdma transport end to end skipped: ${info.reason ?? 'no RDMA device'}`);
      return;
    }
    const rdma = await RdmaExport.open({ device: info.devices[0]! }, region);
    const server = await StorageServer.create(
      { listen: '127.0.0.1:0' },
      { node: nodes[0]!, region: region.info()!, rdma },
    );
    const storage = await ShardedStorage.connect([server.address(), addresses[1]!]);
    const oneSided = await openStorageTransport('rdma', storage);
    const viaRdma = new RemoteState(
      storage,
      { compactLevels: 0, maxCachedNodes: 1_000_000 },
      undefined,
      oneSided,
    );
    const grpc = await client('grpc');
    const head = nodes[0]!.head;
    const at: StateRef = { blockHash: head.hash, stateRoot: head.header.stateRoot };
    const queries = genesis.alloc.map((a) => ({
      address: a.address,
      slots: a.storage.map(([s]) => s),
      code: true,
    }));
    await Promise.all([grpc.fetch(at, queries), viaRdma.fetch(at, queries)]);
    const hex = (b: Uint8Array | undefined) => (b === undefined ? '-' : Buffer.from(b).toString('hex'));
    for (const q of queries) {
      const a = grpc.tree(at.stateRoot);
      const b = viaRdma.tree(at.stateRoot);
      expect(b.getAccount(q.address)).toEqual(a.getAccount(q.address));
      expect(b.proveAccount(q.address).map(hex)).toEqual(a.proveAccount(q.address).map(hex));
    }
    expect(viaRdma.counters.oneSided).toBe(1);
    oneSided!.close();
    storage.close();
    grpc.storage.close();
    await server.close();
    rdma.close();
  });
});
