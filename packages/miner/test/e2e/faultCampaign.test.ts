/**
 * A seeded, time-bounded fault campaign over real processes under load (issue 15): two storage
 * nodes (shards 0-7, 8-15, each with a data directory) and a replica of shards 0-7 that no miner
 * feeds (it follows storage-0 through replica sync, and storage-0 may catch up from it); two
 * miners with chain logs: A (difficulty 4, a block every 200 ms) takes the transactions, B
 * (difficulty 1, every 700 ms, so its own chain is always the lighter) is A's peer through a TCP
 * proxy; a client following A, serving JSON-RPC, reading all three storage nodes; one load loop
 * per sender (a transfer, its receipt, the next nonce; a transfer without a receipt after a
 * while is sent again as is). Faults, one kind after another in an order drawn from the seed:
 * SIGKILL a storage node and restart it after a pause, the same with the tail of its newest WAL
 * segment cut while it is down (acknowledged blocks lost: it comes back behind), SIGSTOP/SIGCONT
 * a storage node, SIGKILL the replica and restart it, SIGKILL miner A and restart it on its chain
 * log, SIGKILL the client and restart it on the same port, and partition B from A (the proxy
 * drops every connection) while B seals its own fork, then heal it; for at least 36 s and until
 * every kind was injected once (on a loaded box recoveries take longer: 5 kinds once filled the
 * 36 s). After the campaign: every
 * transaction whose receipt was seen is still in the chain (a reorg may have moved it to
 * another block: counted, not lost), the miners agree on the head and every storage node and
 * the replica hold it with the miners' state root, no sender's committed nonces have a gap, and
 * every recipient's balance is exactly the sum of its committed transfers (nothing applied
 * twice). A table of the faults (per kind: injected, recovered, time to recover p50/max) and the
 * acknowledged transactions lost is printed.
 */
import { mkdtemp, readdir, rm, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { defaultChainRules, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import {
  fundedGenesis,
  killAll,
  type Listening,
  Prng,
  startRole,
  until,
  writeGenesis,
} from '@monsoon/test-utils';
import { minerHead } from '../helpers/minerProcess.js';
import { freeAddress, rpc, stateRootAt } from '../helpers/roles.js';
import { TcpProxy } from '../helpers/tcpProxy.js';

const SEED = 15;
const CAMPAIGN_MS = 36_000;
const SENDERS = 6;
const RECEIPT_WAIT_MS = 6_000;

const chainId = 1337n;
const common = makeCommon(chainId);
const keys = Array.from({ length: SENDERS }, (_, i) => keccak.keccak256(Uint8Array.of(0xfa, i)));
const senders = keys.map((k) => privateToAddress(k));
/** One recipient per sender, so a recipient's balance counts exactly that sender's transfers. */
const recipients = keys.map((_, i) => keccak.keccak256(Uint8Array.of(0xfb, i)).subarray(12));
const genesis = fundedGenesis(senders, chainId, defaultChainRules.gasLimit);

interface Committed {
  sender: number;
  nonce: bigint;
  value: bigint;
  hash: string;
  block: string;
}

const KINDS = [
  'kill storage',
  'cut storage WAL',
  'pause storage',
  'kill replica',
  'kill miner',
  'kill client',
  'partition miner',
] as const;

interface Fault {
  kind: (typeof KINDS)[number];
  recoverMs: number | undefined;
}

const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return '-';
  const s = [...xs].sort((a, b) => a - b);
  return String(Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]!));
};

