/**
 * Two real storage processes (the built CLI), shards 0-7 and 8-15 of one genesis, driven over
 * gRPC with the generated client: genesis proofs verify against the root one full StateTree
 * computes, the shard roots recombine, a chain and a fork from the reference chain apply on
 * both, old versions stay readable, and a tampered block is refused with the head unchanged.
 */

import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeAccount, rlpEncode, toHex, verifyProof } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import {
  type ApplyBlockRequest,
  applyBlockRequestToProto,
  applyBlockResponseFromProto,
  atHash,
  atNumber,
  type BlockRef,
  getAccountRequestToProto,
  getAccountResponseFromProto,
  getCodeRequestToProto,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  getStorageRequestToProto,
  getStorageResponseFromProto,
  HEAD,
  type Head,
  headFromProto,
  type StorageServiceClient,
} from '@monsoon/protocol';
import {
  killAll,
  makeTmpDir,
  removeDir,
  requireBuiltCli,
  startRole,
  writeGenesis,
} from '@monsoon/test-utils';
import { type Block, makeGenesis, RefChain } from '../helpers/chain.js';
import { errorCodeOf, expectStatus, storageClient, unary } from '../helpers/grpcClient.js';

const hex = toHex;
const genesis = makeGenesis(71, 400);
const chain = new RefChain(genesis, 16);

interface Proc {
  name: string;
  shards: Set<number>;
  client: StorageServiceClient;
}

let dir: string;
let procs: Proc[];

beforeAll(async () => {
  requireBuiltCli('storage-node');
  dir = await makeTmpDir();
  const genesisFile = await writeGenesis(dir, genesis);
  const specs = [
    ['0-7', [0, 1, 2, 3, 4, 5, 6, 7]],
    ['8-15', [8, 9, 10, 11, 12, 13, 14, 15]],
  ] as const;
  procs = await Promise.all(
    specs.map(async ([spec, shards]) => {
      const { address } = await startRole('storage-node', [
        '--genesis',
        genesisFile,
        '--shards',
        spec,
        '--listen',
        '127.0.0.1:0',
        '--data-dir',
        `${dir}/node-${spec}`,
        '--fsync',
        'none',
      ]);
      return { name: spec, shards: new Set<number>(shards), client: storageClient(address) };
    }),
  );
});

afterAll(async () => {
  for (const p of procs ?? []) p.client.close();
  await killAll();
  if (dir) await removeDir(dir);
});

const holderOf = (address: Uint8Array): Proc => procs.find((p) => p.shards.has(chain.shardOf(address)))!;

function shardRoots(p: Proc, at: BlockRef) {
  return unary(p.client, p.client.getShardRoots, getShardRootsRequestToProto({ at })).then(
    getShardRootsResponseFromProto,
  );
}

function getAccount(p: Proc, address: Uint8Array, at: BlockRef) {
  return unary(p.client, p.client.getAccount, getAccountRequestToProto({ address, at, omitLevels: 0 })).then(
    getAccountResponseFromProto,
  );
}

async function apply(p: Proc, req: ApplyBlockRequest) {
  const wire = applyBlockRequestToProto(RefChain.forShards(req, p.shards), { shardCount: 16 });
  return applyBlockResponseFromProto(await unary(p.client, p.client.applyBlock, wire), { shardCount: 16 });
}

/** Applies `b` to both processes; each answers with the block's roots of its own shards. */
async function applyToBoth(b: Block): Promise<void> {
  const answers = await Promise.all(procs.map((p) => apply(p, b.req)));
  answers.forEach((res, i) => {
    expect(hex(res.blockHash)).toBe(hex(b.hash));
    expect(res.number).toBe(b.header.number);
    expect(res.roots.map((r) => [r.shard, hex(r.root)])).toEqual(
      b.req.expectedRoots.filter((r) => procs[i]!.shards.has(r.shard)).map((r) => [r.shard, hex(r.root)]),
    );
  });
}

/** Both processes' shard roots at `at`, recombined, equal `block`'s (hash, number, roots, state root). */
async function expectRootsAt(
  at: BlockRef,
  hash: Uint8Array,
  number: bigint,
  roots: readonly { shard: number; root: Uint8Array }[],
  stateRoot: Uint8Array,
) {
  const answers = await Promise.all(procs.map((p) => shardRoots(p, at)));
  for (const a of answers) {
    expect(hex(a.blockHash)).toBe(hex(hash));
    expect(a.number).toBe(number);
    expect(hex(a.stateRoot)).toBe(hex(stateRoot));
    expect(a.shardCount).toBe(16);
  }
  const combined = answers.flatMap((a) => a.roots).sort((x, y) => x.shard - y.shard);
  expect(combined.map((r) => [r.shard, hex(r.root)])).toEqual(roots.map((r) => [r.shard, hex(r.root)]));
}

