/**
 * A miner's memory is bounded by its window (issue 15): blocks more than `keepBlocks` below the
 * head are forgotten, parent links into them included, so a long run holds a fixed number of
 * blocks (top layers, transactions, witnesses, receipts) however long the chain grows; and
 * however full the blocks are, their transaction and witness bytes are bounded by `keepBytes`
 * (never fewer than KEEP_BLOCKS_FLOOR blocks).
 */
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { makeAccount, StateTree } from '@monsoon/dsm-tree';
import { defaultChainRules, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { type ChainBlock, KEEP_BLOCKS_FLOOR, Miner } from '@monsoon/miner';
import { TxStatus } from '@monsoon/protocol';
import { fundedGenesis } from '@monsoon/test-utils';

const rules = { ...defaultChainRules, chainId: 4243n };
const addrs = Array.from({ length: 8 }, (_, i) => keccak.keccak256(Uint8Array.of(3, i)).subarray(12));
const genesis = fundedGenesis(addrs, rules.chainId, rules.gasLimit);

function ancestry(b: ChainBlock): bigint[] {
  const out: bigint[] = [];
  for (let c: ChainBlock | undefined = b; c !== undefined; c = c.parent) out.push(c.header.number);
  return out;
}

describe('the miner keeps a window of blocks', () => {
  it('forgets blocks (and parent links) more than keepBlocks below the head', async () => {
    const miner = await Miner.create(genesis, { rules, keepBlocks: 4 });
    const forgotten: ChainBlock[] = [];
    miner.onForgotten = (blocks) => forgotten.push(...blocks);
    const sealed: ChainBlock[] = [miner.head];
    for (let i = 0; i < 10; i++) sealed.push((await miner.seal()).block);
    // The archive hears of each forgotten block once, oldest first.
    expect(forgotten).toEqual(sealed.slice(0, 6));
    expect(miner.head.header.number).toBe(10n);
    expect(ancestry(miner.head)).toEqual([10n, 9n, 8n, 7n, 6n]);
    expect(miner.blockCount).toBe(5);
    for (const b of sealed) {
      const held = miner.block(b.hash) !== undefined;
      expect([b.header.number, held]).toEqual([b.header.number, b.header.number >= 6n]);
    }
  });

  it('holds every block while the chain is shorter than the window', async () => {
    const miner = await Miner.create(genesis, { rules, keepBlocks: 16 });
    for (let i = 0; i < 6; i++) await miner.seal();
    expect(ancestry(miner.head)).toEqual([6n, 5n, 4n, 3n, 2n, 1n, 0n]);
    expect(miner.blockCount).toBe(7);
  });

  it('holds at most keepBytes of transactions and witnesses, down to KEEP_BLOCKS_FLOOR blocks', async () => {
    // Senders and recipients each alone under their second-level node, so a witness proved at
    // genesis stays valid (the miner revises it) however many blocks changed other paths.
    const byBucket = new Map<number, Uint8Array>();
    for (let i = 0; byBucket.size < 255 && i < 20_000; i++) {
      const key = keccak.keccak256(Uint8Array.of(5, i >> 8, i & 255));
      const bucket = keccak.keccak256(privateToAddress(key))[0]!;
      if (!byBucket.has(bucket)) byBucket.set(bucket, key);
    }
    const keys = [...byBucket.values()];
    const txAddrs = keys.map((k) => privateToAddress(k));
    const coinbase = txAddrs.pop()!;
    const g = fundedGenesis(txAddrs, rules.chainId, rules.gasLimit);
    const common = makeCommon(rules.chainId);
    const st = new StateTree();
    for (const a of g.alloc) st.putAccount(a.address, makeAccount({ balance: a.balance }));
    const blocks = 100;
    const run = async (keepBytes: number) => {
      const miner = await Miner.create(g, { rules, coinbase, keepBytes });
      const forgotten: bigint[] = [];
      miner.onForgotten = (bs) => forgotten.push(...bs.map((b) => b.header.number));
      for (let n = 0; n < blocks; n++) {
        const [from, to] = [2 * n, 2 * n + 1];
        const tx = createFeeMarket1559Tx(
          { nonce: 0n, to: txAddrs[to], value: 1n, gasLimit: 21_000n, maxFeePerGas: 3_000_000_000n },
          { common },
        ).sign(keys[from]!);
        const res = await miner.submit({
          transactions: [tx.serialize()],
          bag: st.proveAccounts([txAddrs[from]!, txAddrs[to]!]),
          prefetchedRoot: st.root(),
        });
        expect(res.results.map((r) => r.status)).toEqual([TxStatus.Accepted]);
        await miner.seal();
      }
      return { miner, forgotten };
    };
    // Every block carries a transaction and its witness: a byte is over the cap.
    const { miner: capped, forgotten } = await run(1);
    // Forgotten as the cap binds, each once, oldest first.
    expect(forgotten).toEqual(Array.from({ length: blocks + 1 - KEEP_BLOCKS_FLOOR }, (_, i) => BigInt(i)));
    expect(capped.head.header.number).toBe(BigInt(blocks));
    expect(capped.blockCount).toBe(KEEP_BLOCKS_FLOOR);
    expect(capped.indexedTransactions).toBe(KEEP_BLOCKS_FLOOR);
    expect(ancestry(capped.head)).toHaveLength(KEEP_BLOCKS_FLOOR);
    // With room for all of them, the block window (128) binds: all 100 and genesis.
    const { miner: roomy } = await run(64 * 1024 * 1024);
    expect(roomy.blockCount).toBe(blocks + 1);
  });
});