describe('fault campaign', () => {
  let dir: string;
  let genesisFile: string;
  /** storage-0 (shards 0-7), storage-1 (8-15). */
  const storage: Listening[] = [];
  /** The replica of shards 0-7. */
  let replica: Listening;
  let replicaAddress: string;
  let miner: Listening;
  let minerB: Listening;
  let proxy: TcpProxy;
  let client: Listening;
  let rpcUrl: string;

  const storageArgs = (i: number, listen: string) => [
    '--genesis',
    genesisFile,
    '--shards',
    i === 1 ? '8-15' : '0-7',
    '--listen',
    listen,
    '--data-dir',
    join(dir, i === 2 ? 'replica-0' : `storage-${i}`),
    '--checkpoint-every',
    '16',
    // storage-0 and the replica catch up from each other.
    ...(i === 1
      ? []
      : ['--replicas', i === 0 ? replicaAddress : storage[0]!.address, '--sync-interval', '200']),
  ];
  const minerArgs = (listen: string, b: boolean) => [
    '--genesis',
    genesisFile,
    '--storage',
    storage.map((s) => s.address).join(','),
    '--listen',
    listen,
    '--block-interval',
    b ? '700' : '200',
    '--difficulty',
    b ? '1' : '4',
    '--storage-retry-max',
    '200',
    // The restarted client links the chain from genesis: the miner must still hold all of it
    // (~250 blocks in a run; the default window of 128 would leave its early receipts unknown).
    '--keep-blocks',
    '1024',
    '--data-dir',
    join(dir, b ? 'miner-b' : 'miner'),
    ...(b ? ['--peers', proxy.address, '--coinbase', `0x${'b0'.repeat(20)}`] : []),
  ];
  const clientArgs = (rpcListen: string) => [
    '--genesis',
    genesisFile,
    '--miners',
    miner.address,
    '--storage',
    [...storage.map((s) => s.address), replicaAddress].join(','),
    '--rpc',
    rpcListen,
    // A restarted client links every block again, so it answers for the receipts before it.
    '--sync-from',
    'genesis',
  ];
  const startClient = async (rpcListen: string) => {
    client = await startRole('client', clientArgs(rpcListen));
    rpcUrl = String(client.line.rpc);
  };
  const blockNumber = async () => {
    const r = await rpc<string>(rpcUrl, 'eth_blockNumber', []);
    return r.result === undefined ? -1n : BigInt(r.result);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'monsoon-faults-'));
    genesisFile = await writeGenesis(dir, genesis);
    replicaAddress = await freeAddress();
    storage.push(await startRole('storage-node', storageArgs(0, '127.0.0.1:0')));
    storage.push(await startRole('storage-node', storageArgs(1, '127.0.0.1:0')));
    replica = await startRole('storage-node', storageArgs(2, replicaAddress));
    miner = await startRole('miner', minerArgs('127.0.0.1:0', false));
    proxy = await TcpProxy.start(miner.address);
    minerB = await startRole('miner', minerArgs('127.0.0.1:0', true));
    await startClient('127.0.0.1:0');
  }, 60_000);

  afterAll(async () => {
    await killAll();
    await proxy?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Until `address` holds the block miner A had as its head when asked, with A's state root. */
  const holdsMinerHead = async (address: () => string, what: string) => {
    const target = await minerHead(miner.address);
    await until(async () => (await stateRootAt(address(), target.hash)) === toHex(target.stateRoot), {
      what: `${what} at block ${target.number}`,
      timeoutMs: 30_000,
    });
  };

  it('every committed transaction survives SIGKILLs, pauses and a partition; every replica ends at the miners head', async () => {
    const rng = new Prng(SEED);
    const committed: Committed[] = [];
    const end = Date.now() + CAMPAIGN_MS;
    // Every kind is injected at least once, however long that takes on a loaded box (the
    // campaign's time is a minimum); the load runs until the last fault is over.
    let faultsOver: number | undefined;
    const loadEnd = () => Math.max(end, faultsOver ?? Number.POSITIVE_INFINITY);

    // One load loop per sender: a transfer, its receipt, the next nonce.
    const load = async (i: number) => {
      let nonce = 0n;
      while (Date.now() < loadEnd()) {
        const value = 1_000n + nonce;
        const raw = createFeeMarket1559Tx(
          {
            nonce,
            to: recipients[i]!,
            value,
            gasLimit: 21_000n,
            maxFeePerGas: 3_000_000_000n,
            maxPriorityFeePerGas: 1n,
          },
          { common },
        )
          .sign(keys[i]!)
          .serialize();
        const hash = `0x${toHex(keccak.keccak256(raw))}`;
        let receipt: { blockHash: string; status: string } | undefined;
        while (receipt === undefined && Date.now() < loadEnd() + 20_000) {
          await rpc(rpcUrl, 'eth_sendRawTransaction', [`0x${toHex(raw)}`]);
          const waitUntil = Date.now() + RECEIPT_WAIT_MS;
          while (receipt === undefined && Date.now() < waitUntil) {
            const r = await rpc<{ blockHash: string; status: string } | null>(
              rpcUrl,
              'eth_getTransactionReceipt',
              [hash],
            );
            receipt = r.result ?? undefined;
            if (receipt === undefined) await sleep(100);
          }
        }
        if (receipt === undefined) return;
        expect(receipt.status).toBe('0x1');
        committed.push({ sender: i, nonce, value, hash, block: receipt.blockHash });
        nonce++;
      }
    };
    const loads = Array.from({ length: SENDERS }, (_, i) => load(i));

    // The faults, drawn from the seed, one after another until the campaign's end.
    const faults: Fault[] = [];
    await sleep(1_000);
    // Every kind in turn, in an order drawn from the seed; which node and how long, drawn too.
    const order = KINDS.map((k) => ({ k, r: rng.next() }))
      .sort((a, b) => a.r - b.r)
      .map((x) => x.k);
    while (faults.length < order.length || Date.now() < end - 3_000) {
      const kind = order[faults.length % order.length]!;
      const started = Date.now();
      let recoverMs: number | undefined;
      try {
        if (kind === 'kill miner') {
          miner.proc.signal('SIGKILL');
          await miner.proc.exited;
          await sleep(300 + rng.int(1_500));
          const restarted = Date.now();
          miner = await startRole('miner', minerArgs(miner.address, false));
          // Recovered: the restarted miner seals on from its logged chain.
          const from = (await minerHead(miner.address)).number;
          await until(async () => (await minerHead(miner.address)).number > from, {
            what: 'the restarted miner to seal',
            timeoutMs: 30_000,
          });
          recoverMs = Date.now() - restarted;
        } else if (kind === 'kill client') {
          client.proc.signal('SIGKILL');
          await client.proc.exited;
          await sleep(300 + rng.int(1_500));
          const restarted = Date.now();
          await startClient(new URL(rpcUrl).host);
          // Recovered: it serves the chain up to the head miner A had when it came back.
          const target = (await minerHead(miner.address)).number;
          await until(async () => (await blockNumber()) >= target, {
            what: `the restarted client at block ${target}`,
            timeoutMs: 30_000,
          });
          recoverMs = Date.now() - restarted;
        } else if (kind === 'partition miner') {
          proxy.partition();
          const cutAt = (await minerHead(minerB.address)).number;
          // B seals a fork of its own while cut off (A's chain stays the heavier).
          await until(async () => (await minerHead(minerB.address)).number >= cutAt + 2n, {
            what: 'miner B to seal on its own',
            timeoutMs: 30_000,
          });
          proxy.heal();
          const healed = Date.now();
          // Recovered: B's head is on A's chain (as the client, following A, sees it), at or past
          // A's head at the heal.
          const target = (await minerHead(miner.address)).number;
          await until(
            async () => {
              const b = await minerHead(minerB.address);
              if (b.number < target) return false;
              const r = await rpc<{ hash: string } | null>(rpcUrl, 'eth_getBlockByNumber', [
                `0x${b.number.toString(16)}`,
                false,
              ]);
              return r.result?.hash === `0x${toHex(b.hash)}`;
            },
            { what: 'miner B back on the heaviest chain', timeoutMs: 30_000 },
          );
          recoverMs = Date.now() - healed;
        } else if (kind === 'kill replica') {
          replica.proc.signal('SIGKILL');
          await replica.proc.exited;
          await sleep(300 + rng.int(2_500));
          const restarted = Date.now();
          replica = await startRole('storage-node', storageArgs(2, replicaAddress));
          await holdsMinerHead(() => replicaAddress, 'the replica');
          recoverMs = Date.now() - restarted;
        } else {
          const i = rng.int(2);
          const s = storage[i]!;
          let restarted: number;
          if (kind === 'kill storage' || kind === 'cut storage WAL') {
            s.proc.signal('SIGKILL');
            await s.proc.exited;
            // Up to 3 s down: past the miner's first retries (200 ms apart) by far.
            await sleep(300 + rng.int(2_700));
            if (kind === 'cut storage WAL') {
              // Acknowledged records lost while it is down (as a power cut under --fsync none
              // would): the node comes back behind, and the miners send what it lacks.
              const wal = join(dir, `storage-${i}`, 'wal');
              const newest = (await readdir(wal))
                .filter((f) => f.endsWith('.wal'))
                .sort()
                .at(-1)!;
              const size = (await stat(join(wal, newest))).size;
              await truncate(join(wal, newest), Math.max(16, size - 1 - rng.int(600)));
            }
            restarted = Date.now();
            storage[i] = await startRole('storage-node', storageArgs(i, s.address));
          } else {
            s.proc.signal('SIGSTOP');
            await sleep(300 + rng.int(1_500));
            s.proc.signal('SIGCONT');
            restarted = Date.now();
          }
          // Recovered: it holds the head the miner had when the node came back.
          await holdsMinerHead(() => storage[i]!.address, `storage-${i}`);
          recoverMs = Date.now() - restarted;
        }
      } catch (e) {
        process.stderr.write(`fault ${kind} (after ${Date.now() - started} ms): ${(e as Error).message}\n`);
        recoverMs = undefined;
      }
      faults.push({ kind, recoverMs });
      await sleep(300 + rng.int(1_000));
    }
    faultsOver = Date.now();
    await Promise.all(loads);

    // Settled: the miners agree on the head, and every storage node and the replica hold it.
    const head = await until(
      async () => {
        const [a, b] = await Promise.all([minerHead(miner.address), minerHead(minerB.address)]);
        return toHex(a.hash) === toHex(b.hash) && a;
      },
      { what: 'the miners on one head', timeoutMs: 30_000 },
    );
    for (const s of [...storage, replica]) {
      const root = await until(() => stateRootAt(s.address, head.hash), {
        what: `${s.address} at block ${head.number}`,
        timeoutMs: 30_000,
      }).catch((e: Error) => {
        // What the node and the miners said last, to see why it is stuck.
        for (const p of [s, miner, minerB]) {
          const tail = p.proc.lines.slice(-15).map((l) => JSON.stringify(l));
          process.stderr.write(`${p.address}:\n${tail.join('\n')}\n`);
        }
        throw e;
      });
      expect(root).toBe(toHex(head.stateRoot));
    }
    // Every committed transaction is still in the chain (a reorg may have moved it).
    let lost = 0;
    let moved = 0;
    for (const c of committed) {
      const r = await until(
        async () => {
          const a = await rpc<{ blockHash: string; status: string } | null>(
            rpcUrl,
            'eth_getTransactionReceipt',
            [c.hash],
          );
          return a.error === undefined && { receipt: a.result };
        },
        { what: `the receipt of ${c.hash}`, timeoutMs: 30_000 },
      );
      if (r.receipt?.status !== '0x1') lost++;
      else if (r.receipt.blockHash !== c.block) moved++;
    }
    // No gap in any sender's committed nonces; each recipient got exactly its committed value.
    for (let i = 0; i < SENDERS; i++) {
      const mine = committed.filter((c) => c.sender === i).map((c) => c.nonce);
      expect(mine).toEqual(mine.map((_, k) => BigInt(k)));
      const sum = committed.filter((c) => c.sender === i).reduce((t, c) => t + c.value, 0n);
      const balance = await until(
        async () =>
          (await rpc<string>(rpcUrl, 'eth_getBalance', [`0x${toHex(recipients[i]!)}`, 'latest'])).result,
        { what: 'a balance', timeoutMs: 30_000 },
      );
      expect([i, BigInt(balance)]).toEqual([i, sum]);
    }

    const rows = KINDS.map((k) => {
      const f = faults.filter((x) => x.kind === k);
      const ms = f.flatMap((x) => (x.recoverMs === undefined ? [] : [x.recoverMs]));
      return `${k.padEnd(16)} ${String(f.length).padStart(8)} ${String(ms.length).padStart(9)} ${percentile(ms, 0.5).padStart(12)} ${(ms.length ? String(Math.max(...ms)) : '-').padStart(12)}`;
    });
    process.stdout.write(
      [
        `fault campaign (seed ${SEED}, ${Math.round((faultsOver! - end + CAMPAIGN_MS) / 1000)} s, ${SENDERS} senders): ${committed.length} transactions committed, ${lost} lost, ${moved} moved to another block by a reorg`,
        `${'fault'.padEnd(16)} ${'injected'.padStart(8)} ${'recovered'.padStart(9)} ${'p50 ms'.padStart(12)} ${'max ms'.padStart(12)}`,
        ...rows,
        '',
      ].join('\n'),
    );
    expect(lost).toBe(0);
    expect(faults.every((f) => f.recoverMs !== undefined)).toBe(true);
    expect(new Set(faults.map((f) => f.kind)).size).toBe(KINDS.length);
    expect(committed.length).toBeGreaterThan(SENDERS);
  }, 240_000);
});
