/**
 * A storage process with --fsync always receives blocks over gRPC and is SIGKILLed while an
 * ApplyBlock is in flight (the server has logged receiving it), after at least five were
 * acknowledged; restarted on the same data directory, twice over. Every acknowledged block is
 * there with its roots, and the one in flight is either all there or NOT_FOUND, never partial.
 * Checkpoints every 4 blocks, so the restarts also load a checkpoint and replay the log after it.
 */

import { type ServiceError, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex, verifyProof } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import {
  applyBlockRequestToProto,
  atHash,
  type BlockRef,
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
  writeGenesis,
} from '@monsoon/test-utils';
import { type Block, makeGenesis, RefChain } from '../helpers/chain.js';
import { storageClient, unary } from '../helpers/grpcClient.js';

const hex = toHex;
const genesis = makeGenesis(5, 300);
const chain = new RefChain(genesis, 16);

let dir: string;
let genesisFile: string;

beforeAll(async () => {
  requireBuiltCli('storage-node');
  dir = await makeTmpDir();
  genesisFile = await writeGenesis(dir, genesis);
});

afterAll(async () => {
  await killAll();
  if (dir) await removeDir(dir);
});

function start(dataDir: string, checkpointEvery: number): Promise<Listening> {
  return startRole('storage-node', [
    '--genesis',
    genesisFile,
    '--listen',
    '127.0.0.1:0',
    '--data-dir',
    dataDir,
    '--fsync',
    'always',
    '--checkpoint-every',
    String(checkpointEvery),
    '--log-level',
    'debug',
  ]);
}

function roots(client: StorageServiceClient, at: BlockRef) {
  return unary(client, client.getShardRoots, getShardRootsRequestToProto({ at })).then(
    getShardRootsResponseFromProto,
  );
}

/** `b` is held whole: its hash, number, state root and every shard's root. */
async function expectHeld(client: StorageServiceClient, b: Block): Promise<void> {
  const r = await roots(client, atHash(b.hash));
  expect({ hash: hex(r.blockHash), number: r.number, stateRoot: hex(r.stateRoot) }).toEqual({
    hash: hex(b.hash),
    number: b.header.number,
    stateRoot: hex(b.header.stateRoot),
  });
  expect(r.roots.map((x) => [x.shard, hex(x.root)])).toEqual(
    b.req.expectedRoots.map((x) => [x.shard, hex(x.root)]),
  );
}

/** `b` is held whole, or (when allowed) not at all. */
async function expectHeldOrGone(
  client: StorageServiceClient,
  b: Block,
  mayBeGone: boolean,
): Promise<boolean> {
  const found = await roots(client, atHash(b.hash)).then(
    () => true,
    (e: ServiceError) => {
      expect(e.code).toBe(status.NOT_FOUND);
      return false;
    },
  );
  if (found) await expectHeld(client, b);
  else expect(mayBeGone).toBe(true);
  return found;
}

describe.each([
  ['without checkpoints', 0],
  ['with a checkpoint every 4 blocks', 4],
])('a storage process killed with an ApplyBlock in flight, %s', (_, every) => {
  // A restart from a checkpoint starts its history there: acknowledged blocks below the newest
  // checkpoint (the highest multiple of `every` up to the head) may be gone.
  const mayBeGone = (b: Block, head: bigint) =>
    every > 0 && b.header.number < (head / BigInt(every)) * BigInt(every);

  it('keeps every acknowledged block, and the one in flight whole or not at all', async () => {
    const acked: Block[] = [];
    let inFlight: Block | undefined;
    let parent: { hash: Uint8Array; state: Block['state']; number: bigint } = {
      hash: chain.genesisHash,
      state: chain.genesisState,
      number: 0n,
    };
    const outcomes: string[] = [];
    let seed = 1;

    for (let round = 0; round < 3; round++) {
      const { proc, address } = await start(`${dir}/node-${every}`, every);
      const client = storageClient(address);
      try {
        const highest = (acked.at(-1)?.header.number ?? 0n) + (inFlight === undefined ? 0n : 1n);
        for (const b of acked) await expectHeldOrGone(client, b, mayBeGone(b, highest));
        if (inFlight !== undefined) {
          const b = inFlight;
          const found = await expectHeldOrGone(client, b, true);
          if (found) {
            acked.push(b);
            parent = { hash: b.hash, state: b.state, number: b.header.number };
          }
          outcomes.push(found ? 'applied' : 'absent');
          inFlight = undefined;
        }
        // The head is the last block that survived, and reads there prove against its root.
        const head = await roots(client, HEAD);
        expect(hex(head.blockHash)).toBe(hex(parent.hash));
        const someone = genesis.alloc[round]!.address;
        const a = getAccountResponseFromProto(
          await unary(
            client,
            client.getAccount,
            getAccountRequestToProto({ address: someone, at: HEAD, omitLevels: 0 }),
          ),
        );
        const want = parent.state.accounts.get(keccak.keccak256(someone));
        expect(
          hex(verifyProof(head.stateRoot, keccak.keccak256(someone), a.proof) ?? new Uint8Array(0)),
        ).toBe(hex(want ?? new Uint8Array(0)));
        if (round === 2) {
          // The last life ends cleanly.
          proc.signal('SIGTERM');
          expect(await proc.exited).toEqual({ code: 0, signal: null });
          break;
        }

        // Six acknowledged in this life, then one more sent and the process killed as soon as it
        // says it has received that one (first life: before the log has it), or applied it
        // (second life: logged and installed, the answer not yet sent or not yet read).
        const killAt = round === 0 ? 'apply block received' : 'block applied';
        const seen = proc.lines.filter((l) => l.msg === killAt).length;
        for (let i = 0; i < 6; i++) {
          const b = chain.block(parent, seed++, 80);
          await unary(client, client.applyBlock, applyBlockRequestToProto(b.req, { shardCount: 16 }));
          acked.push(b);
          parent = { hash: b.hash, state: b.state, number: b.header.number };
        }
        const b = chain.block(parent, seed++, 400);
        inFlight = b;
        const call = unary(
          client,
          client.applyBlock,
          applyBlockRequestToProto(b.req, { shardCount: 16 }),
        ).then(
          () => 'acknowledged',
          (e: ServiceError) => `failed: ${e.code}`,
        );
        await proc.waitForNth(killAt, seen + 7);
        proc.signal('SIGKILL');
        const exit = await proc.exited;
        expect(exit.signal).toBe('SIGKILL');
        // Acknowledged before the kill landed: then it must be there after the restart.
        if ((await call) === 'acknowledged') {
          acked.push(b);
          parent = { hash: b.hash, state: b.state, number: b.header.number };
          inFlight = undefined;
          outcomes.push('acknowledged');
        }
      } finally {
        client.close();
      }
    }
    expect(acked.length).toBeGreaterThanOrEqual(12);
    expect(outcomes).toHaveLength(2);
    expect(outcomes[1]).not.toBe('absent'); // killed after the log had it: it survives
  });
});
