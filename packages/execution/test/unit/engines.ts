/**
 * The execution engines a differential test runs with: both where the revm addon is built;
 * where it is not, the revm cases are skipped with the reason printed (never passed silently).
 */
import type { TypedTransaction } from '@ethereumjs/tx';
import { it } from '@jest/globals';
import { type StateTree, toHex } from '@monsoon/dsm-tree';
import { evmUnavailable } from '@monsoon/evm';
import {
  type BlockEnv,
  BlockExecutor,
  type ChainRules,
  defaultChainRules,
  type EngineName,
  makeCommon,
  revmAvailable,
  type TxOutcome,
} from '@monsoon/execution';

/** The chain and block the executor tests run in. */
export const rules = { ...defaultChainRules, chainId: 7777n };
export const common = makeCommon(rules.chainId);
export const env: BlockEnv = {
  number: 1n,
  timestamp: 1_700_000_012n,
  coinbase: new Uint8Array(20).fill(0xcb),
  gasLimit: 30_000_000n,
};

/** The engines to run: ethereumjs always, revm where it is built. */
export const ENGINES: readonly EngineName[] = revmAvailable() ? ['ethereumjs', 'revm'] : ['ethereumjs'];

let told = false;

/**
 * Where revm is not built, a skipped test that names why (and one warning per file), so a run
 * without cargo shows what it did not test.
 */
export function skipRevmWhereUnbuilt(what: string): void {
  if (revmAvailable()) return;
  if (!told) {
    told = true;
    console.warn(`revm cases skipped: ${evmUnavailable()}`);
  }
  it.skip(`[revm] ${what} — skipped: ${evmUnavailable()}`, () => {});
}

/** An outcome as the batch tests compare them: the receipt's status and gas, or the error. */
export const showOutcome = (o: TxOutcome): string =>
  o.status === 'included'
    ? `${o.receipt.status} ${o.receipt.gasUsed} ${o.receipt.cumulativeGasUsed}`
    : `${o.status} ${o.error.code} ${o.error.message}`;

/** Where and how runMinerItems runs a block. */
export interface MinerRun {
  env: BlockEnv;
  rules: ChainRules;
  common: ReturnType<typeof makeCommon>;
  /** revm batches (executeBatch) or one call per transaction. */
  batch: boolean;
  engine: EngineName;
}

/**
 * `items` run on a miner's executor (no access recording) over `state`: the outcomes as
 * showOutcome shows them, the state root after the block, and how many ran inside revm batches.
 */
export async function runMinerItems(
  state: StateTree,
  items: readonly { tx: TypedTransaction; sender: Uint8Array }[],
  run: MinerRun,
): Promise<{ outcomes: string[]; root: string; batched: number }> {
  const { env: blockEnv, rules: chainRules, common: c, batch, engine } = run;
  const ex = await BlockExecutor.create(state, blockEnv, chainRules, {
    engine,
    common: c,
    recordAccesses: false,
    batch,
  });
  const outcomes: TxOutcome[] = [];
  if (batch) outcomes.push(...(await ex.executeBatch(items)));
  else for (const { tx, sender } of items) outcomes.push(await ex.execute(tx, sender));
  const batched = ex.batchedTransactions;
  const done = await ex.finish();
  return { outcomes: outcomes.map(showOutcome), root: toHex(done.stateRoot), batched };
}
