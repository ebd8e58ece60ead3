/**
 * The genesis a cluster generates: its accounts, its difficulty rule and its block gas limit come
 * from the topology (a chain's capacity per block is the operator's choice, Ethereum's 30M unless
 * the topology says otherwise).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateGenesis } from '@monsoon/cli';
import { tempDir } from '@monsoon/test-utils';

let root: { dir: string; remove: () => Promise<void> };
beforeAll(async () => {
  root = await tempDir('monsoon-cluster-genesis-');
});
afterAll(async () => {
  await root.remove();
});

describe('generateGenesis', () => {
  it("writes the topology's block gas limit and difficulty rule; Ethereum's 30M when none is given", async () => {
    const cacheDir = join(root.dir, 'cache');
    const big = await generateGenesis(join(root.dir, 'big.json'), {
      seed: 'monsoon',
      count: 3,
      cacheDir,
      minDifficulty: 7n,
      gasLimit: 150_000_000n,
    });
    const doc = JSON.parse(await readFile(big.file, 'utf8'));
    expect(BigInt(doc.gasLimit)).toBe(150_000_000n);
    expect(doc.config.monsoon.minDifficulty).toBe(7);
    expect(Object.keys(doc.alloc).length).toBeGreaterThanOrEqual(3);

    const plain = await generateGenesis(join(root.dir, 'plain.json'), {
      seed: 'monsoon',
      count: 3,
      cacheDir,
    });
    expect(BigInt(JSON.parse(await readFile(plain.file, 'utf8')).gasLimit)).toBe(30_000_000n);
  });
});
