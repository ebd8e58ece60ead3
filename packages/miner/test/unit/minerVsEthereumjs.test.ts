/**
 * The miner against the conventional way: blocks of the workload's mix (value transfers and
 * ERC-20 `transfer` calls on the real token contract, plus token overdrafts that revert),
 * submitted with bags a client would build, give exactly the state roots and gas that
 * @ethereumjs/vm computes running the same transactions on one full @ethereumjs/mpt state —
 * with the miner's recovery inline and on a worker pool, with plain transfers on the fast path
 * and in the EVM, and a coinbase that is itself one of the traffic's accounts; and with each
 * EVM engine (revm where its addon is built, and @ethereumjs/evm) in both miner and client.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import {
  decodeTransaction,
  defaultChainRules,
  type EngineName,
  emptyAccessSet,
  makeCommon,
  mergeAccessSet,
  preExecute,
  recoverSenders,
  SenderRecoveryPool,
  witnessOf,
} from '@monsoon/execution';
import { inlineRecovery, Miner, type SenderRecovery } from '@monsoon/miner';
import { applyAccountUpdate, genesisState, parseGenesis, TxStatus } from '@monsoon/protocol';
import {
  AccountSet,
  buildGenesis,
  DEFAULT_TOKEN_ADDRESS,
  encodeTokenTransfer,
  ReferenceChain,
  signTransaction,
  TrafficGenerator,
} from '@monsoon/workload';
import { ENGINES, skipRevmWhereUnbuilt } from '../../../execution/test/unit/engines.js';

const rules = { ...defaultChainRules, chainId: 31337n };
const common = makeCommon(rules.chainId);
const RETENTION = 2;
const SUBMISSION = 15;
/** The miner's coinbase: one of the traffic's accounts, so it also sends and receives. */
const COINBASE = 0;

let accounts: AccountSet;
let pool: SenderRecoveryPool;

beforeAll(async () => {
  accounts = await AccountSet.create({
    seed: new TextEncoder().encode('miner vs ethereumjs'),
    count: 61,
    eager: true,
  });
  pool = await SenderRecoveryPool.create({ threads: 1 });
});
afterAll(async () => {
  await pool.close();
});

/** Account 60 is kept out of the generator's traffic: it sends the reverting overdrafts. */
function traffic() {
  const keys = {
    count: 60,
    privateKey: (i: number) => accounts.privateKey(i),
    address: (i: number) => accounts.address(i),
  };
  return new TrafficGenerator(
    { chainId: rules.chainId, erc20Share: 0.4, seed: Uint8Array.of(1) },
    { accounts: keys },
  );
}

function overdraft(nonce: bigint): Uint8Array {
  return signTransaction(
    {
      type: 'eip1559',
      chainId: rules.chainId,
      nonce,
      gasLimit: 100_000n,
      to: DEFAULT_TOKEN_ADDRESS,
      value: 0n,
      data: encodeTokenTransfer(accounts.address(0), 10n ** 40n),
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    },
    accounts.privateKey(60),
  ).raw;
}

const CASES: [string, () => SenderRecovery, boolean][] = [
  ['inline', () => inlineRecovery, true],
  ['pool', () => pool, true],
  ['inline, every transaction in the EVM', () => inlineRecovery, false],
];

skipRevmWhereUnbuilt('the miner against @ethereumjs/vm');

describe.each<[EngineName, string, () => SenderRecovery, boolean]>(
  ENGINES.flatMap((e) => CASES.map((c) => [e, ...c] as [EngineName, string, () => SenderRecovery, boolean])),
)('the miner [%s] (recovery %s) against @ethereumjs/vm', (engine, _name, recovery, fastTransfers) => {
  it('gives the same state root and gas for blocks of transfers, ERC-20 calls and reverts', async () => {
    const genesis = parseGenesis(buildGenesis(accounts, { chainId: rules.chainId }));
    const miner = await Miner.create(genesis, {
      rules,
      retention: RETENTION,
      recovery: recovery(),
      fastTransfers,
      engine,
      coinbase: accounts.address(COINBASE), // sends and receives in the traffic, and is paid
    });
    const reference = await ReferenceChain.create(genesis, { rules });
    const full = genesisState(genesis);
    const gen = traffic();
    let overdrafts = 0n;
    let erc20 = 0;
    let byCoinbase = 0;

    for (let b = 0; b < 3; b++) {
      const raws = gen.take(45).map((t) => {
        if (t.kind === 'erc20') erc20++;
        if (t.from === COINBASE || t.to === COINBASE) byCoinbase++;
        return t.raw;
      });
      raws.splice(10, 0, overdraft(overdrafts++));
      // The client's part: pre-execute on a full state, prove what each submission read.
      const txs = raws.map((raw) => decodeTransaction(raw, common));
      const senders = recoverSenders(txs) as Uint8Array[];
      const env = miner.pendingEnv;
      const pre = await preExecute(
        full.snapshot(),
        env,
        rules,
        txs.map((tx, i) => ({ tx, sender: senders[i]! })),
        { engine },
      );
      expect(pre.outcomes.every((o) => o.status === 'included')).toBe(true);
      const submissions = [];
      for (let i = 0; i < raws.length; i += SUBMISSION) {
        const access = emptyAccessSet();
        for (const a of pre.accesses.slice(i, i + SUBMISSION)) mergeAccessSet(access, a);
        submissions.push(
          miner.submit({
            transactions: raws.slice(i, i + SUBMISSION),
            bag: witnessOf(full, access, RETENTION),
            prefetchedRoot: miner.head.header.stateRoot,
          }),
        );
      }
      for (const res of await Promise.all(submissions)) {
        for (const r of res.results) expect([r.status, r.reason]).toEqual([TxStatus.Accepted, '']);
      }
      const sealed = await miner.seal();
      const header = sealed.block.header;
      const ref = await reference.runBlock(
        {
          number: header.number,
          timestamp: header.timestamp,
          coinbase: header.miner,
          gasLimit: header.gasLimit,
        },
        raws,
      );
      expect(ref.outcomes.filter((o) => o === 0)).toHaveLength(1); // the overdraft reverted
      expect(ref.outcomes).not.toContain('refused');
      expect(toHex(header.stateRoot)).toBe(toHex(ref.stateRoot));
      expect(header.gasUsed).toBe(ref.gasUsed);
      // The client's full state follows the block's updates to the same root.
      for (const s of sealed.shards) for (const u of s.accounts) applyAccountUpdate(full, u);
      expect(toHex(full.root())).toBe(toHex(header.stateRoot));
    }
    expect(erc20).toBeGreaterThan(20);
    expect(byCoinbase).toBeGreaterThan(0);
  });
});
