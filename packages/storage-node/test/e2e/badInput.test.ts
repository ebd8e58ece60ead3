/**
 * A real storage process (shards 0-7) fed malformed and refused requests over gRPC: each gets
 * the status the server edge promises, with a message saying what was expected and what was
 * found, and the process keeps serving (a good request afterwards succeeds). Its /metrics
 * counts what it answered.
 */

import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, toHex } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import {
  applyBlockRequestToProto,
  atHash,
  atNumber,
  encodeHeader,
  getAccountRequestToProto,
  getAccountResponseFromProto,
  getShardRootsRequestToProto,
  HEAD,
  type StorageServiceClient,
  type storagePb,
} from '@monsoon/protocol';
import {
  killAll,
  makeTmpDir,
  type RoleProcess,
  removeDir,
  requireBuiltCli,
  startRole,
  writeGenesis,
} from '@monsoon/test-utils';
import { makeGenesis, RefChain } from '../helpers/chain.js';
import { errorCodeOf, expectStatus, storageClient, unary } from '../helpers/grpcClient.js';

const genesis = makeGenesis(9, 200);
const chain = new RefChain(genesis, 16);
const OWNED = new Set([0, 1, 2, 3, 4, 5, 6, 7]);
const mine = genesis.alloc.find((a) => OWNED.has(chain.shardOf(a.address)))!.address;
const theirs = genesis.alloc.find((a) => !OWNED.has(chain.shardOf(a.address)))!.address;
const first = chain.block({ hash: chain.genesisHash, state: chain.genesisState, number: 0n }, 77, 50);

let dir: string;
let proc: RoleProcess;
let metricsAddress: string;
let client: StorageServiceClient;

beforeAll(async () => {
  requireBuiltCli('storage-node');
  dir = await makeTmpDir();
  const started = await startRole('storage-node', [
    '--genesis',
    await writeGenesis(dir, genesis),
    '--shards',
    '0-7',
    '--listen',
    '127.0.0.1:0',
    '--data-dir',
    `${dir}/node`,
    '--metrics',
    '127.0.0.1:0',
    '--max-message-bytes',
    String(1024 * 1024),
  ]);
  proc = started.proc;
  metricsAddress = String(started.line.metrics);
  client = storageClient(started.address);
});

afterAll(async () => {
  client?.close();
  await killAll();
  if (dir) await removeDir(dir);
});

const account = (address: Uint8Array, at = HEAD) =>
  unary(client, client.getAccount, getAccountRequestToProto({ address, at, omitLevels: 0 }));

/** The process still answers a good read. */
async function stillServing(): Promise<void> {
  const res = getAccountResponseFromProto(await account(mine));
  expect(res.accountRlp).toBeDefined();
}

const applyWire = (req: storagePb.ApplyBlockRequest) => unary(client, client.applyBlock, req);
const good = () => applyBlockRequestToProto(RefChain.forShards(first.req, OWNED), { shardCount: 16 });

