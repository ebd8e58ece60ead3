/**
 * A client started against a chain that is already long serves from the head at once (issue
 * 15). Real processes on 127.0.0.1: two storage nodes, a miner sealing every 250 ms and a first
 * client, until the chain is LONG blocks high. Then a client started late (default
 * `--sync-from head`) prints a head at most 16 blocks below that height (its anchor), answers eth_blockNumber,
 * eth_getBalance at latest and a sent transaction at once, and has taken from the miner only
 * the blocks from its start on (`monsoon_client_chain_blocks_received_total`), then fetches the
 * history behind that anchor (every block to genesis here) linked to it: the old client
 * asked for every block from genesis, printed `listening` at block 0 and took LONG + 1 blocks or
 * more — which a client started with `--sync-from genesis` still does, and is checked here too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { keccak } from '@monsoon/keccak';
import { killAll, type RoleProcess, until } from '@monsoon/test-utils';
import { Wallet } from 'ethers';
import {
  rpcCall,
  rpcUrlOf,
  type StorageAndMiner,
  spawnClient,
  startFundedCluster,
} from '../helpers/cluster.js';

const CHAIN_ID = 1337;
const GWEI = 1_000_000_000n;
/** Chain height reached before the late clients start. */
const LONG = 40;
const WAIT_MS = 60_000;
/** Funded in genesis; several, so the state has accounts under more than one first nibble (two shards). */
const wallets = Array.from(
  { length: 8 },
  (_, i) => new Wallet(`0x${Buffer.from(keccak.keccak256(Uint8Array.of(15, i))).toString('hex')}`),
);
const wallet = wallets[0]!;
const RECIPIENT = '0x00000000000000000000000000000000000000bb';

let dir: string;
let cluster: StorageAndMiner;
/** The first client's JSON-RPC, started with the chain. */
let early: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'monsoon-late-start-'));
  cluster = await startFundedCluster(
    dir,
    wallets.map((w) => w.address),
    CHAIN_ID,
  );
  early = await rpcUrlOf(spawnClient(cluster));
}, WAIT_MS);

afterAll(async () => {
  await killAll();
  await rm(dir, { recursive: true, force: true });
});

async function call<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const a = await rpcCall<T>(url, method, params);
  if (a.error !== undefined) throw new Error(`${method}: ${a.error.message}`);
  return a.result as T;
}

const blockNumber = async (url: string) => Number(await call<string>(url, 'eth_blockNumber'));

/** A started client's RPC URL, the head it printed, and its blocks-received counter. */
async function started(p: RoleProcess) {
  const line = await p.waitFor((l) => l.msg === 'listening');
  const metricsUrl = `http://${String(line.metrics)}/metrics`;
  return {
    rpc: String(line.rpc),
    head: Number(line.head),
    metrics: async () => (await fetch(metricsUrl)).text(),
    history: async () => {
      const text = await (await fetch(metricsUrl)).text();
      const m = /^monsoon_client_chain_history_blocks_total (\d+)$/m.exec(text);
      if (m === null) throw new Error(`no history counter in ${metricsUrl}`);
      return Number(m[1]);
    },
    received: async () => {
      const text = await (await fetch(metricsUrl)).text();
      const m = /^monsoon_client_chain_blocks_received_total (\d+)$/m.exec(text);
      if (m === null) throw new Error(`no blocks-received counter in ${metricsUrl}`);
      return Number(m[1]);
    },
  };
}

