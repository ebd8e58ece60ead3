/** A durable storage node: acknowledged blocks survive a restart; refused ones leave no record. */
import { readdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { applyBlockRequestFromProto, atNumber, storagePb } from '@monsoon/protocol';
import { StorageErrorCode, StorageNode } from '@monsoon/storage-node';
import { makeTmpDir, removeDir } from '@monsoon/test-utils';
import { type Block, makeGenesis, RefChain } from '../helpers/chain.js';
import { expectStorageError } from '../helpers/errors.js';

describe('durable storage node', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTmpDir();
  });
  afterEach(async () => {
    await removeDir(dir);
  });

  const genesis = makeGenesis(5, 300);
  const chain = new RefChain(genesis, 16);
  const shards = [2, 3, 4, 5, 6, 7, 8, 9];
  const mine = new Set(shards);

  it('replays its log on open and ends where it left off; a refused block is not in the log', async () => {
    const node = await StorageNode.open(genesis, { shards, dataDir: dir });
    let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    const roots: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const b = chain.block(parent, 700 + i, 50);
      await node.applyBlock(RefChain.forShards(b.req, mine));
      roots.push(toHex(b.header.stateRoot));
      parent = { hash: b.hash, state: b.state, number: BigInt(i) };
    }
    const next = chain.block(parent, 777, 50);
    const bad = RefChain.forShards(next.req, mine);
    await expectStorageError(
      node.applyBlock({
        ...bad,
        expectedRoots: bad.expectedRoots.map((r) => ({ ...r, root: new Uint8Array(32).fill(1) })),
      }),
      StorageErrorCode.ShardRootMismatch,
    );
    const headId = node.head.id;
    await node.close();

    const again = await StorageNode.open(genesis, { shards, dataDir: dir });
    expect(again.head.id).toBe(headId);
    expect(again.head.header.number).toBe(5n);
    for (let n = 1; n <= 5; n++)
      expect(toHex(again.version(atNumber(BigInt(n))).header.stateRoot)).toBe(roots[n - 1]);
    // The good version of block 6 still applies after the restart.
    await again.applyBlock(bad);
    expect(again.head.header.number).toBe(6n);
    await again.close();
  });

  it('checkpoints every N blocks, restarts from the newest checkpoint plus the log, and falls back past a corrupt one', async () => {
    const node = await StorageNode.open(genesis, {
      shards,
      dataDir: dir,
      checkpointEvery: 3,
      checkpointDepth: 2,
    });
    let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    const roots: string[] = [];
    for (let i = 1; i <= 8; i++) {
      const b = chain.block(parent, 900 + i, 40);
      await node.applyBlock(RefChain.forShards(b.req, mine));
      roots.push(toHex(b.header.stateRoot));
      parent = { hash: b.hash, state: b.state, number: BigInt(i) };
    }
    await node.close();
    const files = (await readdir(join(dir, 'checkpoints'))).filter((f) => !f.startsWith('.'));
    expect(files.length).toBe(2); // blocks 3 and 6; keep = 2

    const again = await StorageNode.open(genesis, {
      shards,
      dataDir: dir,
      checkpointEvery: 3,
      checkpointDepth: 2,
    });
    expect(again.head.header.number).toBe(8n);
    for (let n = 6; n <= 8; n++)
      expect(toHex(again.version(atNumber(BigInt(n))).header.stateRoot)).toBe(roots[n - 1]);
    const acct = genesis.alloc.find((a) => mine.has(chain.shardOf(a.address)))!;
    const res = again.getAccount({ address: acct.address, at: atNumber(8n), omitLevels: 0 });
    expect(res.number).toBe(8n);
    await again.close();

    // Corrupt the newest checkpoint: the node starts from the older one and replays more log.
    const newest = (await readdir(join(dir, 'checkpoints')))
      .filter((f) => !f.startsWith('.'))
      .sort()
      .at(-1)!;
    const path = join(dir, 'checkpoints', newest);
    const bytes = await readFile(path);
    bytes[bytes.length - 10]! ^= 0xff;
    await writeFile(path, bytes);
    const third = await StorageNode.open(genesis, {
      shards,
      dataDir: dir,
      checkpointEvery: 3,
      checkpointDepth: 2,
    });
    expect(third.head.header.number).toBe(8n);
    expect(toHex(third.head.header.stateRoot)).toBe(roots[7]);
    expect(toHex(third.version(atNumber(4n)).header.stateRoot)).toBe(roots[3]);
    await third.close();
  });

  it('after a log tail cut below the newest checkpoint, the blocks applied next survive a restart', async () => {
    const opts = { shards, dataDir: dir, checkpointEvery: 3, checkpointDepth: 2, fsync: 'none' as const };
    const node = await StorageNode.open(genesis, opts);
    let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    const blocks: ReturnType<RefChain['block']>[] = [];
    for (let i = 1; i <= 6; i++) {
      const b = chain.block(parent, 1100 + i, 30);
      blocks.push(b);
      // Block 3's checkpoint is written once the head is 2 blocks past it.
      if (i <= 5) await node.applyBlock(RefChain.forShards(b.req, mine));
      parent = { hash: b.hash, state: b.state, number: BigInt(i) };
    }
    await node.close();
    // A power cut under fsync none loses the log's whole unsynced tail; block 3's checkpoint is on disk.
    const walDir = join(dir, 'wal');
    const segments = (await readdir(walDir)).filter((f) => f.endsWith('.wal'));
    expect(segments).toEqual(['00000000000000000001.wal']);
    await truncate(join(walDir, segments[0]!), 16); // the segment header only
    const again = await StorageNode.open(genesis, opts);
    expect(again.head.header.number).toBe(3n);
    // Blocks 4 and 5 again (their log records were lost) and block 6: the log numbers them after
    // the checkpoint, so the next replay does not take them for records the checkpoint covers.
    for (const b of blocks.slice(3)) await again.applyBlock(RefChain.forShards(b.req, mine));
    expect(again.walStats()!.lastSeq).toBe(6n);
    await again.close();
    const third = await StorageNode.open(genesis, opts);
    expect(third.head.header.number).toBe(6n);
    expect(toHex(third.head.header.stateRoot)).toBe(toHex(blocks[5]!.header.stateRoot));
    await third.close();
  });

  it('a fork block at a checkpoint height is never the checkpoint: a restart stays on the heaviest chain', async () => {
    const node = await StorageNode.open(genesis, {
      shards,
      dataDir: dir,
      checkpointEvery: 3,
      checkpointDepth: 2,
    });
    let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    const canonical: string[] = [];
    let fork: Block | undefined;
    for (let i = 1; i <= 5; i++) {
      const b = chain.block(parent, 300 + i, 30, { difficulty: 2n });
      await node.applyBlock(RefChain.forShards(b.req, mine));
      canonical.push(toHex(b.hash));
      if (i === 3) {
        // A lighter block at height 3 (another miner's), arriving after the canonical one.
        fork = chain.block({ ...parent }, 399, 30, { difficulty: 1n });
        await node.applyBlock(RefChain.forShards(fork.req, mine));
      }
      parent = { hash: b.hash, state: b.state, number: BigInt(i) };
    }
    expect(node.head.id).toBe(canonical[4]);
    await node.close();
    const again = await StorageNode.open(genesis, {
      shards,
      dataDir: dir,
      checkpointEvery: 3,
      checkpointDepth: 2,
    });
    expect(again.head.id).toBe(canonical[4]);
    expect(again.version(atNumber(4n)).id).toBe(canonical[3]);
    expect(again.versions.byHash(fork!.hash)).toBeUndefined();
    await again.close();
  });

  it('a replica joins from a peer checkpoint, applies the peer blocks after it, and restarts from there', async () => {
    const peer = StorageNode.fromGenesis(genesis, { shards });
    let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    for (let i = 1; i <= 6; i++) {
      const b = chain.block(parent, 900 + i, 40);
      await peer.applyBlock(RefChain.forShards(b.req, mine));
      parent = { hash: b.hash, state: b.state, number: BigInt(i) };
    }
    // The blocks after 4, as the peer applied them; none after its head.
    expect(peer.blockUpdates(4n, 10)).toHaveLength(2);
    expect(peer.blockUpdates(6n, 10)).toEqual([]);
    const checkpointAt = async (n: bigint) => {
      const parts: Uint8Array[] = [];
      for await (const p of peer.checkpointOf(atNumber(n))) parts.push(p);
      return Buffer.concat(parts);
    };

    // A checkpoint of another shard selection is refused.
    const other = await StorageNode.open(genesis, { shards: [0, 1], dataDir: join(dir, 'other') });
    await expectStorageError(other.join(await checkpointAt(4n)), StorageErrorCode.WrongShard);
    await other.close();

    const replica = await StorageNode.open(genesis, { shards, dataDir: join(dir, 'r') });
    await replica.join(await checkpointAt(4n));
    expect(replica.head.header.number).toBe(4n);
    await expectStorageError(
      replica.applyBlock(RefChain.forShards(chain.block({ ...parent }, 1, 5).req, mine)),
      StorageErrorCode.UnknownParent,
    );
    for (const rec of peer.blockUpdates(4n, 10)) {
      await replica.applyBlock(
        applyBlockRequestFromProto(storagePb.ApplyBlockRequest.decode(rec), { shardCount: 16 }),
      );
    }
    expect(replica.head.id).toBe(peer.head.id);
    // An older checkpoint changes nothing.
    await replica.join(await checkpointAt(4n));
    expect(replica.head.id).toBe(peer.head.id);
    await replica.close();
    const again = await StorageNode.open(genesis, { shards, dataDir: join(dir, 'r') });
    expect(again.head.id).toBe(peer.head.id);
    expect(toHex(again.head.header.stateRoot)).toBe(toHex(parent.state.root()));
    await again.close();
  });

  it('refuses a data directory written for another genesis or shard selection', async () => {
    const node = await StorageNode.open(genesis, { shards, dataDir: dir });
    await node.close();
    await expectStorageError(
      StorageNode.open(makeGenesis(6, 300), { shards, dataDir: dir }),
      StorageErrorCode.BadArgument,
    );
    await expectStorageError(
      StorageNode.open(genesis, { shards: [1, 2], dataDir: dir }),
      StorageErrorCode.BadArgument,
    );
  });
});
