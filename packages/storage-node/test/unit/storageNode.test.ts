/** The storage node's core: sharded genesis, blocks, versions, forks, refused blocks. */
import { describe, expect, it } from '@jest/globals';
import { DsmTree, decodeAccount, NodeBag, rlpDecode, toHex, verifyProof } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { atHash, atNumber, HEAD } from '@monsoon/protocol';
import { StorageErrorCode, StorageNode } from '@monsoon/storage-node';
import { type Block, makeGenesis, RefChain } from '../helpers/chain.js';
import { expectStorageError } from '../helpers/errors.js';

const hex = toHex;

function nodesFor(chain: RefChain, groups: number[][]) {
  return groups.map((shards) => ({
    shards: new Set(shards),
    node: StorageNode.fromGenesis(chain.genesis, { shardCount: chain.layout.count, shards }),
  }));
}

describe.each([16, 256] as const)('storage nodes with %i shards', (count) => {
  const groups =
    count === 16
      ? [
          [0, 1, 2, 3, 4, 5],
          [6, 7, 8, 9, 10],
          [11, 12, 13, 14, 15],
        ]
      : [Array.from({ length: 100 }, (_, i) => i), Array.from({ length: 156 }, (_, i) => i + 100)];
  const genesis = makeGenesis(count, count === 16 ? 400 : 3000);
  const chain = new RefChain(genesis, count);

  it('each loads only its shards, all agree on the genesis root and block hash, and every proof verifies', () => {
    const nodes = nodesFor(chain, groups);
    const root = hex(chain.genesisState.root());
    for (const { node, shards } of nodes) {
      expect(hex(node.head.header.stateRoot)).toBe(root);
      expect(hex(node.head.hash)).toBe(hex(chain.genesisHash));
      const full = chain.shardRoots(chain.genesisState);
      const mine = node.shardRoots(HEAD).roots;
      expect(mine.map((r) => hex(r.root))).toEqual(full.map((r) => hex(r.root)));
      let held = 0;
      for (const a of genesis.alloc) {
        const inShard = shards.has(chain.shardOf(a.address));
        if (!inShard) {
          expect(() => node.getAccount({ address: a.address, at: HEAD, omitLevels: 0 })).toThrow(
            /WRONG_SHARD/,
          );
          continue;
        }
        held++;
        const res = node.getAccount({ address: a.address, at: HEAD, omitLevels: 0 });
        const value = verifyProof(node.head.header.stateRoot, keccak.keccak256(a.address), res.proof);
        expect(hex(value!)).toBe(hex(res.accountRlp!));
        expect(decodeAccount(res.accountRlp!).balance).toBe(a.balance);
        for (const [slot, v] of a.storage) {
          const s = node.getStorage({ address: a.address, slot, at: HEAD, omitLevels: 0 });
          expect(hex(s.value)).toBe(hex(v));
        }
      }
      expect(held).toBeGreaterThan(0);
    }
  });

  it('BatchGet answers many accounts and slots with one bag that proves every one of them', () => {
    const [{ node, shards }] = nodesFor(chain, [groups[0]!]);
    const held = genesis.alloc.filter((a) => shards.has(chain.shardOf(a.address))).slice(0, 40);
    const withSlots = held.filter((a) => a.storage.length > 0);
    const res = node.batchGet({
      at: HEAD,
      omitLevels: 0,
      queries: held.map((a) => ({
        address: a.address,
        slots: a.storage.map(([k]) => k),
        code: a.code.length > 0,
      })),
    });
    const bag = NodeBag.fromProofs([res.bag]);
    expect(res.bag.length).toBe(bag.size); // each node once
    const accounts = DsmTree.fromRootHash(node.head.header.stateRoot, { resolver: (h) => bag.get(h) });
    res.results.forEach((r, i) => {
      const a = held[i]!;
      expect(hex(accounts.get(keccak.keccak256(a.address))!)).toBe(hex(r.accountRlp!));
      expect(hex(r.code)).toBe(hex(a.code));
      const storage = DsmTree.fromRootHash(decodeAccount(r.accountRlp!).storageRoot, {
        resolver: (h) => bag.get(h),
      });
      a.storage.forEach(([slot, value], j) => {
        expect(hex(r.slotValues[j]!)).toBe(hex(value));
        expect(hex(rlpDecode(storage.get(keccak.keccak256(slot))!) as Uint8Array)).toBe(hex(value));
      });
    });
    expect(withSlots.length).toBeGreaterThan(0);
  });

  it('follows a chain of blocks; reads name old and new versions; every node ends on the same roots', async () => {
    const nodes = nodesFor(chain, groups);
    let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    const blocks: Block[] = [];
    for (let i = 1; i <= 6; i++) {
      const b = chain.block(parent, 1000 * count + i, 60);
      blocks.push(b);
      for (const { node, shards } of nodes) {
        const res = await node.applyBlock(RefChain.forShards(b.req, shards));
        expect(hex(res.blockHash)).toBe(hex(b.hash));
        const want = new Map(b.req.expectedRoots.map((r) => [r.shard, hex(r.root)]));
        for (const r of res.roots) expect(hex(r.root)).toBe(want.get(r.shard));
      }
      parent = { hash: b.hash, state: b.state, number: BigInt(i) };
    }
    for (const { node, shards } of nodes) {
      expect(node.head.header.number).toBe(6n);
      expect(hex(node.head.header.stateRoot)).toBe(hex(blocks[5]!.state.root()));
      // An account changed in block 6, read at block 2 (by hash) and at 6 (by number).
      const touched = blocks[5]!.req.shards.filter((u) => shards.has(u.shard)).flatMap((u) => u.accounts);
      const a = touched.find((x) => !x.deleted && blocks[1]!.state.getAccount(x.address) !== undefined);
      if (a === undefined) continue;
      const old = node.getAccount({ address: a.address, at: atHash(blocks[1]!.hash), omitLevels: 0 });
      expect(decodeAccount(old.accountRlp!).balance).toBe(blocks[1]!.state.getAccount(a.address)!.balance);
      expect(verifyProof(blocks[1]!.header.stateRoot, keccak.keccak256(a.address), old.proof)).toBeDefined();
      const now = node.getAccount({ address: a.address, at: atNumber(6n), omitLevels: 0 });
      expect(decodeAccount(now.accountRlp!).balance).toBe(blocks[5]!.state.getAccount(a.address)!.balance);
    }
  });
});

