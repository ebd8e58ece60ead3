/**
 * A small real cluster for the client's e2e tests, from the built CLIs on 127.0.0.1: two storage
 * nodes (shards 0-7 and 8-15), a miner sealing every 250 ms, and clients serving JSON-RPC. Every
 * process is a test-utils RoleProcess: `killAll()` from @monsoon/test-utils stops what is left.
 */
import { join } from 'node:path';
import { type RoleProcess, spawnRole, startRole } from '@monsoon/test-utils';

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

/** Spawns a client following `miners` (`host:port,…`; the cluster's miner unless given); no waiting. */
export function spawnClient(cluster: StorageAndMiner, miners = cluster.minerAddress): RoleProcess {
  return spawnRole('client', [
    '--genesis',
    cluster.genesis,
    '--miners',
    miners,
    '--storage',
    cluster.storageList,
    '--rpc',
    '127.0.0.1:0',
  ]);
}

/** A client's JSON-RPC URL, once it printed `listening`. */
export async function rpcUrlOf(client: RoleProcess): Promise<string> {
  return String((await client.waitFor((l) => l.msg === 'listening')).rpc);
}
