/**
 * The conventional node's disk mode: @ethereumjs/vm over an @ethereumjs/mpt whose nodes live in
 * classic-level behind a node cache far smaller than the state. It must compute exactly what the
 * in-memory reference computes (the e2e benchmark measures both as baselines), and its nodes must
 * really be in LevelDB: reopened from disk, the trie answers at the final root.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMPT } from '@ethereumjs/mpt';
import { Address, ValueEncoding } from '@ethereumjs/util';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { defaultChainRules } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { genesisState, parseGenesis } from '@monsoon/protocol';
import { AccountSet, buildGenesis, LevelTrieDb, ReferenceChain, TrafficGenerator } from '@monsoon/workload';

const rules = { ...defaultChainRules, chainId: 31337n };
let accounts: AccountSet;
let dir: string;

beforeAll(async () => {
  accounts = await AccountSet.create({
    seed: new TextEncoder().encode('disk reference'),
    count: 200,
    eager: true,
  });
  dir = await mkdtemp(join(tmpdir(), 'monsoon-refdisk-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('replays blocks of the mix to the same roots, outcomes and gas as the in-memory reference', async () => {
  const genesis = parseGenesis(buildGenesis(accounts, { chainId: rules.chainId }));
  const memory = await ReferenceChain.create(genesis, { rules });
  const db = await LevelTrieDb.open(join(dir, 'state'));
  // 8 cached nodes against a state of ~700: nearly every trie read goes to LevelDB.
  const disk = await ReferenceChain.create(genesis, { rules, disk: { db, cacheNodes: 8 } });
  expect(toHex(await disk.stateRoot())).toBe(toHex(genesisState(genesis).root()));
  expect(toHex(await memory.stateRoot())).toBe(toHex(await disk.stateRoot()));

  const gen = new TrafficGenerator(
    { chainId: rules.chainId, erc20Share: 0.4, seed: Uint8Array.of(7) },
    {
      accounts: {
        count: accounts.count,
        privateKey: (i: number) => accounts.privateKey(i),
        address: (i: number) => accounts.address(i),
      },
    },
  );
  for (let b = 1n; b <= 3n; b++) {
    const raws = gen.take(60).map((t) => t.raw);
    const env = { number: b, timestamp: 12n * b, coinbase: accounts.address(3), gasLimit: rules.gasLimit };
    const m = await memory.runBlock(env, raws);
    const d = await disk.runBlock(env, raws);
    expect(d.outcomes).toEqual(m.outcomes);
    expect(d.outcomes).not.toContain('refused');
    expect(d.gasUsed).toBe(m.gasUsed);
    expect(toHex(d.stateRoot)).toBe(toHex(m.stateRoot));
  }
  const root = await disk.stateRoot();
  const sender = accounts.address(5);
  const expected = await memory.vm.stateManager.getAccount(new Address(sender));
  await db.close();

  // Reopened from disk with no cache: the nodes it committed are all there.
  const reopened = await LevelTrieDb.open(join(dir, 'state'));
  try {
    const trie = await createMPT({
      db: reopened,
      root,
      useKeyHashing: true,
      useKeyHashingFunction: keccak.keccak256,
      valueEncoding: ValueEncoding.Bytes,
    });
    const rlp = await trie.get(sender);
    expect(rlp).not.toBeNull();
    expect(toHex(rlp!)).toBe(toHex(expected!.serialize()));
  } finally {
    await reopened.close();
  }
});
