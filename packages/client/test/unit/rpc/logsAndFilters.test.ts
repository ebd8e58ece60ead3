/**
 * eth_getLogs and the filter methods through handleRpc, over a hand-fed chain (EventChain):
 * ranges by tag and number, blockHash, geth's JSON for a log (block-wide logIndex, the
 * transaction's hash and index, removed), topic and address matching, geth's range and
 * query-size errors with their codes and messages, the result limit; filters buffer what
 * happened between polls (a reorg's removed logs again, `removed: true`), expire when not
 * polled, and are bounded in number and in what they buffer.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { fromHex } from '@monsoon/dsm-tree';
import { zeroPadValue } from 'ethers';
import type { ClientBlock } from '../../../src/chain.js';
import {
  defaultFiltersOptions,
  Filters,
  handleRpc,
  type Json,
  type RpcHandlerOptions,
  type RpcSession,
} from '../../../src/rpc/index.js';
import { EventChain, hex, transferLog } from './eventChain.js';
import { alice, bob, signTransfer, TOKEN, tokenAbi } from './fakeBackend.js';

const OTHER_TOKEN = '0x1000000000000000000000000000000000000002';
const TRANSFER = tokenAbi.getEvent('Transfer')!.topicHash;
const topicOf = (address: string) => zeroPadValue(address, 32).toLowerCase();

let c: EventChain;
let session: RpcSession;
let now: number;
/** Block 1: alice→bob 1 (token), bob→alice 2 (other token); block 2: none; block 3: bob→alice 3 in tx 1. */
let blocks: ClientBlock[];

beforeEach(() => {
  c = new EventChain(8);
  now = 0;
  const filters = new Filters(defaultFiltersOptions, { events: c.events, now: () => now });
  session = { events: c.events, filters };
  blocks = [
    c.mine([
      [transferLog(alice.address, bob.address, 1n), transferLog(bob.address, alice.address, 2n, OTHER_TOKEN)],
    ]),
    c.mine([]),
    c.mine([[], [transferLog(bob.address, alice.address, 3n)]]),
  ];
});

afterEach(() => {
  session.filters?.close();
  c.events.close();
});

async function rpc(method: string, params: unknown[], opts: Partial<RpcHandlerOptions> = {}, s = session) {
  const r = await handleRpc({ jsonrpc: '2.0', id: 1, method, params }, c.backend, opts, undefined, s);
  if (r === undefined || Array.isArray(r))
    throw new Error(`expected one response, found ${JSON.stringify(r)}`);
  return r;
}

