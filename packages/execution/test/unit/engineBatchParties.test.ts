/**
 * The parties of a revm batch (every sender and recipient, handed to the engine before its
 * first call, see RevmEngine.runBatch) when the bag lacks a node on an account's path: that
 * account is noted unresolvable, not absent, so the transaction that needs it ends
 * MISSING_NODE exactly as it does one call per transaction and as @ethereumjs/evm ends it,
 * and the transactions around it run in the batch over the state the ones before them left.
 */
import { createFeeMarket1559Tx, type TypedTransaction } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, makeAccount, NodeBag, StateTree } from '@monsoon/dsm-tree';
import { defaultChainRules, makeCommon, revmAvailable } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { runMinerItems, skipRevmWhereUnbuilt } from './engines.js';
import { gapBlockEnv } from './witnessFixtures.js';

const rules = defaultChainRules;
const common = makeCommon(rules);
const env = gapBlockEnv;
/** 48 funded accounts: enough that most paths end below branches the bag leaves as stubs. */
const KEYS = Array.from({ length: 48 }, (_, i) => keccak.keccak256(Uint8Array.of(0xc0, i)));
const ADDRS = KEYS.map((k) => privateToAddress(k));
/** Proven in the bag: the first four accounts (and the coinbase); the rest are not. */
const PROVEN = 4;

function partialState(): StateTree {
  const full = new StateTree();
  for (const a of ADDRS)
    full.putAccount(a, makeAccount({ nonce: 0n, balance: 10n ** 20n, codeHash: EMPTY_CODE_HASH }));
  const bag = new NodeBag();
  bag.addNodes(full.proveAccounts([...ADDRS.slice(0, PROVEN), env.coinbase]));
  return StateTree.fromRootHash(full.root(), { source: bag });
}

/** The first unproven account whose read misses a node (its path leaves the proven ones'). */
function unprovenIndex(): number {
  const state = partialState();
  for (let i = PROVEN; i < ADDRS.length; i++) {
    try {
      state.getAccount(ADDRS[i]!);
    } catch {
      return i;
    }
  }
  throw new Error('every account was readable from the bag');
}

function tx(key: Uint8Array, nonce: bigint, to: Uint8Array, value: bigint): TypedTransaction {
  return createFeeMarket1559Tx(
    { nonce, to, value, gasLimit: 100_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n },
    { common },
  ).sign(key);
}

/** Proven senders paying proven recipients, one paying the unproven account `u`, one from it. */
function block(u: number): { tx: TypedTransaction; sender: Uint8Array }[] {
  const [a, b, c, d] = ADDRS as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  return [
    { tx: tx(KEYS[0]!, 0n, b, 5n), sender: a },
    { tx: tx(KEYS[1]!, 0n, ADDRS[u]!, 6n), sender: b },
    { tx: tx(KEYS[2]!, 0n, d, 7n), sender: c },
    { tx: tx(KEYS[u]!, 0n, a, 8n), sender: ADDRS[u]! },
    { tx: tx(KEYS[3]!, 0n, a, 9n), sender: d },
    { tx: tx(KEYS[0]!, 1n, c, 10n), sender: a },
  ];
}

const run = (u: number, batch: boolean, engine: 'revm' | 'ethereumjs' = 'revm') =>
  runMinerItems(partialState(), block(u), { env, rules, common, batch, engine });

skipRevmWhereUnbuilt('a batch party the bag cannot resolve');
const describeRevm = revmAvailable() ? describe : describe.skip;

describeRevm('a batch party the bag cannot resolve', () => {
  it('ends its transactions MISSING_NODE as single calls and @ethereumjs/evm do; the rest run in the batch', async () => {
    const u = unprovenIndex();
    const reference = await run(u, false, 'ethereumjs');
    expect(reference.outcomes[1]).toMatch(/^missing MISSING_NODE/);
    expect(reference.outcomes[3]).toMatch(/^missing MISSING_NODE/);
    expect(reference.outcomes.filter((o) => o.startsWith('1 '))).toHaveLength(4);
    const one = await run(u, false);
    expect(one.outcomes).toEqual(reference.outcomes);
    expect(one.root).toBe(reference.root);
    const batch = await run(u, true);
    expect(batch.outcomes).toEqual(reference.outcomes);
    expect(batch.root).toBe(reference.root);
    expect(batch.batched).toBe(4);
  });
});
