/**
 * A miner's memory is bounded by its window (issue 15): blocks more than `keepBlocks` below the
 * head are forgotten, parent links into them included, so a long run holds a fixed number of
 * blocks (top layers, transactions, witnesses, receipts) however long the chain grows.
 */
import { describe, expect, it } from '@jest/globals';
import { defaultChainRules } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { type ChainBlock, Miner } from '@monsoon/miner';
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
    const sealed: ChainBlock[] = [miner.head];
    for (let i = 0; i < 10; i++) sealed.push((await miner.seal()).block);
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
});
