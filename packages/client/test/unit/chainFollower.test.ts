/**
 * Where the chain follower starts and what eth_syncing says (issue 15: a client started late).
 * A fresh follower asks the miner for its head (no fromNumber), then follows from 16 blocks below
 * it, not from block 0 — the old behaviour, which replayed every block from genesis and served
 * reads at old heads meanwhile — unless told `syncFrom: 'genesis'`; a broken stream resumes 16
 * blocks below the head held.
 * eth_syncing is false while the chain head and the storage nodes' head agree, else geth's
 * object from the first block taken. In process: a ChainView fed directly, stand-ins for the
 * miner pool (recording each SubscribeBlocks request) and for storage (its readable number).
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import {
  ChainFollower,
  ChainView,
  type ClientBlock,
  defaultChainFollowerOptions,
  type MinerPool,
  type ShardedStorage,
  type SyncFrom,
} from '@monsoon/client';
import { keccak } from '@monsoon/keccak';
import {
  type BlockHeader,
  blockWithReceiptsToProto,
  encodeHeader,
  type Genesis,
  genesisHeader,
  type minerPb,
} from '@monsoon/protocol';

/** A streamed block message with header number `number` and no transactions (difficulty 0). */
function blockMessage(number: bigint): minerPb.BlockWithReceipts {
  const g = {
    chainId: 1337n,
    difficulty: 0n,
    gasLimit: 30_000_000n,
    timestamp: 1n,
    extraData: new Uint8Array(0),
    coinbase: new Uint8Array(20),
    nonce: new Uint8Array(8),
    alloc: [],
  } as unknown as Genesis;
  const header = { ...genesisHeader(g, new Uint8Array(32)), number };
  return blockWithReceiptsToProto({ headerRlp: encodeHeader(header), transactions: [], receipts: [] });
}

/** A block on `parent` (a parent hash of zeros when none is given). */
function block(number: bigint, parent?: ClientBlock): ClientBlock {
  return {
    hash: keccak.keccak256(Uint8Array.of(Number(number & 0xffn), Number(number >> 8n))),
    header: { parentHash: parent?.hash ?? new Uint8Array(32), number, difficulty: 0n } as BlockHeader,
    transactions: [],
    txHashes: [],
    receipts: [],
    logsBloom: new Uint8Array(256),
    size: 0,
  };
}

/** The follower over a fresh ChainView, a recording miner stand-in and a storage stand-in. */
function follower(syncFrom: SyncFrom) {
  const chain = new ChainView();
  const requests: minerPb.SubscribeBlocksRequest[] = [];
  const calls: (EventEmitter & { cancel(): void })[] = [];
  let onRequest: (() => void) | undefined;
  const miners = {
    addresses: ['miner:1'],
    currentAddress: 'miner:1',
    next() {},
    current: {
      subscribeBlocks(req: minerPb.SubscribeBlocksRequest) {
        requests.push(req);
        const call = Object.assign(new EventEmitter(), { cancel() {} });
        calls.push(call);
        onRequest?.();
        return call;
      },
    },
  } as unknown as MinerPool;
  const storage = { readableNumber: -1n, followHeads() {} };
  const f = new ChainFollower(
    { ...defaultChainFollowerOptions, syncFrom, retryMs: 0 },
    { chain, miners, storage: storage as unknown as ShardedStorage },
  );
  /** Resolves at the next SubscribeBlocks request. */
  const nextRequest = () =>
    new Promise<void>((resolve) => {
      onRequest = () => {
        onRequest = undefined;
        resolve();
      };
    });
  return { f, chain, storage, requests, calls, nextRequest };
}

/** Blocks `from`..`to` on one another, added to `chain`. */
function grow(chain: ChainView, from: bigint, to: bigint): void {
  let parent = chain.head;
  for (let n = from; n <= to; n++) {
    const b = block(n, parent);
    chain.add(b);
    parent = b;
  }
}

describe('ChainFollower: where a fresh client starts', () => {
  it("'head' asks the miner for its head, not block 0; a broken stream resumes below the head held", async () => {
    expect(defaultChainFollowerOptions.syncFrom).toBe('head');
    const { f, chain, requests, calls, nextRequest } = follower('head');
    f.start();
    expect(requests).toHaveLength(1);
    expect(requests[0]!.fromNumber).toBeUndefined();
    // The miner's head arrives first: the follower anchors resumeDepth below it, on the same miner.
    const depth = defaultChainFollowerOptions.resumeDepth;
    const anchored = nextRequest();
    calls[0]!.emit('data', blockMessage(1000n));
    await anchored;
    expect(requests[1]!.fromNumber).toBe(1000n - depth);
    expect(f.blocksReceived).toBe(0);
    // The chain starts at the anchor; nothing older is asked for.
    grow(chain, 1000n - depth, 1001n);
    expect(chain.byNumber(1000n - depth - 1n)).toBeUndefined();
    const again = nextRequest();
    calls[1]!.emit('error', new Error('stream reset'));
    await again;
    expect(requests[2]!.fromNumber).toBe(1001n - depth);
    f.stop();
  });

  it("'genesis' replays from block 0", () => {
    const { f, requests } = follower('genesis');
    f.start();
    expect(requests.map((r) => r.fromNumber)).toEqual([0n]);
    f.stop();
  });
});

describe('ChainFollower.syncing (eth_syncing)', () => {
  it('false while chain and storage agree; else from the first block taken to the newer head', () => {
    const { f, chain, storage } = follower('head');
    expect(f.syncing()).toBeUndefined(); // no block yet
    grow(chain, 500n, 502n);
    expect(f.syncing()).toBeUndefined(); // storage not heard from yet
    storage.readableNumber = 502n;
    expect(f.syncing()).toBeUndefined();
    // Storage behind the chain head: reads are served at its head.
    storage.readableNumber = 499n;
    expect(f.syncing()).toEqual({ startingBlock: 500n, currentBlock: 499n, highestBlock: 502n });
    // This client behind storage (still taking blocks).
    storage.readableNumber = 510n;
    expect(f.syncing()).toEqual({ startingBlock: 500n, currentBlock: 502n, highestBlock: 510n });
    grow(chain, 503n, 510n);
    expect(f.syncing()).toBeUndefined();
  });
});