/** Reads every account `b` changed from its holder at `at`; each proof verifies against `b`'s root. */
async function expectAccountsAt(b: Block, at: BlockRef): Promise<void> {
  const addresses = b.req.shards.flatMap((s) => s.accounts.map((a) => a.address));
  expect(addresses.length).toBeGreaterThan(0);
  await Promise.all(
    addresses.map(async (address) => {
      const key = keccak.keccak256(address);
      const res = await getAccount(holderOf(address), address, at);
      expect(hex(res.blockHash)).toBe(hex(b.hash));
      const proven = verifyProof(b.header.stateRoot, key, res.proof);
      expect(proven && hex(proven)).toBe(res.accountRlp && hex(res.accountRlp));
      const want = b.state.accounts.get(key);
      expect(res.accountRlp && hex(res.accountRlp)).toBe(want && hex(want));
    }),
  );
}

describe('two storage processes, shards 0-7 and 8-15', () => {
  it('start at the genesis block the reference chain computes', async () => {
    const root = chain.genesisState.root();
    await expectRootsAt(HEAD, chain.genesisHash, 0n, chain.shardRoots(chain.genesisState), root);
  });

  it('serve every genesis account, slot and code from the shard holder, with proofs that verify', async () => {
    const root = chain.genesisState.root();
    let slots = 0;
    let codes = 0;
    await Promise.all(
      genesis.alloc.map(async (a) => {
        const p = holderOf(a.address);
        const key = keccak.keccak256(a.address);
        const res = await getAccount(p, a.address, HEAD);
        expect(res.accountRlp).toBeDefined();
        expect(hex(verifyProof(root, key, res.proof)!)).toBe(hex(res.accountRlp!));
        const account = decodeAccount(res.accountRlp!);
        expect([account.nonce, account.balance]).toEqual([a.nonce, a.balance]);
        for (const [slot, value] of a.storage) {
          const s = getStorageResponseFromProto(
            await unary(
              p.client,
              p.client.getStorage,
              getStorageRequestToProto({ address: a.address, slot, at: HEAD, omitLevels: 0 }),
            ),
          );
          expect(hex(verifyProof(root, key, s.accountProof)!)).toBe(hex(res.accountRlp!));
          expect(hex(verifyProof(account.storageRoot, keccak.keccak256(slot), s.storageProof)!)).toBe(
            hex(rlpEncode(value)),
          );
          expect(hex(s.value)).toBe(hex(value));
          slots++;
        }
        if (a.code.length > 0) {
          const c = await unary(
            p.client,
            p.client.getCode,
            getCodeRequestToProto({ codeHash: account.codeHash }),
          );
          expect(hex(c.code)).toBe(hex(a.code));
          codes++;
        }
      }),
    );
    expect([slots > 0, codes > 0]).toEqual([true, true]);
    // An account that does not exist: a proof of absence from its shard's holder.
    const missing = new Uint8Array(20).fill(0x5a);
    const res = await getAccount(holderOf(missing), missing, HEAD);
    expect(res.accountRlp).toBeUndefined();
    expect(verifyProof(root, keccak.keccak256(missing), res.proof)).toBeUndefined();
  });

  const blocks: Block[] = [];
  let fork: Block[] = [];

  it('apply a chain of blocks, each checked against every expected root', async () => {
    let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    for (let i = 1; i <= 6; i++) {
      const b = chain.block(parent, 1000 + i, 60);
      await applyToBoth(b);
      blocks.push(b);
      parent = { hash: b.hash, state: b.state, number: b.header.number };
    }
    const head = blocks.at(-1)!;
    await expectRootsAt(HEAD, head.hash, head.header.number, head.req.expectedRoots, head.header.stateRoot);
    await expectAccountsAt(head, HEAD);
  });

  it('answer at old versions, by hash and by number', async () => {
    for (const b of [blocks[1]!, blocks[3]!]) {
      await expectRootsAt(atHash(b.hash), b.hash, b.header.number, b.req.expectedRoots, b.header.stateRoot);
      await expectRootsAt(
        atNumber(b.header.number),
        b.hash,
        b.header.number,
        b.req.expectedRoots,
        b.header.stateRoot,
      );
      await expectAccountsAt(b, atHash(b.hash));
      await expectAccountsAt(b, atNumber(b.header.number));
    }
    const g = chain.genesisState;
    await expectRootsAt(atNumber(0n), chain.genesisHash, 0n, chain.shardRoots(g), g.root());
  });

  it('hold both branches of a fork; the longer becomes the head and SubscribeHeads reports it', async () => {
    const a = procs[0]!;
    const heads: Head[] = [];
    const stream = a.client.subscribeHeads({});
    const waiters: (() => void)[] = [];
    const failed = new Promise<never>((_, reject) =>
      stream.on('error', (e: { code?: number }) => {
        if (e.code !== status.CANCELLED) reject(e);
      }),
    );
    stream.on('data', (h) => {
      heads.push(headFromProto(h));
      waiters.shift()?.();
    });
    const nextHead = () => Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), failed]);
    // The current head comes first, before anything changes.
    await nextHead();
    const seen = nextHead();
    // Branch off block 4: 5', 6' (not heavier than 6, which came first), then 7' (longer).
    let parent = { hash: blocks[3]!.hash, state: blocks[3]!.state, number: 4n };
    fork = [];
    for (let i = 5; i <= 7; i++) {
      const b = chain.block(parent, 2000 + i, 40);
      await applyToBoth(b);
      fork.push(b);
      parent = { hash: b.hash, state: b.state, number: b.header.number };
      if (i < 7) {
        const roots = await shardRoots(a, HEAD);
        expect(hex(roots.blockHash)).toBe(hex(blocks[5]!.hash));
      }
    }
    await seen;
    stream.cancel();
    expect(heads.map((h) => [hex(h.hash), h.number])).toEqual([
      [hex(blocks[5]!.hash), 6n],
      [hex(fork[2]!.hash), 7n],
    ]);
    expect(hex(heads[1]!.stateRoot)).toBe(hex(fork[2]!.header.stateRoot));

    const top = fork[2]!;
    await expectRootsAt(HEAD, top.hash, 7n, top.req.expectedRoots, top.header.stateRoot);
    // By number follows the new head's chain; the old branch stays readable by hash.
    const f6 = fork[1]!;
    await expectRootsAt(atNumber(6n), f6.hash, 6n, f6.req.expectedRoots, f6.header.stateRoot);
    const old6 = blocks[5]!;
    await expectRootsAt(atHash(old6.hash), old6.hash, 6n, old6.req.expectedRoots, old6.header.stateRoot);
    await expectAccountsAt(old6, atHash(old6.hash));
    await expectAccountsAt(f6, atNumber(6n));
  });

  it('refuse a tampered block with INVALID_ARGUMENT and the precise reason, leaving the head as it was', async () => {
    const top = fork[2]!;
    const next = chain.block({ hash: top.hash, state: top.state, number: 7n }, 3007, 40);
    const [a, b] = procs as [Proc, Proc];
    // Shard 2 (held by the first process) claimed to end at a root it does not reach.
    const wrongOwn: ApplyBlockRequest = {
      ...next.req,
      expectedRoots: next.req.expectedRoots.map((r) =>
        r.shard === 2 ? { shard: 2, root: new Uint8Array(32).fill(7) } : r,
      ),
    };
    const e1 = await expectStatus(
      apply(a, wrongOwn),
      status.INVALID_ARGUMENT,
      new RegExp(`^SHARD_ROOT_MISMATCH: shard 2 ends at [0-9a-f]{64}, the block expects ${'07'.repeat(32)}$`),
    );
    expect(errorCodeOf(e1)).toBe('SHARD_ROOT_MISMATCH');
    // The same root, sent to the second process (it holds only shard 2's root): the state root is off.
    const e2 = await expectStatus(
      apply(b, wrongOwn),
      status.INVALID_ARGUMENT,
      new RegExp(
        `^STATE_ROOT_MISMATCH: the shard roots give state root [0-9a-f]{64}, the header says ${hex(next.header.stateRoot)}$`,
      ),
    );
    expect(errorCodeOf(e2)).toBe('STATE_ROOT_MISMATCH');

    for (const p of procs) {
      await expectStatus(
        shardRoots(p, atHash(next.hash)),
        status.NOT_FOUND,
        /^UNKNOWN_VERSION: block [0-9a-f]{64} is not held here/,
      );
    }
    await expectRootsAt(HEAD, top.hash, 7n, top.req.expectedRoots, top.header.stateRoot);
    // Nothing was left behind: the untampered block applies.
    await applyToBoth(next);
    await expectRootsAt(HEAD, next.hash, 8n, next.req.expectedRoots, next.header.stateRoot);
  });
});
