/**
 * `monsoon node client` (`npm run node -- client --genesis g.json --miners 127.0.0.1:7100 --storage …`):
 * follows the chain from the miners, reads proven state from the storage nodes and serves
 * Ethereum JSON-RPC over HTTP; transactions sent to it are pre-executed and submitted with
 * their witnesses. Flags, `MONSOON_*` environment, `--config`, logs, exit codes and signals are
 * the shared role scaffold's (`runRole` in `@monsoon/edge`).
 */
import {
  parseHostPort,
  type RawOptions,
  type RoleContext,
  type RoleOption,
  type RoleSpec,
  type RunningRole,
  read,
  readJsonFile,
  runRole,
} from '@monsoon/edge';
import { type ChainRules, chainRulesOf } from '@monsoon/execution';
import { type Genesis, parseGenesis } from '@monsoon/protocol';
import { CHAIN_TX_CAP_FLOOR } from '../chain.js';
import { SYNC_FROM, type SyncFrom } from '../chainFollower.js';
import { Client, defaultClientOptions } from '../client.js';
import { ClientError, ClientErrorCode } from '../clientError.js';
import { ClientEvents, defaultClientEventsOptions } from '../clientEvents.js';
import { ClientMetrics } from '../clientMetrics.js';
import { ClientServer } from '../clientServer.js';
import { defaultRpcServerOptions, RpcServer } from '../rpc/rpcServer.js';
import { STORAGE_TRANSPORTS, type StorageTransportKind } from '../storageTransport.js';

/** The client role's own options. */
export const CLIENT_OPTIONS: readonly RoleOption[] = [
  {
    name: 'genesis',
    arg: '<file>',
    description: 'geth-style genesis.json, the chain id and gas limit come from it (required)',
    path: true,
  },
  {
    name: 'miners',
    arg: '<list>',
    description: 'miners, host:port,… (the first reachable is used; required)',
  },
  {
    name: 'storage',
    arg: '<list>',
    description: 'storage nodes, host:port,… (every shard held by one at least; required)',
  },
  {
    name: 'rpc',
    arg: '<host:port>',
    description: `JSON-RPC over HTTP address (default: ${defaultRpcServerOptions.listen})`,
  },
  {
    name: 'grpc',
    arg: '<host:port>',
    description: 'ClientService (bulk SendTransactions) address (default: 127.0.0.1:0)',
  },
  {
    name: 'metrics',
    arg: '<host:port>',
    description: 'serve Prometheus text at http://<host:port>/metrics (default: off)',
  },
  {
    name: 'compactLevels',
    arg: '<c>',
    description: `account-trie levels left out of bags, = the miners' retention r (default: ${defaultClientOptions.compactLevels})`,
  },
  {
    name: 'maxBatch',
    arg: '<n>',
    description: `most transactions in one submission (default: ${defaultClientOptions.maxBatch})`,
  },
  {
    name: 'maxInFlight',
    arg: '<n>',
    description: `most submissions outstanding towards the miners at once; what is pre-executed meanwhile waits and goes in fuller ones (default: ${defaultClientOptions.maxInFlight})`,
  },
  {
    name: 'maxWaiting',
    arg: '<n>',
    description: `most transactions pre-executing or pre-executed and waiting for a submission; more wait their turn before pre-executing, so a witness is read close to when a miner checks it (default: ${defaultClientOptions.maxWaiting})`,
  },
  {
    name: 'storageTransport',
    arg: '<kind>',
    description:
      'state reads: grpc | shm (one-sided walks of the regions storage nodes on this host export, gRPC for the rest) | rdma (the same walks over RDMA READs from nodes started with --rdma-device; needs a device) (default: grpc)',
  },
  {
    name: 'chainWindow',
    arg: '<n>',
    description: `canonical blocks (transactions, receipts) kept; older ones are forgotten (default: ${defaultClientOptions.chainWindow})`,
  },
  {
    name: 'chainMaxTransactions',
    arg: '<n>',
    description: `transactions those blocks hold at most: beyond it the oldest go too, down to ${CHAIN_TX_CAP_FLOOR} blocks (default: ${defaultClientOptions.chainMaxTransactions})`,
  },
  {
    name: 'maxCachedNodes',
    arg: '<n>',
    description: `proof nodes cached at most, in two generations (default: ${defaultClientOptions.maxCachedNodes})`,
  },
  {
    name: 'syncFrom',
    arg: '<where>',
    description: `where a fresh client starts: head (the miner's head, served at once; the chain window's history behind it fetched next and linked to it) | genesis (every block replayed and linked first) (default: ${defaultClientOptions.syncFrom})`,
  },
];

/** What the client role runs with. */
export interface ClientRoleConfig {
  readonly rules: ChainRules;
  /** The genesis file: a late start checks its first block's ancestry down to its block 0. */
  readonly genesis: Genesis;
  readonly miners: readonly string[];
  readonly storage: readonly string[];
  readonly rpc: string;
  readonly grpc: string;
  readonly metrics: string | undefined;
  readonly compactLevels: number;
  readonly maxBatch: number;
  readonly maxInFlight: number;
  readonly maxWaiting: number;
  readonly storageTransport: StorageTransportKind;
  readonly chainWindow: number;
  readonly chainMaxTransactions: number;
  readonly maxCachedNodes: number;
  readonly syncFrom: SyncFrom;
}

