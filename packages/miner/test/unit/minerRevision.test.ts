/**
 * Witness revision over storage: an ERC-20 transfer whose bag was built before a block that
 * changed the same balance slots is revised with the paths the miner keeps of its recent
 * blocks (storage tries included) and runs; once those blocks are out of the window such a bag
 * is answered stale.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import {
  decodeSignedTx,
  defaultChainRules,
  emptyAccessSet,
  makeCommon,
  mergeAccessSet,
  preExecute,
  recoverSenders,
  witnessOf,
} from '@monsoon/execution';
import { Miner } from '@monsoon/miner';
import { applyAccountUpdate, genesisState, parseGenesis, TxStatus } from '@monsoon/protocol';
import {
  AccountSet,
  buildGenesis,
  DEFAULT_TOKEN_ADDRESS,
  encodeTokenTransfer,
  signTransaction,
} from '@monsoon/workload';
import { ENGINES, skipRevmWhereUnbuilt } from '../../../execution/test/unit/engines.js';

const rules = { ...defaultChainRules, chainId: 31337n };
const common = makeCommon(rules.chainId);
const RETENTION = 2;

let accounts: AccountSet;
beforeAll(async () => {
  accounts = await AccountSet.create({
    seed: new TextEncoder().encode('miner revision'),
    count: 8,
    eager: true,
  });
});

const nonces = new Map<number, bigint>();
/** A token transfer of `amount` from account `from` to account `to`. */
function tokenTransfer(from: number, to: number, amount = 5n): Uint8Array {
  const nonce = nonces.get(from) ?? 0n;
  nonces.set(from, nonce + 1n);
  return signTransaction(
    {
      type: 'eip1559',
      chainId: rules.chainId,
      nonce,
      gasLimit: 100_000n,
      to: DEFAULT_TOKEN_ADDRESS,
      value: 0n,
      data: encodeTokenTransfer(accounts.address(to), amount),
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    },
    accounts.privateKey(from),
  ).raw;
}

skipRevmWhereUnbuilt('witness revision over storage');

describe.each(ENGINES)('the miner [%s] revising an ERC-20 witness', (engine) => {
  it('revises a bag whose balance slots a recent block changed; reports it stale once that block is forgotten', async () => {
    nonces.clear();
    const genesis = parseGenesis(buildGenesis(accounts, { chainId: rules.chainId }));
    const miner = await Miner.create(genesis, { rules, retention: RETENTION, engine });
    const full = genesisState(genesis);
    /** `raw`'s bag as a client builds it from the full state as it is now. */
    const bagOf = async (raw: Uint8Array) => {
      const tx = decodeSignedTx(raw, common);
      const [sender] = recoverSenders([tx]) as Uint8Array[];
      const pre = await preExecute(full.snapshot(), miner.pendingEnv, rules, [{ tx, sender: sender! }], {
        common,
      });
      const access = emptyAccessSet();
      for (const a of pre.accesses) mergeAccessSet(access, a);
      return witnessOf(full, access, RETENTION);
    };
    const seal = async () => {
      for (const s of (await miner.seal()).shards) for (const u of s.accounts) applyAccountUpdate(full, u);
    };
    const oldRoot = miner.head.header.stateRoot;
    // Built before block 1, which moves tokens out of account 1 and into account 2: both
    // balance slots (and the token's storage root) change.
    const late = tokenTransfer(1, 2);
    const lateBag = await bagOf(late);
    const first = tokenTransfer(3, 1);
    const r1 = await miner.submit({
      transactions: [first],
      bag: await bagOf(first),
      prefetchedRoot: oldRoot,
    });
    expect(r1.results[0]!.status).toBe(TxStatus.Accepted);
    await seal();
    const second = tokenTransfer(4, 2);
    const r2 = await miner.submit({
      transactions: [second],
      bag: await bagOf(second),
      prefetchedRoot: miner.head.header.stateRoot,
    });
    expect(r2.results[0]!.status).toBe(TxStatus.Accepted);
    await seal();
    // The old bag reaches the token's old storage nodes only: the recent paths revise it.
    const revised = await miner.submit({ transactions: [late], bag: lateBag, prefetchedRoot: oldRoot });
    expect(revised.results[0]!.status).toBe(TxStatus.Accepted);
    await seal();
    // The revised execution gives the state a client replaying the blocks' updates holds.
    expect(toHex(miner.head.header.stateRoot)).toBe(toHex(full.root()));

    // A block changes account 2's balance slot again, then four blocks change nothing: its
    // paths are forgotten, and a bag from before it is stale.
    const stale = tokenTransfer(2, 5);
    const staleBag = await bagOf(stale);
    const third = tokenTransfer(6, 2);
    await miner.submit({
      transactions: [third],
      bag: await bagOf(third),
      prefetchedRoot: miner.head.header.stateRoot,
    });
    await seal();
    for (let i = 0; i < 4; i++) await seal();
    const r4 = await miner.submit({ transactions: [stale], bag: staleBag, prefetchedRoot: oldRoot });
    expect(r4.results[0]!.status).toBe(TxStatus.Stale);
  });
});
