/**
 * The chain's difficulty rule (issue 15): a storage node refuses a block below the genesis'
 * `minDifficulty` (1 when the genesis sets none: no block without proof of work) before it
 * logs or applies anything, and takes one that meets it with a valid proof of work.
 */
import { describe, expect, it } from '@jest/globals';
import { StorageErrorCode, StorageNode } from '@monsoon/storage-node';
import { makeGenesis, RefChain } from '../helpers/chain.js';
import { expectStorageError } from '../helpers/errors.js';

describe('the difficulty rule at a storage node', () => {
  const workFree = makeGenesis(31, 50);
  const strict = { ...workFree, minDifficulty: undefined };
  const chain = new RefChain(workFree, 16);
  const parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };

  it('refuses a block without work when the genesis sets no rule; takes one with work', async () => {
    const node = StorageNode.fromGenesis(strict);
    const free = chain.block(parent, 1, 5);
    await expectStorageError(node.applyBlock(free.req), StorageErrorCode.BadBlock);
    expect(node.head.header.number).toBe(0n);
    const worked = chain.block(parent, 1, 5, { difficulty: 64n });
    await node.applyBlock(worked.req);
    expect(node.head.header.number).toBe(1n);
  });

  it('takes a block without work when the genesis says minDifficulty 0', async () => {
    const node = StorageNode.fromGenesis(workFree);
    await node.applyBlock(chain.block(parent, 2, 5).req);
    expect(node.head.header.number).toBe(1n);
  });

  it('refuses a block below a higher rule', async () => {
    const node = StorageNode.fromGenesis({ ...workFree, minDifficulty: 100n });
    await expectStorageError(
      node.applyBlock(chain.block(parent, 3, 5, { difficulty: 64n }).req),
      StorageErrorCode.BadBlock,
    );
  });
});
