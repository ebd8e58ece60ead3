/**
 * The miner CLI and the chain's difficulty rule (issue 15): a genesis that sets no rule allows
 * no block without proof of work, so `--difficulty 0` (the default) is refused at start with
 * exit 2 and a line naming the rule; a genesis that says `minDifficulty: 0` starts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { genesisJson, killAll, runRoleToExit, startRole, tempDir } from '@monsoon/test-utils';
import { genesis } from '../helpers/minerProcess.js';

let root: { dir: string; remove: () => Promise<void> };

beforeAll(async () => {
  root = await tempDir('monsoon-miner-cli-');
});

afterAll(async () => {
  await killAll();
  await root.remove();
});

describe('miner CLI and the difficulty rule', () => {
  it('refuses --difficulty below the genesis rule (1 when the genesis sets none) with exit 2', async () => {
    const doc = genesisJson(genesis) as { config: Record<string, unknown> };
    const { monsoon: _, ...config } = doc.config;
    const file = join(root.dir, 'strict.json');
    await writeFile(file, JSON.stringify({ ...doc, config }));
    const r = await runRoleToExit('miner', ['--genesis', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^monsoon miner: BAD_ARGUMENT: --difficulty: expected at least 1, the genesis' difficulty rule \(config\.monsoon\.minDifficulty, 1 when absent\), found "0"\n$/,
    );
    const ok = await startRole('miner', ['--genesis', file, '--difficulty', '2']);
    expect(ok.address).toMatch(/^127\.0\.0\.1:\d+$/);
    await ok.proc.stop();
  });

  it('starts at difficulty 0 on a genesis that says minDifficulty 0', async () => {
    const file = join(root.dir, 'free.json');
    await writeFile(file, JSON.stringify(genesisJson(genesis)));
    const ok = await startRole('miner', ['--genesis', file]);
    expect((await ok.proc.stop()).code).toBe(0);
  });
});
