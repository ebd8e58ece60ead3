/**
 * JSON-RPC over WebSocket on the HTTP port (RpcServer on 127.0.0.1:0, a raw `ws` client): every
 * HTTP method answers there too; eth_subscribe newHeads / logs / newPendingTransactions notify
 * as geth does, a subscription's first notification never precedes its id, a reorg sends the
 * removed logs again with `removed: true`; eth_unsubscribe; geth's errors (HTTP: "notifications
 * not supported"); a per-connection limit; a consumer that does not read is dropped.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { fromHex } from '@monsoon/dsm-tree';
import { zeroPadValue } from 'ethers';
import { WebSocket } from 'ws';
import type { BlockTag } from '../../../src/rpc/backend.js';
import { headerJson } from '../../../src/rpc/blockJson.js';
import { type Json, RpcServer } from '../../../src/rpc/index.js';
import { EventChain, hex, transferLog } from './eventChain.js';
import { alice, BASE_FEE, bob, signTransfer, TOKEN } from './fakeBackend.js';
import { WarningLog } from './warningLog.js';

interface Message {
  id?: number;
  result?: Json;
  error?: { code: number; message: string };
  method?: string;
  params?: { subscription: string; result: Json };
}

/** A JSON-RPC client on one WebSocket: calls by id, and every message in arrival order. */
class WsClient {
  readonly messages: Message[] = [];
  private nextId = 1;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as Message | Message[];
      for (const one of Array.isArray(m) ? m : [m]) this.messages.push(one);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static async open(url: string): Promise<WsClient> {
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new WsClient(ws);
  }

