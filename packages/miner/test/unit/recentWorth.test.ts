/**
 * The miner's window of recent blocks' changed paths (what it revises an old witness with) by
 * blocks' worth of gas (`recentWorth`, the role's 4): a cadence of several small blocks an
 * interval keeps as much change as four full blocks held, not four small blocks' only. With 0
 * (the in-process default) four blocks, as before; at most 32 blocks however empty.
 */

import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, makeAccount, StateTree } from '@monsoon/dsm-tree';
import { defaultChainRules, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { Miner, type SealedBlock } from '@monsoon/miner';
import { TxStatus } from '@monsoon/protocol';
import { fundedGenesis } from '@monsoon/test-utils';
import { signedTransfer } from '../helpers/transfer.js';

// Four transfers fill a block: one is a quarter of a block's worth.
const rules = { ...defaultChainRules, chainId: 4343n, gasLimit: 21_000n * 4n };
const common = makeCommon(rules.chainId);
const N = 64;
const keys = Array.from({ length: N }, (_, i) => keccak.keccak256(Uint8Array.of(11, i)));
const addrs = keys.map((k) => privateToAddress(k));
const genesis = fundedGenesis(addrs, rules.chainId, rules.gasLimit);
const coinbase = new Uint8Array(20).fill(0xc1);

async function setup(recentWorth: number) {
  const m = await Miner.create(genesis, { rules, coinbase, retention: 2, recentWorth });
  const st = new StateTree();
  for (const a of genesis.alloc) st.putAccount(a.address, makeAccount({ balance: a.balance }));
  const nonces = new Array<bigint>(N).fill(0n);
  const tx = (from: number, to: number) =>
    signedTransfer(common, keys[from]!, nonces[from]!++, addrs[to]!, 1n);
  const apply = (s: SealedBlock) => {
    for (const u of s.shards.flatMap((x) => x.accounts)) {
      if (u.deleted) st.deleteAccount(u.address);
      else
        st.putAccount(
          u.address,
          makeAccount({ nonce: u.nonce, balance: u.balance, codeHash: EMPTY_CODE_HASH }),
        );
    }
  };
  /** A block of `from`'s self-transfers with a witness at the head (fresh). */
  const block = async (...from: number[]) => {
    const res = await m.submit({
      transactions: from.map((f) => tx(f, f)),
      bag: st.proveAccounts([...from.map((f) => addrs[f]!), coinbase]),
      prefetchedRoot: st.root(),
    });
    expect(res.results.map((r) => r.status)).toEqual(from.map(() => TxStatus.Accepted));
    const s = await m.seal();
    apply(s);
    return s;
  };
  /** `from`'s transfer with a witness from genesis: accepted (revised) or stale. */
  const withGenesisWitness = async (from: number, bag: Uint8Array[], root: Uint8Array) => {
    const r = await m.submit({ transactions: [tx(from, from)], bag, prefetchedRoot: root });
    if (r.results[0]!.status !== TxStatus.Accepted) nonces[from]!--;
    return r.results[0]!.status;
  };
  const root0 = st.root();
  const bagAt0 = (i: number) => st.proveAccounts([addrs[i]!, coinbase]);
  return { m, block, withGenesisWitness, root0, bagAt0 };
}

const A = 3;
const B = 5;
const C = 7;
const FILLER = 40;

describe("the miner's recent changes by blocks' worth", () => {
  it('with 0, a witness older than four blocks is stale (the old window)', async () => {
    const { block, withGenesisWitness, root0, bagAt0 } = await setup(0);
    const bagA = bagAt0(A);
    await block(A, B); // A and B change in block 1
    for (let i = 0; i < 6; i++) await block(FILLER + i);
    expect(await withGenesisWitness(A, bagA, root0)).toBe(TxStatus.Stale);
  });

  it("with 2, blocks are kept until the later ones hold two blocks' worth", async () => {
    const { block, withGenesisWitness, root0, bagAt0, m } = await setup(2);
    const [bagA, bagB, bagC] = [bagAt0(A), bagAt0(B), bagAt0(C)];
    await block(A, B, C); // block 1, three quarters of a block's worth: A, B and C change
    for (let i = 0; i < 5; i++) await block(FILLER + i); // blocks 2-6: 1.25 after block 1
    // Six blocks back (the old window forgot it at four): revised with block 1's paths.
    expect(await withGenesisWitness(A, bagA, root0)).toBe(TxStatus.Accepted);
    await m.seal(); // block 7 (A's transfer): 1.5
    await block(FILLER + 5); // block 8: 1.75
    expect(await withGenesisWitness(B, bagB, root0)).toBe(TxStatus.Accepted);
    await m.seal(); // block 9 (B's): 2.0 after block 1, which is forgotten
    expect(await withGenesisWitness(C, bagC, root0)).toBe(TxStatus.Stale);
  });

  it('keeps at most 32 blocks, however little they hold', async () => {
    const { block, withGenesisWitness, root0, bagAt0, m } = await setup(2);
    const bagA = bagAt0(A);
    await block(A);
    for (let i = 0; i < 31; i++) await m.seal(); // empty: block 1 is the 32nd newest
    expect(await withGenesisWitness(A, bagA, root0)).toBe(TxStatus.Accepted);
    const { m: m2, block: block2, withGenesisWitness: w2, root0: r2, bagAt0: bag2 } = await setup(2);
    const bagA2 = bag2(A);
    await block2(A);
    for (let i = 0; i < 32; i++) await m2.seal(); // block 1 is the 33rd newest: forgotten
    expect(await w2(A, bagA2, r2)).toBe(TxStatus.Stale);
  });
});