function required(list: string[], name: string): string[] {
  if (list.length === 0) {
    throw new ClientError(ClientErrorCode.BadArgument, `--${name}: expected at least one host:port`, {
      option: name,
    });
  }
  return list;
}

async function loadClient(raw: RawOptions): Promise<ClientRoleConfig> {
  if (raw.genesis === undefined) {
    throw new ClientError(
      ClientErrorCode.BadArgument,
      '--genesis <file> is required (or "genesis" in the --config file)',
      {
        option: 'genesis',
      },
    );
  }
  const config = {
    miners: required(read.hostPorts(raw.miners, 'miners'), 'miners'),
    storage: required(read.hostPorts(raw.storage, 'storage'), 'storage'),
    rpc: read.hostPort(raw.rpc ?? defaultRpcServerOptions.listen, 'rpc'),
    grpc: read.hostPort(raw.grpc ?? '127.0.0.1:0', 'grpc'),
    metrics: read.optionalHostPort(raw.metrics, 'metrics'),
    compactLevels: read.int(raw.compactLevels ?? defaultClientOptions.compactLevels, 'compactLevels'),
    maxBatch: read.int(raw.maxBatch ?? defaultClientOptions.maxBatch, 'maxBatch', 1),
    maxInFlight: read.int(raw.maxInFlight ?? defaultClientOptions.maxInFlight, 'maxInFlight', 1),
    maxWaiting: read.int(raw.maxWaiting ?? defaultClientOptions.maxWaiting, 'maxWaiting', 1),
    storageTransport: read.oneOf(
      raw.storageTransport ?? defaultClientOptions.storageTransport,
      'storageTransport',
      STORAGE_TRANSPORTS,
    ),
    chainWindow: read.int(raw.chainWindow ?? defaultClientOptions.chainWindow, 'chainWindow', 1),
    chainMaxTransactions: read.int(
      raw.chainMaxTransactions ?? defaultClientOptions.chainMaxTransactions,
      'chainMaxTransactions',
      1,
    ),
    maxCachedNodes: read.int(raw.maxCachedNodes ?? defaultClientOptions.maxCachedNodes, 'maxCachedNodes', 2),
    syncFrom: read.oneOf(raw.syncFrom ?? defaultClientOptions.syncFrom, 'syncFrom', SYNC_FROM),
  };
  const genesis = parseGenesis(await readJsonFile(read.str(raw.genesis, 'genesis'), 'genesis'));
  return { ...config, rules: chainRulesOf(genesis), genesis };
}

async function startClient(o: ClientRoleConfig, { logger }: RoleContext): Promise<RunningRole> {
  const client = await Client.start({
    miners: [...o.miners],
    storage: [...o.storage],
    rules: o.rules,
    compactLevels: o.compactLevels,
    maxBatch: o.maxBatch,
    maxInFlight: o.maxInFlight,
    maxWaiting: o.maxWaiting,
    storageTransport: o.storageTransport,
    chainWindow: o.chainWindow,
    chainMaxTransactions: o.chainMaxTransactions,
    maxCachedNodes: o.maxCachedNodes,
    syncFrom: o.syncFrom,
    genesis: o.genesis,
    logger,
  });
  let rpc: RpcServer | undefined;
  let grpc: ClientServer | undefined;
  let metrics: ClientMetrics | undefined;
  let events: ClientEvents | undefined;
  const close = async () => {
    await Promise.all([rpc?.close(), grpc?.close(), metrics?.close(), client.close()]);
    events?.close();
  };
  try {
    await client.ready();
    // Logs, filters and subscriptions (JSON-RPC over HTTP and, on the same port, WebSocket).
    events = new ClientEvents(
      // Logs of the blocks the chain view holds: the same window, so neither outgrows the other.
      { ...defaultClientEventsOptions, window: o.chainWindow, baseFeePerGas: o.rules.baseFeePerGas },
      { chain: client.chain, logger },
    );
    const feed = events;
    client.onAdmitted = (hash) => feed.pendingTransaction(hash);
    rpc = await RpcServer.create({ listen: o.rpc }, { backend: client, events, logger });
    grpc = await ClientServer.start(client, o.grpc, logger);
    if (o.metrics !== undefined)
      metrics = await ClientMetrics.serve(client, parseHostPort(o.metrics, '--metrics'), logger);
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
  return {
    listening: {
      address: grpc.address,
      rpc: rpc.url,
      ws: rpc.wsUrl,
      grpc: grpc.address,
      metrics: metrics?.address,
      head: Number(client.chain.requireHead().header.number),
      storage: client.remote.storage.describe(),
      storageTransport: o.storageTransport,
    },
    status: () => ({
      counters: client.counters,
      fetched: client.remote.counters,
      ...(client.remote.oneSided !== undefined ? { oneSided: client.remote.oneSided.counters } : {}),
    }),
    close,
  };
}

/** The client role as the shared scaffold runs it. */
export const clientRole: RoleSpec<ClientRoleConfig> = {
  role: 'client',
  description: 'Run a prefetching client: proven reads, pre-execution with witnesses, Ethereum JSON-RPC.',
  options: CLIENT_OPTIONS,
  load: loadClient,
  start: startClient,
};

/** Runs the client until SIGTERM/SIGINT. `argv` excludes `node`, the script and the role. */
export function runClient(argv: readonly string[]): Promise<void> {
  return runRole(clientRole, argv);
}
