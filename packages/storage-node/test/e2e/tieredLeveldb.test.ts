/**
 * A tiered storage process over a LevelDB role process, both real, on 127.0.0.1, with a memory
 * budget far below the state (so nearly every read faults nodes in over the socket):
 *  - blocks are acknowledged and reads answer what the reference chain says, with proofs;
 *  - the LevelDB process is SIGKILLed mid-stream: reads and blocks are UNAVAILABLE naming it
 *    (never an empty answer), the refused block is not installed;
 *  - the LevelDB process restarts on its directory: the node serves again by itself, and the
 *    refused block is accepted when sent again;
 *  - the storage process is SIGKILLed and restarted (a checkpoint of a tiered state, whose cold
 *    nodes are stubs, plus its log): same head, same answers.
 */
import { type ServiceError, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex, verifyProof } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import {
  applyBlockRequestToProto,
  getAccountRequestToProto,
  getAccountResponseFromProto,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  HEAD,
  type StorageServiceClient,
} from '@monsoon/protocol';
import {
  killAll,
  type Listening,
  makeTmpDir,
  removeDir,
  requireBuiltCli,
  startRole,
  until,
  writeGenesis,
} from '@monsoon/test-utils';
import { type Block, makeGenesis, RefChain } from '../helpers/chain.js';
import { expectStatus, storageClient, unary } from '../helpers/grpcClient.js';

const hex = toHex;
const genesis = makeGenesis(8, 600);
const chain = new RefChain(genesis, 16);

let dir: string;
let genesisFile: string;

beforeAll(async () => {
  requireBuiltCli('storage-node');
  requireBuiltCli('leveldb');
  dir = await makeTmpDir();
  genesisFile = await writeGenesis(dir, genesis);
});

afterAll(async () => {
  await killAll();
  if (dir) await removeDir(dir);
});

function startLeveldb(listen: string): Promise<Listening> {
  return startRole('leveldb', ['--listen', listen, '--dir', `${dir}/leveldb`]);
}

function startStorage(leveldb: string): Promise<Listening> {
  return startRole('storage-node', [
    '--genesis',
    genesisFile,
    '--listen',
    '127.0.0.1:0',
    '--data-dir',
    `${dir}/storage`,
    '--checkpoint-every',
    '3',
    '--checkpoint-depth',
    '2',
    '--backend',
    'tiered',
    '--memory-budget',
    '64KiB',
    '--leveldb',
    leveldb,
  ]);
}

function getAccount(client: StorageServiceClient, address: Uint8Array) {
  return unary(
    client,
    client.getAccount,
    getAccountRequestToProto({ address, at: HEAD, omitLevels: 0 }),
  ).then(getAccountResponseFromProto);
}

/** Every sampled account at the head is what the reference state says, with a proof of it. */
async function expectState(client: StorageServiceClient, b: { hash: Uint8Array; state: Block['state'] }) {
  const head = getShardRootsResponseFromProto(
    await unary(client, client.getShardRoots, getShardRootsRequestToProto({ at: HEAD })),
  );
  expect(hex(head.blockHash)).toBe(hex(b.hash));
  for (const a of genesis.alloc.filter((_, i) => i % 15 === 0)) {
    const key = keccak.keccak256(a.address);
    const got = await getAccount(client, a.address);
    const want = b.state.accounts.get(key);
    expect(hex(got.accountRlp ?? new Uint8Array(0))).toBe(hex(want ?? new Uint8Array(0)));
    expect(hex(verifyProof(head.stateRoot, key, got.proof) ?? new Uint8Array(0))).toBe(
      hex(want ?? new Uint8Array(0)),
    );
  }
}

