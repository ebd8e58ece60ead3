/**
 * No request stalls a storage process (issue 15): a GetNodes of 10,000 unknown hashes is looked
 * for in every version held (tens of thousands of proof walks), yet blocks sent while it runs are
 * applied and acknowledged before it answers, it answers every hash (empty: unknown), and a
 * SIGTERM during one stops the process cleanly, the call refused UNAVAILABLE rather than run to
 * its end. The default limit on GetNodes hashes is lower than BatchGet's.
 */
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { applyBlockRequestToProto, type StorageServiceClient } from '@monsoon/protocol';
import {
  killAll,
  makeTmpDir,
  Prng,
  removeDir,
  requireBuiltCli,
  startRole,
  writeGenesis,
} from '@monsoon/test-utils';
import { type Block, makeGenesis, RefChain } from '../helpers/chain.js';
import { expectStatus, storageClient, unary } from '../helpers/grpcClient.js';

const genesis = makeGenesis(15, 300);
const chain = new RefChain(genesis, 16);
const rng = new Prng(1515);

/** `n` blocks on from `from`, each changing a few accounts. */
function blocksAfter(from: Block | undefined, n: number): Block[] {
  const out: Block[] = [];
  let parent =
    from === undefined
      ? { hash: chain.genesisHash, state: chain.genesisState, number: 0n }
      : { hash: from.hash, state: from.state, number: from.header.number };
  for (let i = 0; i < n; i++) {
    const b = chain.block(parent, rng.u32(), 8);
    out.push(b);
    parent = { hash: b.hash, state: b.state, number: b.header.number };
  }
  return out;
}

const unknownHashes = (n: number) => Array.from({ length: n }, () => rng.bytes(32));

let dir: string;
let genesisFile: string;

beforeAll(async () => {
  requireBuiltCli('storage-node');
  dir = await makeTmpDir();
  genesisFile = await writeGenesis(dir, genesis);
});

afterAll(async () => {
  await killAll();
  await removeDir(dir);
});

let nodes = 0;

async function startNode(extra: string[] = []) {
  const s = await startRole('storage-node', [
    '--genesis',
    genesisFile,
    '--listen',
    '127.0.0.1:0',
    '--data-dir',
    join(dir, `node${nodes++}`),
    '--fsync',
    'none',
    '--window',
    '128',
    ...extra,
  ]);
  return { ...s, client: storageClient(s.address) };
}

const apply = (client: StorageServiceClient, b: Block) =>
  unary(client, client.applyBlock, applyBlockRequestToProto(b.req, { shardCount: 16 }));

describe('bounded work per request', () => {
  it('a GetNodes of 10,000 unknown hashes answers them all empty while blocks keep being applied', async () => {
    const { client, proc } = await startNode(['--max-nodes', '10000']);
    const history = blocksAfter(undefined, 30);
    for (const b of history) await apply(client, b);
    const hashes = unknownHashes(10_000);

    const order: string[] = [];
    const big = unary(client, client.getNodes, { hashes, paths: [] }).then((r) => {
      order.push('GetNodes');
      return r;
    });
    // Sent after the GetNodes: each is answered while it is still running.
    const later = blocksAfter(history.at(-1), 5);
    for (const b of later) {
      const r = await apply(client, b);
      expect(toHex(r.blockHash)).toBe(toHex(b.hash));
      order.push(`block ${b.header.number}`);
    }
    const res = await big;
    expect(res.nodes).toHaveLength(10_000);
    expect(res.nodes.every((n) => n.length === 0)).toBe(true);
    expect(order).toEqual(['block 31', 'block 32', 'block 33', 'block 34', 'block 35', 'GetNodes']);
    client.close();
    expect((await proc.stop('SIGTERM')).code).toBe(0);
  }, 120_000);

  it('SIGTERM during a large GetNodes: the call is refused UNAVAILABLE and the process exits 0', async () => {
    const { client, proc } = await startNode(['--max-nodes', '10000']);
    const history = blocksAfter(undefined, 30);
    for (const b of history) await apply(client, b);
    const big = unary(client, client.getNodes, { hashes: unknownHashes(10_000), paths: [] });
    // A block applied after the GetNodes started: the process is serving between its slices.
    await apply(client, blocksAfter(history.at(-1), 1)[0]!);
    proc.signal('SIGTERM');
    await expectStatus(
      big,
      status.UNAVAILABLE,
      /^SHUTTING_DOWN: the node is shutting down; GetNodes stopped after \d+ of 10000 hashes$/,
    );
    expect((await proc.exited).code).toBe(0);
    client.close();
  }, 120_000);

  it('refuses more GetNodes hashes than --max-nodes (default 1024) with INVALID_ARGUMENT', async () => {
    const { client, proc } = await startNode();
    await expectStatus(
      unary(client, client.getNodes, { hashes: unknownHashes(1025), paths: [] }),
      status.INVALID_ARGUMENT,
      'BAD_ARGUMENT: hashes: expected at most 1024, found 1025',
    );
    const ok = await unary(client, client.getNodes, { hashes: unknownHashes(1024), paths: [] });
    expect(ok.nodes).toHaveLength(1024);
    client.close();
    expect((await proc.stop('SIGTERM')).code).toBe(0);
  }, 60_000);
});