describe('malformed and refused requests to a storage process', () => {
  it('GetAccount with a 19-byte address: INVALID_ARGUMENT, naming the field', async () => {
    const e = await expectStatus(
      unary(client, client.getAccount, { address: new Uint8Array(19), at: undefined, omitLevels: 0 }),
      status.INVALID_ARGUMENT,
      'BAD_LENGTH: address: expected 20 bytes, found 19',
    );
    expect(errorCodeOf(e)).toBe('BAD_LENGTH');
    await stillServing();
  });

  it('GetStorage with a 31-byte slot: INVALID_ARGUMENT', async () => {
    await expectStatus(
      unary(client, client.getStorage, {
        address: mine,
        slot: new Uint8Array(31),
        at: undefined,
        omitLevels: 0,
      }),
      status.INVALID_ARGUMENT,
      'BAD_LENGTH: slot: expected 32 bytes, found 31',
    );
    await stillServing();
  });

  it('reads at a version not held: NOT_FOUND, by hash and by number', async () => {
    const unknown = new Uint8Array(32).fill(0xab);
    const e = await expectStatus(
      account(mine, atHash(unknown)),
      status.NOT_FOUND,
      `UNKNOWN_VERSION: block ${'ab'.repeat(32)} is not held here (pruned, unknown, or on no chain)`,
    );
    expect(errorCodeOf(e)).toBe('UNKNOWN_VERSION');
    await expectStatus(
      unary(client, client.getShardRoots, getShardRootsRequestToProto({ at: atNumber(99n) })),
      status.NOT_FOUND,
      'UNKNOWN_VERSION: block number 99 is not held here (pruned, unknown, or on no chain)',
    );
    await stillServing();
  });

  it('an account of a shard this process does not hold: INVALID_ARGUMENT with the WRONG_SHARD trailer', async () => {
    const e = await expectStatus(
      account(theirs),
      status.INVALID_ARGUMENT,
      new RegExp(
        `^WRONG_SHARD: account 0x${toHex(theirs)} is in shard ${chain.shardOf(theirs)}, not held by this node$`,
      ),
    );
    expect(errorCodeOf(e)).toBe('WRONG_SHARD');
  });

  it('GetCode: the empty code hash is empty code; an unknown hash is NOT_FOUND', async () => {
    const empty = await unary(client, client.getCode, { codeHash: EMPTY_CODE_HASH });
    expect(empty.code.length).toBe(0);
    await expectStatus(
      unary(client, client.getCode, { codeHash: new Uint8Array(32).fill(1) }),
      status.NOT_FOUND,
      new RegExp(`^UNKNOWN_CODE: code ${'01'.repeat(32)} is not held here`),
    );
  });

  it('ApplyBlock with an empty header, a header that is not RLP, or the wrong roots list: INVALID_ARGUMENT', async () => {
    await expectStatus(
      applyWire({ ...good(), headerRlp: new Uint8Array(0) }),
      status.INVALID_ARGUMENT,
      'MISSING_FIELD: headerRlp: expected non-empty bytes, found empty',
    );
    await expectStatus(
      applyWire({ ...good(), headerRlp: Uint8Array.of(0xc3, 0x01) }),
      status.INVALID_ARGUMENT,
      /^MISSING_FIELD: header\.rlp: expected an RLP list, found invalid RLP/,
    );
    await expectStatus(
      applyWire({ ...good(), expectedRoots: good().expectedRoots.slice(1) }),
      status.INVALID_ARGUMENT,
      /^BAD_SHARD: expectedRoots: /,
    );
    await stillServing();
  });

  it('ApplyBlock whose parent is unknown: FAILED_PRECONDITION', async () => {
    const orphan = { ...first.header, parentHash: new Uint8Array(32).fill(3) };
    const e = await expectStatus(
      applyWire({ ...good(), headerRlp: encodeHeader(orphan) }),
      status.FAILED_PRECONDITION,
      new RegExp(
        `^UNKNOWN_PARENT: block [0-9a-f]{64} extends ${'03'.repeat(32)}, which this node does not hold$`,
      ),
    );
    expect(errorCodeOf(e)).toBe('UNKNOWN_PARENT');
  });

  it('ApplyBlock with updates for a shard this process does not hold: INVALID_ARGUMENT', async () => {
    const req = applyBlockRequestToProto(first.req, { shardCount: 16 }); // every shard's updates
    expect(req.shards.some((s) => !OWNED.has(s.shard))).toBe(true);
    await expectStatus(
      applyWire(req),
      status.INVALID_ARGUMENT,
      /^WRONG_SHARD: updates for shard \d+, which this node does not hold$/,
    );
  });

  it('a batch over the limit is INVALID_ARGUMENT; a message over --max-message-bytes is RESOURCE_EXHAUSTED', async () => {
    const queries = Array.from({ length: 10_001 }, () => ({ address: mine, slots: [], code: false }));
    await expectStatus(
      unary(client, client.batchGet, { at: undefined, queries, omitLevels: 0 }),
      status.INVALID_ARGUMENT,
      'BAD_ARGUMENT: queries: expected at most 10000, found 10001',
    );
    await expectStatus(
      unary(client, client.getNodes, {
        hashes: Array.from({ length: 10_001 }, () => new Uint8Array(32)),
        paths: [],
      }),
      status.INVALID_ARGUMENT,
      'BAD_ARGUMENT: hashes: expected at most 1024, found 10001',
    );
    await expectStatus(
      applyWire({ ...good(), headerRlp: new Uint8Array(2 * 1024 * 1024).fill(1) }),
      status.RESOURCE_EXHAUSTED,
    );
    await stillServing();
  });

  it('GetNodes finds the state root over the wire, answers an unknown hash empty, refuses a bad path', async () => {
    const res = await unary(client, client.getNodes, {
      hashes: [chain.genesisState.root(), new Uint8Array(32)],
      paths: [],
    });
    expect(toHex(keccak.keccak256(res.nodes[0]!))).toBe(toHex(chain.genesisState.root()));
    expect(res.nodes[1]).toHaveLength(0);
    await expectStatus(
      unary(client, client.getNodes, { hashes: [new Uint8Array(32)], paths: [Uint8Array.of(16)] }),
      status.INVALID_ARGUMENT,
      'INCONSISTENT: paths[0]: expected nibbles 0-15, found 16 at 0',
    );
  });

  it('after all that, a good block applies and its head is served; /metrics counts the answers', async () => {
    const res = await applyWire(good());
    expect(toHex(res.blockHash)).toBe(toHex(first.hash));
    const roots = await unary(client, client.getShardRoots, getShardRootsRequestToProto({ at: HEAD }));
    expect(toHex(roots.blockHash)).toBe(toHex(first.hash));

    const text = await (await fetch(`http://${metricsAddress}/metrics`)).text();
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    expect(value('monsoon_storage_requests_total{method="ApplyBlock",code="OK"}')).toBe(1);
    expect(value('monsoon_storage_requests_total{method="GetAccount",code="INVALID_ARGUMENT"}')).toBe(2);
    expect(value('monsoon_storage_requests_total{method="ApplyBlock",code="FAILED_PRECONDITION"}')).toBe(1);
    expect(value('monsoon_storage_request_seconds_count{method="GetAccount"}')).toBe(8);
    expect(value('monsoon_storage_head_number')).toBe(1);
    expect(value('monsoon_storage_versions')).toBe(2);
    expect(value('monsoon_storage_wal_bytes')).toBeGreaterThan(16);
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(1024 * 1024);
    expect(text).toContain('# TYPE monsoon_storage_request_seconds histogram');
    expect((await fetch(`http://${metricsAddress}/other`)).status).toBe(404);
    // Nothing above was an internal error.
    expect(text).not.toContain('code="INTERNAL"');
    expect(proc.lines.filter((l) => l.msg === 'call failed')).toEqual([]);
  });
});
