/**
 * Events as dapps read them, with the real libraries against RpcServer on 127.0.0.1:0 over a
 * hand-fed chain (EventChain): viem getLogs / getContractEvents, viem watchContractEvent over
 * HTTP (filters) and over WebSocket (eth_subscribe), ethers `contract.on('Transfer', …)`, and a
 * reorg that delivers the replaced block's log again with `removed: true` to a WebSocket
 * watcher.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { until } from '@monsoon/test-utils';
import { Contract, JsonRpcProvider, Network } from 'ethers';
import { createPublicClient, type Hex, http, type Log, parseAbi, webSocket } from 'viem';
import { RpcServer } from '../../../src/rpc/index.js';
import { EventChain, hex, transferLog } from './eventChain.js';
import { alice, bob, CHAIN_ID, TOKEN, tokenAbi } from './fakeBackend.js';

const abi = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);
const ALICE = alice.address as Hex;
const BOB = bob.address as Hex;
const OTHER_TOKEN = '0x1000000000000000000000000000000000000002';

let c: EventChain;
let server: RpcServer;
beforeAll(async () => {
  c = new EventChain(256);
  server = await RpcServer.create({ listen: '127.0.0.1:0' }, { backend: c.backend, events: c.events });
  c.mine([[transferLog(alice.address, bob.address, 10n), transferLog(bob.address, alice.address, 11n)]]);
  c.mine([
    [transferLog(alice.address, bob.address, 12n, OTHER_TOKEN)],
    [transferLog(bob.address, alice.address, 13n)],
  ]);
});
afterAll(async () => {
  await server.close();
});

const WAIT = { timeoutMs: 20_000, intervalMs: 10 };

/** A list the library's callback fills, and a wait for it to hold `n` items. */
function collector<T>(what: string) {
  const items: T[] = [];
  return {
    push: (xs: readonly T[]) => items.push(...xs),
    atLeast: (n: number) => until(() => items.length >= n && items, { what: `${n} ${what}`, ...WAIT }),
  };
}

/** Waits until the server holds exactly `n` subscriptions (a closed client's may linger a moment). */
const subscriptions = (n: number) =>
  until(() => server.subscriptionCount === n, { what: `${n} subscription(s) on the server`, ...WAIT });

