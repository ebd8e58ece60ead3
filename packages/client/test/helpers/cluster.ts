/**
 * A small real cluster for the client's e2e tests, from the built CLIs on 127.0.0.1: two storage
 * nodes (shards 0-7 and 8-15), a miner sealing every 250 ms, and clients serving JSON-RPC. Every
 * process is a test-utils RoleProcess: `killAll()` from @monsoon/test-utils stops what is left.
 */
import { join } from 'node:path';
import { fundedGenesis, type RoleProcess, spawnRole, startRole, writeGenesis } from '@monsoon/test-utils';

/** Storage and miner, ready; what clients are pointed at. */
export interface StorageAndMiner {
  readonly genesis: string;
  /** `host:port,host:port`: the two storage nodes. */
  readonly storageList: string;
  readonly minerAddress: string;
}

/** Starts the two storage nodes (data under `dir`) and the miner over the genesis file `genesis`. */
export async function startStorageAndMiner(dir: string, genesis: string): Promise<StorageAndMiner> {
  const storage = await Promise.all(
    ['0-7', '8-15'].map((shards, i) =>
      startRole('storage-node', [
        '--genesis',
        genesis,
        '--shards',
        shards,
        '--listen',
        '127.0.0.1:0',
        '--data-dir',
        join(dir, `s${i}`),
        '--fsync',
        'none',
      ]),
    ),
  );
  const storageList = storage.map((s) => s.address).join(',');
  const miner = await startRole('miner', [
    '--genesis',
    genesis,
    '--storage',
    storageList,
    '--block-interval',
    '250',
    '--coinbase',
    `0x${'c0'.repeat(20)}`,
  ]);
  return { genesis, storageList, minerAddress: miner.address };
}

/**
 * Writes a genesis funding `addresses` (`0x…`, 1000 ether each) on chain `chainId` into `dir`
 * and starts the storage nodes and the miner over it.
 */
export async function startFundedCluster(
  dir: string,
  addresses: readonly string[],
  chainId: number,
): Promise<StorageAndMiner> {
  const funded = addresses.map((a) => Uint8Array.from(Buffer.from(a.slice(2), 'hex')));
  const genesis = await writeGenesis(dir, fundedGenesis(funded, BigInt(chainId), 30_000_000n));
  return startStorageAndMiner(dir, genesis);
}

/** A JSON-RPC answer: its result or its error. */
export interface RpcAnswer<T> {
  result?: T;
  error?: { code: number; message: string };
}

/** One JSON-RPC call over HTTP to `url`. */
export async function rpcCall<T>(url: string, method: string, params: unknown[] = []): Promise<RpcAnswer<T>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as RpcAnswer<T>;
}

/**
 * Spawns a client following `miners` (`host:port,…`; the cluster's miner unless given), with
 * `extra` flags; no waiting.
 */
export function spawnClient(
  cluster: StorageAndMiner,
  miners = cluster.minerAddress,
  extra: readonly string[] = [],
): RoleProcess {
  return spawnRole('client', [
    '--genesis',
    cluster.genesis,
    '--miners',
    miners,
    '--storage',
    cluster.storageList,
    '--rpc',
    '127.0.0.1:0',
    ...extra,
  ]);
}

/** A client's JSON-RPC URL, once it printed `listening`. */
export async function rpcUrlOf(client: RoleProcess): Promise<string> {
  return String((await client.waitFor((l) => l.msg === 'listening')).rpc);
}