describe('a client started against a long chain', () => {
  it(
    'serves reads and takes transactions at the head at once, without the old blocks',
    async () => {
      const long = await until(
        async () => {
          const n = await blockNumber(early);
          return n >= LONG && n;
        },
        { what: `the chain to reach ${LONG} blocks`, timeoutMs: WAIT_MS },
      );

      const late = await started(spawnClient(cluster, cluster.minerAddress, ['--metrics', '127.0.0.1:0']));
      // Its first head is at most 16 blocks (resumeDepth, its anchor) below the miner's, not block
      // 0; the 16 come in one burst from the miner's stream.
      expect(late.head).toBeGreaterThanOrEqual(long - 16);
      // Its memory, as every role reports it (the soak reads the heap of each).
      expect(await late.metrics()).toMatch(/^nodejs_heap_size_total_bytes [1-9]\d*$/m);
      await until(async () => (await blockNumber(late.rpc)) >= long, {
        what: `the late client to reach block ${long}`,
        timeoutMs: WAIT_MS,
      });
      expect(BigInt(await call<string>(late.rpc, 'eth_getBalance', [wallet.address, 'latest']))).toBe(
        10n ** 21n,
      );
      // The history behind its anchor comes next (the chain window's worth: here every block down
      // to genesis), linked to the anchor: the same blocks the first client holds.
      await until(async () => (await late.history()) > 0, {
        what: 'the late client to fetch the history behind its anchor',
        timeoutMs: WAIT_MS,
      });
      expect(await late.history()).toBeGreaterThanOrEqual(long - 16);
      for (const n of ['0x0', '0x1', `0x${(long - 17).toString(16)}`]) {
        const theirs = await call<{ hash: string }>(early, 'eth_getBlockByNumber', [n, false]);
        const mine = await call<{ hash: string } | null>(late.rpc, 'eth_getBlockByNumber', [n, false]);
        expect(mine?.hash).toBe(theirs.hash);
      }
      const sync = await call<unknown>(late.rpc, 'eth_syncing');
      if (sync !== false) {
        // Only a block's race between the miner's stream and storage's heads, from its start on.
        const s = sync as { startingBlock: string; currentBlock: string; highestBlock: string };
        expect(Number(s.startingBlock)).toBeGreaterThanOrEqual(long - 16);
        expect(Number(s.highestBlock) - Number(s.currentBlock)).toBeLessThanOrEqual(1);
      }

      const raw = await wallet.signTransaction({
        type: 2,
        chainId: CHAIN_ID,
        nonce: 0,
        to: RECIPIENT,
        value: 7n,
        gasLimit: 21_000n,
        maxPriorityFeePerGas: GWEI,
        maxFeePerGas: 3n * GWEI,
      });
      const hash = await call<string>(late.rpc, 'eth_sendRawTransaction', [raw]);
      const receipt = await until(
        async () =>
          (await call<{ status: string } | null>(late.rpc, 'eth_getTransactionReceipt', [hash])) ?? undefined,
        { what: `the receipt of ${hash}`, timeoutMs: WAIT_MS },
      );
      expect(receipt.status).toBe('0x1');
      expect(BigInt(await call<string>(late.rpc, 'eth_getBalance', [RECIPIENT, 'latest']))).toBe(7n);

      // What it took from the miner: from 16 blocks (resumeDepth) below the head it found on, and
      // every block since; none of the others before (a genesis replay takes all of them).
      const received = await late.received();
      const headNow = await blockNumber(late.rpc);
      expect(received).toBeLessThanOrEqual(headNow - long + 1 + 16);
    },
    2 * WAIT_MS,
  );

  it(
    "with a window shorter than the chain, checks its oldest block's ancestry down to genesis through the miner's headers",
    async () => {
      const long = await blockNumber(early);
      const late = await started(
        spawnClient(cluster, cluster.minerAddress, ['--metrics', '127.0.0.1:0', '--chain-window', '8']),
      );
      const checked = async () => /^monsoon_client_ancestry_checked (\d)$/m.exec(await late.metrics())?.[1];
      expect(await until(checked, { what: 'the ancestry check', timeoutMs: WAIT_MS })).toBe('1');
      // The window is full with the blocks from its anchor up: no history is added, and older
      // blocks are not held (only their headers were checked).
      expect(await late.history()).toBe(0);
      expect(await call<unknown>(late.rpc, 'eth_getBlockByNumber', ['0x1', false])).toBeNull();
      expect(await call<unknown>(late.rpc, 'eth_syncing')).toBe(false);
      expect(long).toBeGreaterThan(16 + 8);
    },
    2 * WAIT_MS,
  );

  it(
    'with --sync-from genesis replays every block from 0 (the old behaviour, kept as an option)',
    async () => {
      const long = await blockNumber(early);
      expect(long).toBeGreaterThanOrEqual(LONG);
      const full = await started(
        spawnClient(cluster, cluster.minerAddress, ['--metrics', '127.0.0.1:0', '--sync-from', 'genesis']),
      );
      await until(async () => (await blockNumber(full.rpc)) >= long, {
        what: `the genesis-synced client to reach block ${long}`,
        timeoutMs: WAIT_MS,
      });
      expect(await full.received()).toBeGreaterThanOrEqual(long + 1);
    },
    2 * WAIT_MS,
  );
});