  /** Resolves once a message satisfies `f`. */
  async waitFor(f: (m: Message) => boolean): Promise<Message> {
    for (;;) {
      const found = this.messages.find(f);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  send(body: object): void {
    this.ws.send(JSON.stringify(body));
  }

  async call(method: string, params: unknown[] = []): Promise<Message> {
    const id = this.nextId++;
    this.send({ jsonrpc: '2.0', id, method, params });
    return this.waitFor((m) => m.id === id);
  }

  async subscribe(params: unknown[]): Promise<string> {
    const r = await this.call('eth_subscribe', params);
    if (typeof r.result !== 'string') throw new Error(`eth_subscribe failed: ${JSON.stringify(r)}`);
    return r.result;
  }

  /** The results notified to `sub`, in order. */
  notified(sub: string): Json[] {
    return this.messages.filter((m) => m.params?.subscription === sub).map((m) => m.params!.result);
  }

  close(): void {
    this.ws.terminate();
  }
}

const logger = new WarningLog();

let c: EventChain;
let server: RpcServer;
let client: WsClient;
beforeAll(async () => {
  c = new EventChain(64);
  server = await RpcServer.create(
    { listen: '127.0.0.1:0', maxSubscriptions: 4 },
    { backend: c.backend, events: c.events, logger },
  );
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  client = await WsClient.open(server.wsUrl);
});
afterEach(() => client.close());

describe('JSON-RPC over WebSocket', () => {
  it('answers the HTTP methods, batches included, on the same port', async () => {
    expect(server.wsUrl).toBe(server.url.replace('http://', 'ws://'));
    expect(await client.call('eth_chainId')).toMatchObject({ result: '0x539' });
    client.send([
      { jsonrpc: '2.0', id: 101, method: 'eth_blockNumber' },
      { jsonrpc: '2.0', id: 102, method: 'eth_nope' },
    ]);
    expect(await client.waitFor((m) => m.id === 102)).toMatchObject({
      error: { code: -32601, message: 'the method eth_nope does not exist/is not available' },
    });
    expect(client.messages.find((m) => m.id === 101)?.result).toBe(`0x${c.head.header.number.toString(16)}`);
  });

  it('sends newHeads, each after the subscription id', async () => {
    const sub = await client.subscribe(['newHeads']);
    expect(sub).toMatch(/^0x[1-9a-f][0-9a-f]*$/);
    const b = c.mine([]);
    const m = await client.waitFor((x) => x.params?.subscription === sub);
    expect(m).toEqual({
      jsonrpc: '2.0',
      method: 'eth_subscription',
      params: { subscription: sub, result: headerJson({ ...b, baseFeePerGas: BASE_FEE }) },
    });
  });

  it('sends matching logs, and on a reorg the removed ones again with removed: true', async () => {
    const toAlice = zeroPadValue(alice.address, 32);
    const sub = await client.subscribe(['logs', { address: TOKEN, topics: [null, null, [toAlice]] }]);
    const parent = c.head;
    const one = c.mine([
      [transferLog(bob.address, alice.address, 1n), transferLog(alice.address, bob.address, 9n)],
    ]);
    c.mine([[transferLog(bob.address, alice.address, 2n)]]);
    const fork = c.mine([[transferLog(bob.address, alice.address, 3n)]], { parent, fork: 7 });
    await client.waitFor(
      (m) =>
        m.params?.subscription === sub &&
        (m.params.result as { blockHash: string }).blockHash === hex(fork.hash),
    );
    const got = client.notified(sub) as {
      data: string;
      removed: boolean;
      blockHash: string;
      logIndex: string;
    }[];
    expect(got.map((l) => [BigInt(l.data), l.removed])).toEqual([
      [1n, false],
      [2n, false],
      [1n, true],
      [2n, true],
      [3n, false],
    ]);
    expect(got[2]).toEqual({ ...got[0], removed: true });
    expect(got[0]!.blockHash).toBe(hex(one.hash));
  });

  it('sends accepted transactions’ hashes, or the transactions', async () => {
    const hashes = await client.subscribe(['newPendingTransactions']);
    const full = await client.subscribe(['newPendingTransactions', true]);
    const hash = await c.backend.sendRawTransaction(
      fromHex(await signTransfer(alice, 2, 0, bob.address, 5n)),
    );
    c.events.pendingTransaction(hash);
    await client.waitFor((m) => m.params?.subscription === full);
    expect(client.notified(hashes)).toEqual([hex(hash)]);
    expect(client.notified(full)).toMatchObject([{ hash: hex(hash), value: '0x5', blockHash: null }]);
  });

  it('unsubscribes, and refuses what geth refuses', async () => {
    const sub = await client.subscribe(['newHeads']);
    expect(await client.call('eth_unsubscribe', [sub])).toMatchObject({ result: true });
    expect(await client.call('eth_unsubscribe', [sub])).toMatchObject({
      error: { code: -32000, message: 'subscription not found' },
    });
    const cases: [unknown, number, string][] = [
      [['nope'], -32601, 'no "nope" subscription in eth namespace'],
      [[5], -32602, 'expected subscription name as first argument'],
      [[], -32602, 'expected subscription name as first argument'],
      [['newHeads', {}], -32602, 'too many arguments, want at most 1'],
      [['logs'], -32602, 'missing value for required argument 1'],
      [['logs', { topics: [5] }], -32602, 'invalid argument 1: invalid topic(s)'],
      [['logs', { fromBlock: 'pending' }], -32602, 'pending logs are not supported'],
      [
        ['newPendingTransactions', 'yes'],
        -32602,
        'invalid argument 1: json: cannot unmarshal string into Go value of type bool',
      ],
    ];
    for (const [params, code, message] of cases) {
      expect([params, (await client.call('eth_subscribe', params as unknown[])).error]).toEqual([
        params,
        { code, message },
      ]);
    }
    client.send({ jsonrpc: '2.0', id: 900, method: 'eth_subscribe', params: 'newHeads' });
    expect(await client.waitFor((m) => m.id === 900)).toMatchObject({
      error: { code: -32602, message: 'non-array args' },
    });
  });

  it('answers eth_subscribe over HTTP with "notifications not supported"', async () => {
    const res = await fetch(server.url, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }),
    });
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32601, message: 'notifications not supported' },
    });
  });

  it('holds at most maxSubscriptions per connection', async () => {
    for (let i = 0; i < 4; i++) await client.subscribe(['newHeads']);
    expect((await client.call('eth_subscribe', ['newHeads'])).error).toEqual({
      code: -32000,
      message: 'too many subscriptions on this connection (limit 4)',
    });
    const other = await WsClient.open(server.wsUrl);
    expect(await other.subscribe(['newHeads'])).toMatch(/^0x/);
    other.close();
  });

  it('sends no notification before the answer that carries the id', async () => {
    // eth_subscribe in a batch with a call the backend holds: the batch (and so the id) is
    // answered only once that call ends, and a block mined meanwhile must wait for it.
    let release!: () => void;
    let entered!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const original = c.backend.balance.bind(c.backend);
    c.backend.balance = async (address: Uint8Array, tag: BlockTag) => {
      entered();
      await gate;
      return original(address, tag);
    };
    try {
      client.send([
        { jsonrpc: '2.0', id: 301, method: 'eth_subscribe', params: ['newHeads'] },
        { jsonrpc: '2.0', id: 302, method: 'eth_getBalance', params: [alice.address, 'latest'] },
      ]);
      await inside;
      const b = c.mine([]);
      release();
      const answer = await client.waitFor((m) => m.id === 301);
      const sub = answer.result as string;
      const note = await client.waitFor((m) => m.params?.subscription === sub);
      expect(client.messages.indexOf(note)).toBeGreaterThan(client.messages.indexOf(answer));
      expect((note.params!.result as { hash: string }).hash).toBe(hex(b.hash));
    } finally {
      c.backend.balance = original;
    }
  });

  it('drops a consumer that does not read', async () => {
    const slow = await RpcServer.create(
      { listen: '127.0.0.1:0', wsMaxBufferedBytes: 1024 * 1024 },
      { backend: c.backend, events: c.events, logger },
    );
    const dropped = logger.next('websocket dropped');
    const from = logger.warnings.length;
    const isDropped = () => logger.warnings.slice(from).some((w) => w.msg === 'websocket dropped');
    const reader = await WsClient.open(slow.wsUrl);
    try {
      await reader.subscribe(['logs', {}]);
      // The client stops reading: what the server sends piles up in the kernel, then in ws.
      (reader.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      const big = { ...transferLog(alice.address, bob.address, 1n), data: new Uint8Array(64 * 1024) };
      for (let i = 0; i < 40 && !isDropped(); i++) c.mine([Array(64).fill(big)]);
      expect((await dropped).meta?.why).toBe('too slow: more than 1048576 bytes unsent');
    } finally {
      reader.close();
      await slow.close();
    }
  });
});
