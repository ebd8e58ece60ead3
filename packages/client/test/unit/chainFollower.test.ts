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
  decodeHeader,
  encodeHeader,
  type Genesis,
  genesisHeader,
  headerHash,
  type minerPb,
} from '@monsoon/protocol';

/** An empty chain's genesis (difficulty 0): the fields every test header starts from. */
const GENESIS = {
  chainId: 1337n,
  difficulty: 0n,
  gasLimit: 30_000_000n,
  timestamp: 1n,
  extraData: new Uint8Array(0),
  coinbase: new Uint8Array(20),
  nonce: new Uint8Array(8),
  alloc: [],
} as unknown as Genesis;

/** A streamed block message with header number `number` and no transactions (difficulty 0). */
function blockMessage(number: bigint): minerPb.BlockWithReceipts {
  const header = { ...genesisHeader(GENESIS, new Uint8Array(32)), number };
  return blockWithReceiptsToProto({ headerRlp: encodeHeader(header), transactions: [], receipts: [] });
}

/** A block on `parent` (a parent hash of zeros when none is given). */
function block(number: bigint, parent?: ClientBlock): ClientBlock {
  return {
    hash: keccak.keccak256(Uint8Array.of(Number(number & 0xffn), Number(number >> 8n))),
    header: { parentHash: parent?.hash ?? new Uint8Array(32), number, difficulty: 0n } as BlockHeader,
    transactions: [],
    txHashes: [],
    txKeys: [],
    receipts: [],
    logsBloom: new Uint8Array(256),
    size: 0,
  };
}

/** The follower over a fresh ChainView, a recording miner stand-in and a storage stand-in. */
function follower(
  syncFrom: SyncFrom,
  options: Partial<typeof defaultChainFollowerOptions> = {},
  genesisHash?: Uint8Array,
) {
  const chain = new ChainView();
  const requests: minerPb.SubscribeBlocksRequest[] = [];
  const calls: (EventEmitter & { cancel(): void })[] = [];
  const headerCalls: { req: minerPb.GetHeadersRequest; call: EventEmitter }[] = [];
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
      getHeaders(req: minerPb.GetHeadersRequest) {
        const call = Object.assign(new EventEmitter(), { cancel() {} });
        headerCalls.push({ req, call });
        onRequest?.();
        return call;
      },
    },
  } as unknown as MinerPool;
  const storage = { readableNumber: -1n, followHeads() {} };
  const f = new ChainFollower(
    { ...defaultChainFollowerOptions, syncFrom, retryMs: 0, ...options },
    {
      chain,
      miners,
      storage: storage as unknown as ShardedStorage,
      ...(genesisHash === undefined ? {} : { genesisHash: () => Promise.resolve(genesisHash) }),
    },
  );
  /** Resolves at the next SubscribeBlocks request. */
  const nextRequest = () =>
    new Promise<void>((resolve) => {
      onRequest = () => {
        onRequest = undefined;
        resolve();
      };
    });
  return { f, chain, storage, requests, calls, headerCalls, nextRequest };
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
    const { f, chain, requests, calls, nextRequest } = follower('head', { history: 0 });
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
    // The chain starts at the anchor; nothing older is asked for (no history wanted here).
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

/** Streamed messages of a linked chain #0..#`top` (difficulty 0, no transactions). */
function chainMessages(top: bigint, tag = 0): minerPb.BlockWithReceipts[] {
  const out: minerPb.BlockWithReceipts[] = [];
  let parent: Uint8Array = new Uint8Array(32);
  for (let n = 0n; n <= top; n++) {
    const header: BlockHeader = {
      ...genesisHeader(GENESIS, new Uint8Array(32)),
      number: n,
      parentHash: parent,
      timestamp: BigInt(tag),
    };
    out.push(blockWithReceiptsToProto({ headerRlp: encodeHeader(header), transactions: [], receipts: [] }));
    parent = headerHash(header, keccak);
  }
  return out;
}

