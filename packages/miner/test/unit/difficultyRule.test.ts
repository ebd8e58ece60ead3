/**
 * The chain's difficulty rule (issue 15) at the miner: it refuses to start sealing below the
 * rule, and refuses a peer's block below it, even one whose (work-free) proof of work is valid.
 */
import { describe, expect, it } from '@jest/globals';
import { defaultChainRules, ExecutionErrorCode } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { Miner } from '@monsoon/miner';
import { fundedGenesis, rejection } from '@monsoon/test-utils';

const addrs = Array.from({ length: 4 }, (_, i) => keccak.keccak256(Uint8Array.of(5, i)).subarray(12));
const genesis = fundedGenesis(addrs, 4244n, defaultChainRules.gasLimit);
const free = { ...defaultChainRules, chainId: 4244n, minDifficulty: 0n };
const strict = { ...free, minDifficulty: 8n };

describe('the difficulty rule at a miner', () => {
  it('will not seal below the rule', async () => {
    const e = await rejection<Error>(Miner.create(genesis, { rules: strict, difficulty: 0n }));
    expect(e).toMatchObject({ code: ExecutionErrorCode.BadBlock });
    expect(String((e as Error).message)).toMatch(/difficulty 0: the chain's rule asks at least 8/);
  });

  it("refuses a peer's block below the rule; takes one that meets it", async () => {
    const sealer = await Miner.create(genesis, { rules: free, difficulty: 0n });
    const receiver = await Miner.create(genesis, { rules: strict, difficulty: 8n });
    const weak = await sealer.seal();
    const e = await rejection<Error>(receiver.receiveBlock(weak.peer));
    expect(String((e as Error).message)).toMatch(/difficulty 0 below the chain's minimum 8/);
    const strong = await (await Miner.create(genesis, { rules: strict, difficulty: 8n })).seal();
    expect(await receiver.receiveBlock(strong.peer)).toBeDefined();
    expect(receiver.head.header.number).toBe(1n);
  });
});