async function result(
  method: string,
  params: unknown[],
  opts: Partial<RpcHandlerOptions> = {},
): Promise<Json> {
  const r = await rpc(method, params, opts);
  if ('error' in r) throw new Error(`${method} failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

async function failure(method: string, params: unknown[], opts: Partial<RpcHandlerOptions> = {}) {
  const r = await rpc(method, params, opts);
  if (!('error' in r)) throw new Error(`${method} succeeded: ${JSON.stringify(r.result)}`);
  return r.error;
}

/** The values of the Transfer logs an answer holds. */
const values = (logs: Json) => (logs as { data: string }[]).map((l) => BigInt(l.data));

describe('eth_getLogs', () => {
  it('writes each log as geth does, numbered block-wide', async () => {
    const logs = (await result('eth_getLogs', [{ fromBlock: '0x3', toBlock: '0x3' }])) as Json[];
    const b = blocks[2]!;
    expect(logs).toEqual([
      {
        address: TOKEN,
        topics: [TRANSFER, topicOf(bob.address), topicOf(alice.address)],
        data: zeroPadValue('0x03', 32),
        blockNumber: '0x3',
        transactionHash: hex(b.txHashes[1]!),
        transactionIndex: '0x1',
        blockHash: hex(b.hash),
        blockTimestamp: `0x${b.header.timestamp.toString(16)}`,
        logIndex: '0x0',
        removed: false,
      },
    ]);
    const first = (await result('eth_getLogs', [{ blockHash: hex(blocks[0]!.hash) }])) as {
      logIndex: string;
    }[];
    expect(first.map((l) => l.logIndex)).toEqual(['0x0', '0x1']);
  });

  it('takes ranges by number and tag, latest by default, and blockHash', async () => {
    expect(values(await result('eth_getLogs', [{}]))).toEqual([3n]);
    expect(values(await result('eth_getLogs', [{ fromBlock: 'earliest' }]))).toEqual([1n, 2n, 3n]);
    expect(values(await result('eth_getLogs', [{ fromBlock: '0x1', toBlock: 'latest' }]))).toEqual([
      1n,
      2n,
      3n,
    ]);
    expect(values(await result('eth_getLogs', [{ fromBlock: '0x2', toBlock: '0x2' }]))).toEqual([]);
    // safe and finalized: confirmationDepth below the head (#3).
    const opts = { confirmationDepth: 2 };
    expect(values(await result('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'safe' }], opts))).toEqual([
      1n,
      2n,
    ]);
    expect(values(await result('eth_getLogs', [{ fromBlock: 'finalized' }], opts))).toEqual([1n, 2n, 3n]);
    expect(values(await result('eth_getLogs', [{ blockHash: hex(blocks[2]!.hash) }]))).toEqual([3n]);
  });

  it('matches addresses (one or a list) and topics (positional, null, OR lists) as geth', async () => {
    const get = async (f: object) => values(await result('eth_getLogs', [{ fromBlock: '0x0', ...f }]));
    expect(await get({ address: TOKEN })).toEqual([1n, 3n]);
    expect(await get({ address: [OTHER_TOKEN, TOKEN] })).toEqual([1n, 2n, 3n]);
    expect(await get({ topics: [TRANSFER, topicOf(bob.address)] })).toEqual([2n, 3n]);
    expect(await get({ topics: [null, null, topicOf(bob.address)] })).toEqual([1n]);
    expect(await get({ topics: [null, [topicOf(alice.address), topicOf(bob.address)]] })).toEqual([
      1n,
      2n,
      3n,
    ]);
    expect(await get({ topics: [null, [topicOf(bob.address), null]] })).toEqual([1n, 2n, 3n]);
    // More positions than a Transfer has topics: nothing, wildcards or not.
    expect(await get({ topics: [null, null, null, null] })).toEqual([]);
    expect(await get({ address: TOKEN, topics: [TRANSFER, null, topicOf(alice.address)] })).toEqual([3n]);
  });

  it('refuses bad ranges with geth’s codes and messages', async () => {
    const cases: [object, Partial<RpcHandlerOptions>, number, string][] = [
      [{ fromBlock: '0x3', toBlock: '0x1' }, {}, -32602, 'invalid block range params'],
      [{ fromBlock: '0x4' }, {}, -32602, 'invalid block range params'],
      [{ fromBlock: '0x1', toBlock: '0x9' }, {}, -32602, 'block range extends beyond current head block'],
      [{ fromBlock: 'pending' }, {}, -32602, 'pending logs are not supported'],
      [{ fromBlock: '0x0', toBlock: '0x3' }, { maxBlockRange: 2 }, -32602, 'exceed maximum block range 2'],
      [{ fromBlock: '0x0' }, { maxLogResults: 2 }, -32005, 'query returned more than 2 results'],
      [
        { address: [TOKEN, OTHER_TOKEN] },
        { maxQueryTerms: 1 },
        -32000,
        'exceed max addresses or topics per search position',
      ],
      [{ blockHash: `0x${'ab'.repeat(32)}` }, {}, -32000, 'unknown block'],
    ];
    for (const [crit, opts, code, message] of cases) {
      expect([crit, await failure('eth_getLogs', [crit], opts)]).toEqual([crit, { code, message }]);
    }
    expect(await result('eth_getLogs', [{ fromBlock: '0x0' }], { maxLogResults: 3 })).toHaveLength(3);
  });

  it('refuses malformed criteria as geth’s FilterCriteria decoding does', async () => {
    const invalid = (message: string) => ({ code: -32602, message: `invalid argument 0: ${message}` });
    const cases: [object, string][] = [
      [
        { blockHash: hex(blocks[0]!.hash), fromBlock: '0x1' },
        'cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other',
      ],
      [{ topics: [null, null, null, null, null] }, 'exceed max topics'],
      [{ topics: [5] }, 'invalid topic(s)'],
      [{ topics: [[TRANSFER, 5]] }, 'invalid topic(s)'],
      [{ topics: ['0x1234'] }, 'hex has invalid length 2 after decoding; expected 32 for topic'],
      [
        { topics: 'x' },
        'json: cannot unmarshal string into Go struct field input.topics of type []interface {}',
      ],
      [
        { address: '0x12' },
        'invalid address: hex has invalid length 1 after decoding; expected 20 for address',
      ],
      [{ address: ['0xzz'] }, 'invalid address at index 0: invalid hex string'],
      [{ address: [TOKEN, 7] }, 'non-string address at index 1'],
      [{ address: 7 }, 'invalid addresses in query'],
      [{ fromBlock: 'soon' }, 'hex string without 0x prefix'],
      [{ blockHash: '0x12' }, 'hex string has length 2, want 64 for common.Hash'],
    ];
    for (const [crit, message] of cases) {
      expect([crit, await failure('eth_getLogs', [crit])]).toEqual([crit, invalid(message)]);
    }
    expect(await failure('eth_getLogs', ['latest'])).toEqual(
      invalid('json: cannot unmarshal string into Go value of type filters.input'),
    );
  });

  it('answers "pruned history unavailable" (4444) below the window, by number and by hash', async () => {
    c.mineEmpty(8); // the window (8) now starts at block 4
    const pruned = { code: 4444, message: 'pruned history unavailable' };
    expect(await failure('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x5' }])).toEqual(pruned);
    expect(await failure('eth_getLogs', [{ blockHash: hex(blocks[0]!.hash) }])).toEqual(pruned);
    expect(await result('eth_getLogs', [{ fromBlock: 'earliest' }])).toEqual([]);
  });

  it('is not served without chain events', async () => {
    const r = await rpc('eth_getLogs', [{}], {}, {});
    expect(r).toMatchObject({
      error: { code: -32601, message: 'the method eth_getLogs does not exist/is not available' },
    });
  });
});

describe('filters', () => {
  it('buffer matching logs between polls, a reorg’s removed ones again with removed: true', async () => {
    const id = (await result('eth_newFilter', [{ address: TOKEN }])) as string;
    expect(id).toMatch(/^0x[1-9a-f][0-9a-f]*$/);
    expect(await result('eth_getFilterChanges', [id])).toEqual([]);
    const four = c.mine([[transferLog(alice.address, bob.address, 4n)]]);
    c.mine([[transferLog(alice.address, bob.address, 5n, OTHER_TOKEN)]]);
    expect(values(await result('eth_getFilterChanges', [id]))).toEqual([4n]);
    expect(await result('eth_getFilterChanges', [id])).toEqual([]);
    // A reorg at #4: block 4 (value 4) and 5 leave; the new #4 holds value 6.
    c.mine([[transferLog(bob.address, alice.address, 6n)]], { parent: blocks[2], fork: 1 });
    const changes = (await result('eth_getFilterChanges', [id])) as {
      data: string;
      removed: boolean;
      blockHash: string;
    }[];
    expect(changes.map((l) => [BigInt(l.data), l.removed])).toEqual([
      [4n, true],
      [6n, false],
    ]);
    expect(changes[0]!.blockHash).toBe(hex(four.hash));
    // eth_getFilterLogs: what the criteria select now (from latest: the new #4).
    expect(values(await result('eth_getFilterLogs', [id]))).toEqual([6n]);
    expect(await result('eth_uninstallFilter', [id])).toBe(true);
    expect(await result('eth_uninstallFilter', [id])).toBe(false);
    expect(await failure('eth_getFilterChanges', [id])).toEqual({
      code: -32000,
      message: 'filter not found',
    });
  });

  it('keep to their numeric block range', async () => {
    const id = (await result('eth_newFilter', [{ fromBlock: '0x1', toBlock: '0x4' }])) as string;
    c.mine([[transferLog(alice.address, bob.address, 4n)]]);
    c.mine([[transferLog(alice.address, bob.address, 5n)]]);
    expect(values(await result('eth_getFilterChanges', [id]))).toEqual([4n]);
    expect(values(await result('eth_getFilterLogs', [id]))).toEqual([1n, 2n, 3n, 4n]);
  });

  it('report new block hashes (a reorg’s block too) and accepted transactions', async () => {
    const blocksId = (await result('eth_newBlockFilter', [])) as string;
    const pendingId = (await result('eth_newPendingTransactionFilter', [])) as string;
    const fullId = (await result('eth_newPendingTransactionFilter', [true])) as string;
    const b4 = c.mine([]);
    const fork = c.mine([], { parent: blocks[2], fork: 1 });
    expect(await result('eth_getFilterChanges', [blocksId])).toEqual([hex(b4.hash), hex(fork.hash)]);
    const known = await c.backend.sendRawTransaction(fromHex(await signTransfer(alice, 2, 0, bob.address)));
    const unknown = new Uint8Array(32).fill(7);
    c.events.pendingTransaction(known);
    c.events.pendingTransaction(unknown);
    expect(await result('eth_getFilterChanges', [pendingId])).toEqual([hex(known), hex(unknown)]);
    // With full transactions: those the backend can find (it no longer has the second).
    const full = (await result('eth_getFilterChanges', [fullId])) as { hash: string; from: string }[];
    expect(full.map((t) => [t.hash, t.from])).toEqual([[hex(known), alice.address.toLowerCase()]]);
    expect(await failure('eth_getFilterLogs', [blocksId])).toEqual({
      code: -32000,
      message: 'filter not found',
    });
  });

  it('expire when not polled for the timeout, as geth’s sweep does', async () => {
    const filters = session.filters!;
    const polled = (await result('eth_newBlockFilter', [])) as string;
    const idle = (await result('eth_newBlockFilter', [])) as string;
    now = defaultFiltersOptions.filterTimeoutMs - 1;
    expect(filters.sweep()).toBe(0);
    await result('eth_getFilterChanges', [polled]);
    // getFilterLogs is no poll: the idle log filter below expires all the same.
    const logsId = (await result('eth_newFilter', [{}])) as string;
    now = defaultFiltersOptions.filterTimeoutMs + 10;
    expect(filters.sweep()).toBe(1);
    expect(await failure('eth_getFilterChanges', [idle])).toEqual({
      code: -32000,
      message: 'filter not found',
    });
    await result('eth_getFilterLogs', [logsId]);
    now += defaultFiltersOptions.filterTimeoutMs;
    expect(filters.sweep()).toBe(2);
    expect(await failure('eth_getFilterChanges', [polled])).toEqual({
      code: -32000,
      message: 'filter not found',
    });
  });

  it('are bounded in number and in what one buffers', async () => {
    const filters = new Filters(
      { ...defaultFiltersOptions, maxFilters: 2, maxFilterChanges: 2 },
      { events: c.events },
    );
    const s: RpcSession = { events: c.events, filters };
    const call = (method: string, params: unknown[]) => rpc(method, params, {}, s);
    const a = await call('eth_newFilter', [{}]);
    await call('eth_newBlockFilter', []);
    expect(await call('eth_newBlockFilter', [])).toMatchObject({
      error: { code: -32000, message: 'too many filters installed (limit 2)' },
    });
    const id = (a as { result: string }).result;
    c.mine([[transferLog(alice.address, bob.address, 4n), transferLog(alice.address, bob.address, 5n)]]);
    expect(values(((await call('eth_getFilterChanges', [id])) as { result: Json }).result)).toEqual([4n, 5n]);
    c.mine([[transferLog(alice.address, bob.address, 6n)]]);
    c.mine([[transferLog(alice.address, bob.address, 7n), transferLog(alice.address, bob.address, 8n)]]);
    expect(await call('eth_getFilterChanges', [id])).toMatchObject({
      error: { message: 'filter not found' },
    });
    // The block filter, never polled, fell three blocks behind a bound of two: gone as well.
    expect(filters.size).toBe(0);
    filters.close();
  });

  it('refuses what geth refuses when a log filter is installed', async () => {
    const cases: [object, number, string][] = [
      [{ fromBlock: 'pending' }, -32602, 'pending logs are not supported'],
      [{ fromBlock: 'latest', toBlock: '0x5' }, -32602, 'invalid block range params'],
      [{ fromBlock: '0x5', toBlock: '0x2' }, -32602, 'invalid block range params'],
      [{ fromBlock: 'safe' }, -32602, 'invalid block range params'],
    ];
    for (const [crit, code, message] of cases) {
      expect([crit, await failure('eth_newFilter', [crit])]).toEqual([crit, { code, message }]);
    }
    c.mineEmpty(8);
    expect(await failure('eth_newFilter', [{ fromBlock: '0x1' }])).toEqual({
      code: 4444,
      message: 'pruned history unavailable',
    });
    expect(await result('eth_newFilter', [{ fromBlock: 'earliest' }])).toMatch(/^0x/);
  });
});