describe('ChainFollower: the history behind a late start', () => {
  it('is fetched once it serves, linked to the anchor, with eth_syncing saying how far it has come', async () => {
    const msgs = chainMessages(120n);
    const { f, chain, storage, requests, calls, nextRequest } = follower('head', { history: 50 });
    storage.readableNumber = 120n;
    f.start();
    let next = nextRequest();
    calls[0]!.emit('data', msgs[120]);
    await next;
    expect(requests[1]!.fromNumber).toBe(104n);
    // The anchor arrives: the follower serves, and asks for the 50 blocks below it.
    next = nextRequest();
    for (const m of msgs.slice(104)) calls[1]!.emit('data', m);
    await next;
    expect(chain.head?.header.number).toBe(120n);
    expect(requests[2]!.fromNumber).toBe(54n);
    expect(f.syncing()).toEqual({ startingBlock: 54n, currentBlock: 54n, highestBlock: 120n });
    for (const m of msgs.slice(54, 80)) calls[2]!.emit('data', m);
    expect(f.syncing()).toEqual({ startingBlock: 54n, currentBlock: 79n, highestBlock: 120n });
    for (const m of msgs.slice(80, 104)) calls[2]!.emit('data', m);
    // Through: eth_syncing is false again, #54..#120 held and linked.
    expect(f.syncing()).toBeUndefined();
    expect(chain.oldest?.header.number).toBe(54n);
    expect(f.historyBlocks).toBe(50);
    expect(chain.byNumber(80n)?.header.number).toBe(80n);
    f.stop();
  });

  it('is tried again when it does not link to the anchor (a reorg below it), then given up loudly', async () => {
    const ours = chainMessages(40n);
    const theirs = chainMessages(40n, 7);
    const logged: string[] = [];
    const logger = {
      debug() {},
      info() {},
      warn: (m: string) => logged.push(m),
      error: (m: string) => logged.push(m),
    };
    const { f, chain, requests, calls } = follower('genesis', {
      history: 10,
      historyAttempts: 2,
      logger: logger as never,
    });
    f.start();
    for (const m of ours.slice(0, 41)) calls[0]!.emit('data', m);
    // A genesis-synced follower holds everything: no history to fetch.
    expect(requests).toHaveLength(1);
    f.stop();

    const late = follower('head', { history: 10, historyAttempts: 2, logger: logger as never });
    late.f.start();
    let next = late.nextRequest();
    late.calls[0]!.emit('data', ours[40]);
    await next;
    next = late.nextRequest();
    for (const m of ours.slice(24)) late.calls[1]!.emit('data', m);
    await next;
    expect(late.requests[2]!.fromNumber).toBe(14n);
    // Another chain's blocks: refused, asked again (from the next miner).
    next = late.nextRequest();
    for (const m of theirs.slice(14, 24)) late.calls[2]!.emit('data', m);
    await next;
    expect(logged).toEqual(['history behind the anchor: trying again']);
    expect(late.requests[3]!.fromNumber).toBe(14n);
    expect(late.chain.oldest?.header.number).toBe(24n);
    late.calls[3]!.emit('error', new Error('stream reset'));
    expect(logged.at(-1)).toBe('history behind the anchor not fetched: blocks below it stay unknown');
    expect(late.f.syncing()).toBeUndefined();
    expect(late.f.historyBlocks).toBe(0);
    expect(chain.size).toBe(41);
    late.f.stop();
  });
});

describe("ChainFollower: a late start's ancestry", () => {
  it("is checked through the miner's headers down to the genesis file's block 0, or reported failed", async () => {
    const msgs = chainMessages(60n);
    const headersOf = (from: number, to: number) => ({
      headers: msgs.slice(from, to).map((m) => m.headerRlp),
    });
    const genesis = headerHash(decodeHeader(msgs[0]!.headerRlp), keccak);
    const run = async (hash: Uint8Array, answer: (call: EventEmitter, attempt: number) => void) => {
      const late = follower('head', { history: 4, historyAttempts: 2 }, hash);
      late.storage.readableNumber = 60n;
      late.f.start();
      let next = late.nextRequest();
      late.calls[0]!.emit('data', msgs[60]);
      await next;
      next = late.nextRequest();
      for (const m of msgs.slice(44)) late.calls[1]!.emit('data', m);
      await next;
      next = late.nextRequest();
      for (const m of msgs.slice(40, 44)) late.calls[2]!.emit('data', m);
      await next;
      // History #40..#43 held; the headers #0..#39 are asked for, and eth_syncing says so.
      expect(late.chain.oldest?.header.number).toBe(40n);
      expect(late.headerCalls[0]!.req).toEqual({ fromNumber: 0n, toNumber: 39n });
      expect(late.f.ancestryChecked).toBeUndefined();
      expect(late.f.syncing()).toEqual({ startingBlock: 0n, currentBlock: 0n, highestBlock: 60n });
      for (let attempt = 0; attempt < 2 && late.f.ancestryChecked === undefined; attempt++) {
        next = late.nextRequest();
        answer(late.headerCalls[attempt]!.call, attempt);
        if (late.f.ancestryChecked === undefined) await next;
      }
      late.f.stop();
      return late;
    };
    const good = await run(genesis, (call) => {
      call.emit('data', headersOf(0, 20));
      call.emit('data', headersOf(20, 40));
      call.emit('end');
    });
    expect(good.f.ancestryChecked).toBe(true);
    expect(good.f.syncing()).toBeUndefined();
    // Another chain's genesis; then headers that stop short of the oldest block held.
    const foreign = await run(keccak.keccak256(Uint8Array.of(1)), (call, attempt) => {
      call.emit('data', attempt === 0 ? headersOf(0, 40) : headersOf(0, 30));
      call.emit('end');
    });
    expect(foreign.f.ancestryChecked).toBe(false);
    const gap = await run(genesis, (call, attempt) => {
      call.emit(
        'data',
        attempt === 0
          ? { headers: [...headersOf(0, 10).headers, ...headersOf(11, 40).headers] }
          : headersOf(0, 30),
      );
      call.emit('end');
    });
    expect(gap.f.ancestryChecked).toBe(false);
  });
});

describe('ChainFollower.syncing (eth_syncing)', () => {
  it('false while chain and storage agree; else from the first block taken to the newer head', () => {
    const { f, chain, storage } = follower('head', { history: 0 });
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