describe('states too small to shard', () => {
  it('refuse 256 shards when a first nibble holds one non-empty shard (no branch to hang them from)', () => {
    const small = makeGenesis(3, 60);
    expect(() => StorageNode.fromGenesis(small, { shardCount: 256, shards: [0, 1] })).toThrow(
      /BAD_GENESIS.*single non-empty shard/,
    );
    expect(() =>
      StorageNode.fromGenesis({ ...small, alloc: small.alloc.slice(0, 1) }, { shardCount: 16 }),
    ).toThrow(/BAD_GENESIS.*at least two/);
    // 16 shards of the same small state are fine, and agree with the full state.
    const chain = new RefChain(small, 16);
    expect(hex(StorageNode.fromGenesis(small, { shards: [0, 1, 2] }).head.header.stateRoot)).toBe(
      hex(chain.genesisState.root()),
    );
  });
});

describe('forks and refused blocks (16 shards)', () => {
  const genesis = makeGenesis(99, 300);
  const chain = new RefChain(genesis, 16);
  const g = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };

  it('holds competing branches, follows the heavier, and frees the loser once it falls out of the fork window', async () => {
    const node = StorageNode.fromGenesis(genesis, { shards: [0, 1, 2, 3, 4, 5, 6, 7], forkWindow: 2 });
    const mine = new Set([0, 1, 2, 3, 4, 5, 6, 7]);
    const a1 = chain.block(g, 1, 30, { difficulty: 1n });
    const b1 = chain.block(g, 2, 30, { difficulty: 2n });
    await node.applyBlock(RefChain.forShards(a1.req, mine));
    await node.applyBlock(RefChain.forShards(b1.req, mine));
    expect(hex(node.head.hash)).toBe(hex(b1.hash)); // heavier
    expect(
      node.getAccount({ address: genesis.alloc[0]!.address, at: atHash(a1.hash), omitLevels: 0 }).number,
    ).toBe(1n);
    // Extend the lighter fork past the heavier one: the head moves over.
    let p = { hash: a1.hash, state: a1.state, number: 1n };
    for (let i = 2; i <= 5; i++) {
      const b = chain.block(p, 10 + i, 20, { difficulty: 1n });
      await node.applyBlock(RefChain.forShards(b.req, mine));
      p = { hash: b.hash, state: b.state, number: BigInt(i) };
    }
    expect(hex(node.head.hash)).toBe(hex(p.hash));
    expect(() =>
      node.getAccount({ address: genesis.alloc[0]!.address, at: atHash(b1.hash), omitLevels: 0 }),
    ).toThrow(/UNKNOWN_VERSION/);
    expect(node.versions.byHash(b1.hash)).toBeUndefined(); // the losing fork is freed
    expect(node.versions.byHash(a1.hash)).toBeDefined(); // the winning chain's block 1 is kept
  });

  it('refuses tampered blocks with a precise error and keeps no trace of them', async () => {
    let installed = 0;
    const node = StorageNode.fromGenesis(
      genesis,
      { shards: [0, 1, 2, 3, 4, 5, 6, 7] },
      {
        beforeInstall: async () => {
          installed++;
        },
      },
    );
    const mine = new Set([0, 1, 2, 3, 4, 5, 6, 7]);
    const good = chain.block(g, 5, 40, { difficulty: 2000n });
    const req = RefChain.forShards(good.req, mine);
    const before = node.versions.size;
    const expectRefused = async (bad: typeof req, code: StorageErrorCode) => {
      await expectStorageError(node.applyBlock(bad), code);
      expect(node.versions.size).toBe(before);
      expect(hex(node.head.hash)).toBe(hex(chain.genesisHash));
      expect(installed).toBe(0);
    };
    const flip = (b: Uint8Array) => {
      const c = b.slice();
      c[5]! ^= 1;
      return c;
    };
    const ownShard = req.shards[0]!.shard;
    const foreignShard = [...Array(16).keys()].find((s) => !mine.has(s))!;
    await expectRefused(
      {
        ...req,
        expectedRoots: req.expectedRoots.map((r) =>
          r.shard === ownShard ? { ...r, root: flip(r.root) } : r,
        ),
      },
      StorageErrorCode.ShardRootMismatch,
    );
    await expectRefused(
      {
        ...req,
        expectedRoots: req.expectedRoots.map((r) =>
          r.shard === foreignShard ? { ...r, root: flip(r.root) } : r,
        ),
      },
      StorageErrorCode.StateRootMismatch,
    );
    const broken = chain.block({ ...g, hash: new Uint8Array(32).fill(7) }, 5, 40, { difficulty: 2000n });
    await expectRefused(RefChain.forShards(broken.req, mine), StorageErrorCode.UnknownParent);
    const { decodeHeader, encodeHeader } = await import('@monsoon/protocol');
    const h = decodeHeader(req.headerRlp);
    const badNonce = new Uint8Array(8).fill(0xfe);
    await expectRefused(
      { ...req, headerRlp: encodeHeader({ ...h, nonce: badNonce }) },
      StorageErrorCode.BadBlock,
    );
    const wrongShard = {
      ...req,
      shards: [{ ...req.shards[0]!, shard: (ownShard + 1) % 8 }, ...req.shards.slice(1)],
    };
    await expectRefused(wrongShard, StorageErrorCode.WrongShard);
    // The untampered block still goes in afterwards.
    await node.applyBlock(req);
    expect(hex(node.head.hash)).toBe(hex(good.hash));
    expect(installed).toBe(1);
  });
});

