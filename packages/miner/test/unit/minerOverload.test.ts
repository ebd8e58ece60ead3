/**
 * An overloaded miner answers instead of timing out (issue 15): submissions run one at a time,
 * and one that waited longer than `maxQueueWaitMs` for its turn is answered stale without being
 * executed (its client pre-executes it again and resubmits). Without this the queue of a miner
 * slower than its clients' load outgrew their 10 s deadline, every call failed whole, and a
 * soak's load stopped. Time is the miner's `now`, moved by the test.
 */
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { makeAccount, StateTree } from '@monsoon/dsm-tree';
import { defaultChainRules, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { Miner } from '@monsoon/miner';
import { type SubmitRequest, TxStatus } from '@monsoon/protocol';
import { fundedGenesis } from '@monsoon/test-utils';

const rules = { ...defaultChainRules, chainId: 4244n };
const common = makeCommon(rules.chainId);
const keys = Array.from({ length: 4 }, (_, i) => keccak.keccak256(Uint8Array.of(9, i)));
const addrs = keys.map((k) => privateToAddress(k));
const genesis = fundedGenesis(addrs, rules.chainId, rules.gasLimit);
const coinbase = new Uint8Array(20).fill(0xc0);

function state(): StateTree {
  const st = new StateTree();
  for (const a of genesis.alloc) st.putAccount(a.address, makeAccount({ balance: a.balance }));
  return st;
}

function submission(from: number, to: number): SubmitRequest {
  const tx = createFeeMarket1559Tx(
    { nonce: 0n, to: addrs[to], value: 1n, gasLimit: 21_000n, maxFeePerGas: 3_000_000_000n },
    { common },
  ).sign(keys[from]!);
  const st = state();
  return {
    transactions: [tx.serialize()],
    bag: st.proveAccounts([addrs[from]!, addrs[to]!, coinbase]),
    prefetchedRoot: st.root(),
  };
}

describe('an overloaded miner', () => {
  it('answers a submission that waited longer than maxQueueWaitMs stale, unexecuted', async () => {
    // now() is read when each submission is queued, then when its turn comes: A queued at 0 and
    // run at 0; B queued at 0 and run at 6,000 (A's execution "took" 6 s).
    const times = [0, 0, 0, 6_000];
    const miner = await Miner.create(genesis, {
      rules,
      coinbase,
      maxQueueWaitMs: 5_000,
      now: () => times.shift() ?? 6_000,
    });
    const [a, b] = await Promise.all([miner.prepare(submission(0, 1)), miner.prepare(submission(2, 3))]);
    const [ra, rb] = await Promise.all([miner.submitPrepared(a), miner.submitPrepared(b)]);
    expect(ra.results.map((r) => r.status)).toEqual([TxStatus.Accepted]);
    expect(rb.results.map((r) => r.status)).toEqual([TxStatus.Stale]);
    expect(rb.results[0]!.reason).toContain('waited 6000 ms');
    expect(miner.pendingCount).toBe(1);
    expect(miner.counters).toMatchObject({ accepted: 1, stale: 0, overloaded: 1 });
  });

  it('executes what waited less', async () => {
    const miner = await Miner.create(genesis, { rules, coinbase, maxQueueWaitMs: 5_000 });
    const res = await Promise.all([miner.submit(submission(0, 1)), miner.submit(submission(2, 3))]);
    expect(res.flatMap((r) => r.results.map((x) => x.status))).toEqual([
      TxStatus.Accepted,
      TxStatus.Accepted,
    ]);
    expect(miner.counters.overloaded).toBe(0);
  });
});

/**
 * A client whose Submit call timed out does not know what the miner took, so it sends the same
 * submission again: the miner must answer what it already has accepted without executing it a
 * second time (executed again, a sealed transaction's nonce refuses it as invalid, and its client
 * would hand the nonce to the sender's next transaction).
 */
describe('a resubmitted transaction', () => {
  it('is accepted once: from the pending block, then from a sealed block of the head chain', async () => {
    const miner = await Miner.create(genesis, { rules, coinbase });
    const req = submission(0, 1);
    expect((await miner.submit(req)).results.map((r) => r.status)).toEqual([TxStatus.Accepted]);
    expect((await miner.submit(req)).results.map((r) => r.status)).toEqual([TxStatus.Accepted]);
    expect(miner.pendingCount).toBe(1);
    const sealed = await miner.seal();
    expect(sealed.block.transactions).toHaveLength(1);
    const again = await miner.submit(req);
    expect(again.results.map((r) => r.status)).toEqual([TxStatus.Accepted]);
    expect(miner.pendingCount).toBe(0);
    expect(miner.counters).toMatchObject({ accepted: 1, invalid: 0, known: 2 });
    // Also when it comes among new transactions (the batch path).
    const fresh = submission(2, 3);
    const mixed: SubmitRequest = {
      ...fresh,
      transactions: [req.transactions[0]!, ...fresh.transactions],
      bag: [...fresh.bag, ...req.bag],
    };
    expect((await miner.submit(mixed)).results.map((r) => r.status)).toEqual([
      TxStatus.Accepted,
      TxStatus.Accepted,
    ]);
    expect(miner.pendingCount).toBe(1);
    expect(miner.counters).toMatchObject({ accepted: 2, invalid: 0, known: 3 });
  });

  it('is forgotten with its block when the block leaves the window', async () => {
    const miner = await Miner.create(genesis, { rules, coinbase, keepBlocks: 2 });
    await miner.submit(submission(0, 1));
    await miner.seal();
    expect(miner.indexedTransactions).toBe(1);
    for (let i = 0; i < 3; i++) await miner.seal();
    expect(miner.indexedTransactions).toBe(0);
  });
});