describe('a tiered storage process over a LevelDB process', () => {
  it('serves from LevelDB, is UNAVAILABLE while LevelDB is down, serves again after its restart and after its own SIGKILL', async () => {
    let leveldb = await startLeveldb('127.0.0.1:0');
    const leveldbAddress = leveldb.address;
    let storage = await startStorage(leveldbAddress);
    let client = storageClient(storage.address);
    let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    const send = (b: Block) =>
      unary(client, client.applyBlock, applyBlockRequestToProto(b.req, { shardCount: 16 }));
    let seed = 1;
    for (let i = 0; i < 4; i++) {
      const b = chain.block(parent, seed++, 60);
      await send(b);
      parent = { hash: b.hash, state: b.state, number: b.header.number };
    }
    await expectState(client, parent);

    // The LevelDB process dies.
    leveldb.proc.signal('SIGKILL');
    expect((await leveldb.proc.exited).signal).toBe('SIGKILL');
    const down = /UNAVAILABLE: LevelDB at 127\.0\.0\.1:\d+ is unreachable/;
    // A read either finds every node it needs resident (and answers right) or is UNAVAILABLE.
    let unavailable = 0;
    for (const a of genesis.alloc.filter((_, i) => i % 10 === 1)) {
      const got = await getAccount(client, a.address).then(
        (r) => r,
        (e: ServiceError) => {
          expect({ code: e.code, details: e.details }).toEqual({
            code: status.UNAVAILABLE,
            details: expect.stringMatching(down),
          });
          unavailable++;
          return undefined;
        },
      );
      if (got !== undefined)
        expect(hex(got.accountRlp ?? new Uint8Array(0))).toBe(
          hex(parent.state.accounts.get(keccak.keccak256(a.address)) ?? new Uint8Array(0)),
        );
    }
    expect(unavailable).toBeGreaterThan(30);
    const refused = chain.block(parent, seed++, 60);
    await expectStatus(send(refused), status.UNAVAILABLE, down);
    // The refused block was not installed: the head is still its parent.
    const head = getShardRootsResponseFromProto(
      await unary(client, client.getShardRoots, getShardRootsRequestToProto({ at: HEAD })),
    );
    expect(hex(head.blockHash)).toBe(hex(parent.hash));

    // Back on the same address and directory: the node reconnects by itself.
    leveldb = await startLeveldb(leveldbAddress);
    // (A block always needs LevelDB: it is what says the node is back; reads may be served
    // from the cache meanwhile.)
    await until(
      () =>
        send(refused).then(
          () => true,
          (e: ServiceError) => {
            expect({ code: e.code, details: e.details }).toEqual({
              code: status.UNAVAILABLE,
              details: expect.stringMatching(down),
            });
            return false;
          },
        ),
      { what: 'the storage node to write to the restarted LevelDB', timeoutMs: 20_000, intervalMs: 100 },
    );
    parent = { hash: refused.hash, state: refused.state, number: refused.header.number };
    for (let i = 0; i < 3; i++) {
      const b = chain.block(parent, seed++, 60);
      await send(b);
      parent = { hash: b.hash, state: b.state, number: b.header.number };
    }
    await expectState(client, parent);

    // The storage process dies; it comes back from its checkpoint (stubs over LevelDB) and log.
    client.close();
    storage.proc.signal('SIGKILL');
    expect((await storage.proc.exited).signal).toBe('SIGKILL');
    storage = await startStorage(leveldbAddress);
    client = storageClient(storage.address);
    // Restored from a checkpoint of the tiered state (its cold nodes stubs), then the log.
    expect(storage.proc.lines.some((l) => l.msg === 'checkpoint loaded')).toBe(true);
    await expectState(client, parent);
    const b = chain.block(parent, seed++, 60);
    await send(b);
    await expectState(client, { hash: b.hash, state: b.state });
    client.close();
    storage.proc.signal('SIGTERM');
    expect(await storage.proc.exited).toEqual({ code: 0, signal: null });
    leveldb.proc.signal('SIGTERM');
    expect(await leveldb.proc.exited).toEqual({ code: 0, signal: null });
  });
});