describe('viem', () => {
  it('getLogs and getContractEvents', async () => {
    const client = createPublicClient({ transport: http(server.url), pollingInterval: 50 });
    const logs = await client.getLogs({ address: TOKEN, event: abi[0], fromBlock: 0n, toBlock: 'latest' });
    expect(logs.map((l) => [l.args.value, l.blockNumber, l.logIndex, l.transactionIndex])).toEqual([
      [10n, 1n, 0, 0],
      [11n, 1n, 1, 0],
      [13n, 2n, 1, 1],
    ]);
    expect(logs[2]!.transactionHash).toBe(hex(c.chain.byNumber(2n)!.txHashes[1]!));
    const toAlice = await client.getContractEvents({
      address: TOKEN,
      abi,
      eventName: 'Transfer',
      args: { to: ALICE },
      fromBlock: 0n,
    });
    expect(toAlice.map((l) => [l.eventName, l.args.from, l.args.value])).toEqual([
      ['Transfer', BOB, 11n],
      ['Transfer', BOB, 13n],
    ]);
  });

  it('watchContractEvent over HTTP, through filters', async () => {
    const client = createPublicClient({ transport: http(server.url), pollingInterval: 50 });
    const got = collector<Log>('logs');
    const filtersBefore = server.filters!.size;
    const unwatch = client.watchContractEvent({
      address: TOKEN,
      abi,
      eventName: 'Transfer',
      args: { from: ALICE },
      onLogs: (logs) => got.push(logs as Log[]),
    });
    try {
      await until(() => server.filters!.size > filtersBefore, { what: 'viem’s eth_newFilter', ...WAIT });
      c.mine([[transferLog(alice.address, bob.address, 20n), transferLog(bob.address, alice.address, 21n)]]);
      c.mine([[transferLog(alice.address, alice.address, 22n)]]);
      const logs = (await got.atLeast(2)) as (Log & { args: { value: bigint } })[];
      expect(logs.map((l) => [l.args.value, l.removed])).toEqual([
        [20n, false],
        [22n, false],
      ]);
    } finally {
      unwatch();
    }
  });

  /**
   * Runs `body` with a viem watcher of the token's Transfers over a WebSocket, once the server
   * holds its subscription; then stops it and closes the socket.
   */
  async function withWsWatcher(
    body: (got: ReturnType<typeof collector<Log>>) => Promise<void>,
  ): Promise<void> {
    await subscriptions(0);
    const client = createPublicClient({ transport: webSocket(server.wsUrl) });
    const got = collector<Log>('logs');
    const unwatch = client.watchContractEvent({
      address: TOKEN,
      abi,
      eventName: 'Transfer',
      onLogs: (logs) => got.push(logs as Log[]),
    });
    try {
      await subscriptions(1);
      await body(got);
    } finally {
      unwatch();
      await (await client.transport.getRpcClient()).close();
    }
  }

  it('watchContractEvent over WebSocket, through eth_subscribe', () =>
    withWsWatcher(async (got) => {
      c.mine([
        [transferLog(bob.address, alice.address, 30n)],
        [transferLog(alice.address, bob.address, 31n, OTHER_TOKEN)],
      ]);
      c.mine([[transferLog(alice.address, bob.address, 32n)]]);
      const logs = (await got.atLeast(2)) as (Log<bigint, number, false, (typeof abi)[0]> & {
        eventName: string;
      })[];
      expect(logs.map((l) => [l.eventName, l.args.value, l.args.to])).toEqual([
        ['Transfer', 30n, ALICE],
        ['Transfer', 32n, BOB],
      ]);
    }));

  it('a reorg delivers the replaced log again, removed: true, to a WebSocket watcher', () =>
    withWsWatcher(async (got) => {
      const parent = c.head;
      const replaced = c.mine([[transferLog(alice.address, bob.address, 40n)]]);
      await got.atLeast(1);
      const fork = c.mine([[], [transferLog(bob.address, alice.address, 41n)]], { parent, fork: 3 });
      const logs = (await got.atLeast(3)) as (Log & { args: { value: bigint } })[];
      expect(logs.map((l) => [l.args.value, l.removed, l.blockHash])).toEqual([
        [40n, false, hex(replaced.hash)],
        [40n, true, hex(replaced.hash)],
        [41n, false, hex(fork.hash)],
      ]);
      expect(logs[2]!.transactionIndex).toBe(1);
    }));
});

describe('ethers v6', () => {
  it("contract.on('Transfer', …) through filters", async () => {
    const network = Network.from(Number(CHAIN_ID));
    const provider = new JsonRpcProvider(server.url, network, { staticNetwork: network, cacheTimeout: -1 });
    provider.pollingInterval = 50;
    const token = new Contract(TOKEN, tokenAbi, provider);
    const got = collector<[string, string, bigint]>('events');
    const filtersBefore = server.filters!.size;
    try {
      await token.on('Transfer', (from: string, to: string, value: bigint) => got.push([[from, to, value]]));
      await until(() => server.filters!.size > filtersBefore, { what: 'ethers’ eth_newFilter', ...WAIT });
      c.mine([
        [
          transferLog(bob.address, alice.address, 50n),
          transferLog(alice.address, bob.address, 51n, OTHER_TOKEN),
        ],
      ]);
      c.mine([[transferLog(alice.address, bob.address, 52n)]]);
      expect(await got.atLeast(2)).toEqual([
        [bob.address, alice.address, 50n],
        [alice.address, bob.address, 52n],
      ]);
    } finally {
      await token.removeAllListeners();
      provider.destroy();
    }
  });
});
