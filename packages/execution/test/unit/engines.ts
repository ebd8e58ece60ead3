/**
 * The execution engines a differential test runs with: both where the revm addon is built;
 * where it is not, the revm cases are skipped with the reason printed (never passed silently).
 */
import { it } from '@jest/globals';
import { evmUnavailable } from '@monsoon/evm';
import { type EngineName, revmAvailable } from '@monsoon/execution';

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
