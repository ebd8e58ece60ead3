/**
 * The execution engines a differential test runs with: both where the revm addon is built;
 * where it is not, the revm cases are skipped with the reason printed (never passed silently).
 */
import { it } from '@jest/globals';
import { evmUnavailable } from '@monsoon/evm';
import {
  type BlockEnv,
  defaultChainRules,
  type EngineName,
  makeCommon,
  revmAvailable,
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
