/**
 * The whole system, checked against the conventional way: the small topology (2 storage
 * processes, a miner, a client) takes a short run of the workload's mix through the client's
 * gRPC bulk path. Every transaction commits; replaying each block's transactions with
 * @ethereumjs/vm over one full @ethereumjs/mpt state gives every block's state root; the token
 * supply is conserved; every sender's nonces in the chain run 0, 1, 2, … with no gap.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Address } from '@ethereumjs/util';
import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, parseTopology } from '@monsoon/cli';
import { toHex } from '@monsoon/dsm-tree';
import { decodeTransaction, makeCommon, recoverSenders } from '@monsoon/execution';
import {
  type BlockHeader,
  blockWithReceiptsFromProto,
  decodeHeader,
  type Genesis,
  MinerServiceClient,
  parseGenesis,
} from '@monsoon/protocol';
import {
  AccountSet,
  DEFAULT_TOKEN_ADDRESS,
  encodeBalanceOf,
  encodeTotalSupply,
  LoadDriver,
  ReferenceChain,
  TrafficGenerator,
} from '@monsoon/workload';

const TXS = 400;
let dir: string;
let cluster: Cluster;
let accounts: AccountSet;

const topology = parseTopology(
  {
    description: 'end-to-end test',
    shardCount: 16,
    accounts: 120,
    seed: 'e2e',
    storage: { processes: 2, replicas: 1, fsync: 'none' },
    miners: { count: 1, blockIntervalMs: 200, retention: 2 },
    clients: { count: 1 },
  },
  'e2e',
);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'monsoon-e2e-'));
  cluster = await Cluster.start(topology, { dir, cacheDir: join(dir, 'accounts') });
  accounts = await AccountSet.create({
    seed: new TextEncoder().encode(topology.seed),
    count: topology.accounts,
    cacheDir: join(dir, 'accounts'),
  });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The canonical blocks from genesis up to the one that brings the chain's transactions to `count`. */
function chainBlocks(
  miner: string,
  count: number,
): Promise<{ header: BlockHeader; transactions: Uint8Array[] }[]> {
  const client = new MinerServiceClient(miner, credentials.createInsecure());
  const blocks: { header: BlockHeader; transactions: Uint8Array[] }[] = [];
  return new Promise((resolve, reject) => {
    const call = client.subscribeBlocks({ fromNumber: 0n });
    call.on('data', (m) => {
      const b = blockWithReceiptsFromProto(m);
      const header = decodeHeader(b.headerRlp);
      blocks.splice(Number(header.number));
      blocks.push({ header, transactions: [...b.transactions] });
      if (blocks.reduce((n, x) => n + x.transactions.length, 0) >= count) {
        call.cancel();
        client.close();
        resolve(blocks);
      }
    });
    call.on('error', (e) => (String(e).includes('CANCELLED') ? undefined : reject(e)));
  });
}

async function tokenCall(chain: ReferenceChain, data: Uint8Array): Promise<bigint> {
  const res = await chain.vm.evm.runCall({
    to: new Address(DEFAULT_TOKEN_ADDRESS),
    data,
    gasLimit: 1_000_000n,
  });
  return BigInt(`0x${toHex(res.execResult.returnValue)}`);
}

describe('a short run on the small topology', () => {
  it('commits everything; ethereumjs replays the same roots; supply conserved; nonces continuous', async () => {
    const client = cluster.clients[0]!;
    const miner = cluster.miners[0]!;
    const traffic = new TrafficGenerator({ chainId: BigInt(cluster.genesis.chainId ?? 1337) }, { accounts });
    const driver = await LoadDriver.create(
      { clients: [client.grpc], miner: miner.address, load: { concurrency: 64 }, until: { count: TXS } },
      { traffic, accounts },
    );
    const result = await driver.run();
    expect(result.counts.submitted).toBe(TXS);
    expect(result.counts.committed).toBe(TXS);
    expect(result.counts.rejected).toBe(0);
    expect(result.counts.dropped).toBe(0);

    // The chain up to the run's last transaction, replayed the conventional way, block by block.
    const blocks = await chainBlocks(miner.address, TXS);
    const genesis: Genesis = parseGenesis(JSON.parse(await readFile(cluster.genesis.file, 'utf8')));
    const reference = await ReferenceChain.create(genesis);
    const common = makeCommon(genesis.chainId);
    const nonces = new Map<string, bigint[]>();
    let included = 0;
    for (const { header, transactions } of blocks.slice(1)) {
      const r = await reference.runBlock(
        {
          number: header.number,
          timestamp: header.timestamp,
          coinbase: header.miner,
          gasLimit: header.gasLimit,
        },
        transactions,
      );
      expect(r.outcomes).not.toContain('refused');
      expect(toHex(r.stateRoot)).toBe(toHex(header.stateRoot));
      expect(r.gasUsed).toBe(header.gasUsed);
      const txs = transactions.map((raw) => decodeTransaction(raw, common));
      recoverSenders(txs).forEach((s, i) => {
        const k = toHex(s as Uint8Array);
        nonces.set(k, [...(nonces.get(k) ?? []), txs[i]!.nonce]);
      });
      included += transactions.length;
    }
    expect(included).toBe(TXS);
    for (const [, ns] of nonces) expect(ns).toEqual(ns.map((_, i) => BigInt(i)));

    // The token: the total supply unchanged, and every holder's balance adds up to it.
    const supplyAtGenesis = await tokenCall(await ReferenceChain.create(genesis), encodeTotalSupply());
    expect(supplyAtGenesis).toBeGreaterThan(0n);
    expect(await tokenCall(reference, encodeTotalSupply())).toBe(supplyAtGenesis);
    let sum = 0n;
    for (let i = 0; i < accounts.count; i++)
      sum += await tokenCall(reference, encodeBalanceOf(accounts.address(i)));
    expect(sum).toBe(supplyAtGenesis);
  });
});
