/**
 * What the miner's whole-system e2e tests share: a client process over the miner and storage
 * nodes, JSON-RPC calls to it, and a storage node's state root at a block.
 */
import { createServer } from 'node:net';
import { credentials } from '@grpc/grpc-js';
import { toHex } from '@monsoon/dsm-tree';
import { unary } from '@monsoon/edge';
import {
  atHash,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  StorageServiceClient,
} from '@monsoon/protocol';
import { startRole } from '@monsoon/test-utils';

/** Starts a client role following `miner`, reading `storage`; resolves to its JSON-RPC URL. */
export async function startClientRole(genesisFile: string, miner: string, storage: readonly string[]) {
  const client = await startRole('client', [
    '--genesis',
    genesisFile,
    '--miners',
    miner,
    '--storage',
    storage.join(','),
    '--rpc',
    '127.0.0.1:0',
  ]);
  return String(client.line.rpc);
}

export interface RpcAnswer<T> {
  result?: T;
  error?: { code?: number; message: string };
}

/** One JSON-RPC call; a transport failure is an answer with an error too. */
export async function rpc<T>(url: string, method: string, params: unknown[]): Promise<RpcAnswer<T>> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(5_000),
    });
    return (await res.json()) as RpcAnswer<T>;
  } catch (e) {
    return { error: { message: (e as Error).message } };
  }
}

/** The state root `address` holds for block `hash`; rejects (NOT_FOUND) while it lacks the block. */
export async function stateRootAt(address: string, hash: Uint8Array): Promise<string> {
  const c = new StorageServiceClient(address, credentials.createInsecure());
  try {
    const r = getShardRootsResponseFromProto(
      await unary(c, c.getShardRoots, getShardRootsRequestToProto({ at: atHash(hash) }), {
        deadline: Date.now() + 5_000,
      }),
    );
    return toHex(r.stateRoot);
  } finally {
    c.close();
  }
}

/** `127.0.0.1:<port>` of a port nothing listens on (yet): a node that is down, or started later. */
export function freeAddress(): Promise<string> {
  return new Promise<string>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(`127.0.0.1:${port}`));
    });
  });
}
