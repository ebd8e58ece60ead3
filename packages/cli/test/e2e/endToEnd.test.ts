/**
 * The whole system, checked against the conventional way: the small topology (2 storage
 * processes, a miner, a client) takes a short run of the workload's mix through the client's
 * gRPC bulk path. Every transaction commits; replaying each block's transactions with
 * @ethereumjs/vm over one full @ethereumjs/mpt state gives every block's state root; the token
 * supply is conserved; every sender's nonces in the chain run 0, 1, 2, … with no gap.
 */
import { Address } from '@ethereumjs/util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Cluster, parseTopology } from '@monsoon/cli';
import { toHex } from '@monsoon/dsm-tree';
import { decodeTransaction, makeCommon, recoverSenders } from '@monsoon/execution';
import {
  type AccountSet,
  DEFAULT_TOKEN_ADDRESS,
  encodeBalanceOf,
  encodeTotalSupply,
  LoadDriver,
  ReferenceChain,
  TrafficGenerator,
} from '@monsoon/workload';
import { chainBlocks, replayChain } from '../helpers/chain.js';
import { type StartedCluster, startCluster } from '../helpers/startCluster.js';

const TXS = 400;
let started: StartedCluster | undefined;
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
  started = await startCluster(topology, 'monsoon-e2e-');
  ({ cluster, accounts } = started);
}, 120_000);

afterAll(async () => {
  await started?.stop();
});

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
    const { genesis, reference, included } = await replayChain(cluster.genesis.file, blocks);
    const common = makeCommon(genesis.chainId);
    const nonces = new Map<string, bigint[]>();
    for (const { transactions } of blocks.slice(1)) {
      const txs = transactions.map((raw) => decodeTransaction(raw, common));
      recoverSenders(txs).forEach((s, i) => {
        const k = toHex(s as Uint8Array);
        nonces.set(k, [...(nonces.get(k) ?? []), txs[i]!.nonce]);
      });
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