describe('GetNodes: trie nodes by hash, found on their path', () => {
  const genesis = makeGenesis(16, 600);
  const chain = new RefChain(genesis, 16);
  const mine = new Set([0, 1, 2, 3, 4, 5, 6, 7]);

  /** Walks the account trie top-down from `root` through GetNodes only, to `depth` nibbles. */
  function walk(node: StorageNode, root: Uint8Array, depth: number) {
    const found: { path: number[]; rlp: Uint8Array }[] = [];
    const missing: number[][] = [];
    let level: { path: number[]; hash: Uint8Array }[] = [{ path: [], hash: root }];
    while (level.length > 0) {
      const res = node.getNodes({
        hashes: level.map((l) => l.hash),
        paths: level.map((l) => Uint8Array.from(l.path)),
      });
      const next: typeof level = [];
      level.forEach(({ path, hash }, i) => {
        const rlp = res.nodes[i];
        if (rlp === undefined) {
          missing.push(path);
          return;
        }
        expect(hex(keccak.keccak256(rlp))).toBe(hex(hash));
        found.push({ path, rlp });
        const items = rlpDecode(rlp) as Uint8Array[];
        if (items.length !== 17 || path.length + 1 > depth) return;
        for (let n = 0; n < 16; n++)
          if (items[n]!.length === 32) next.push({ path: [...path, n], hash: items[n]! });
      });
      level = next;
    }
    return { found, missing };
  }

  it('serves every node of its own shards to a walk from the state root, and none of the foreign ones', () => {
    const node = StorageNode.fromGenesis(genesis, { shardCount: 16, shards: [...mine] });
    const { found, missing } = walk(node, node.head.header.stateRoot, 3);
    expect(found[0]!.path).toEqual([]);
    expect(found.filter((f) => f.path.length === 2).length).toBeGreaterThan(8 * 8);
    for (const f of found.slice(1)) expect(mine.has(f.path[0]!)).toBe(true);
    expect(missing.map((p) => p[0]).sort((a, b) => a! - b!)).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
  });

  it("finds a storage trie node under the account key, an old version's root, and nothing for a wrong hash", async () => {
    const node = StorageNode.fromGenesis(genesis, { shardCount: 16, shards: [...mine] });
    const withSlots = genesis.alloc.find((a) => a.storage.length > 0 && mine.has(chain.shardOf(a.address)))!;
    const key = keccak.keccak256(withSlots.address);
    const nibbles = [...key].flatMap((b) => [b >> 4, b & 15]);
    const storageRoot = decodeAccount(
      node.getAccount({ address: withSlots.address, at: HEAD, omitLevels: 0 }).accountRlp!,
    ).storageRoot;
    const genesisRoot = node.head.header.stateRoot;

    const b = chain.block({ hash: chain.genesisHash, state: chain.genesisState, number: 0n }, 77, 40);
    await node.applyBlock(RefChain.forShards(b.req, mine));
    expect(hex(node.head.header.stateRoot)).not.toBe(hex(genesisRoot));

    const res = node.getNodes({
      hashes: [storageRoot, genesisRoot, genesisRoot, new Uint8Array(32).fill(7)],
      paths: [Uint8Array.from(nibbles), new Uint8Array(0), Uint8Array.from([3]), new Uint8Array(0)],
    });
    expect(res.nodes[0] && hex(keccak.keccak256(res.nodes[0]))).toBe(hex(storageRoot));
    expect(res.nodes[1] && hex(keccak.keccak256(res.nodes[1]))).toBe(hex(genesisRoot));
    expect(res.nodes[2] && hex(keccak.keccak256(res.nodes[2]))).toBe(hex(genesisRoot));
    expect(res.nodes[3]).toBeUndefined();
    const slotKey = keccak.keccak256(withSlots.storage[0]![0]);
    const inStorage = node.getNodes({
      hashes: [storageRoot],
      paths: [Uint8Array.from([...nibbles, slotKey[0]! >> 4])],
    });
    expect(inStorage.nodes[0] && hex(keccak.keccak256(inStorage.nodes[0]))).toBe(hex(storageRoot));
  });
});
