/** Which EVM a BlockExecutor runs when none is asked for, and the fallback where revm is not built. */
import { afterEach, describe, expect, it } from '@jest/globals';
import { defaultEngine, engineFor, revmAvailable } from '@monsoon/execution';

const saved = process.env.MONSOON_EVM;
afterEach(() => {
  if (saved === undefined) delete process.env.MONSOON_EVM;
  else process.env.MONSOON_EVM = saved;
});

describe('engine choice', () => {
  it('is revm by default where it is built, @ethereumjs/evm with MONSOON_EVM=ethereumjs', () => {
    delete process.env.MONSOON_EVM;
    expect(defaultEngine()).toBe('revm');
    expect(engineFor(undefined, () => {})).toBe(revmAvailable() ? 'revm' : 'ethereumjs');
    process.env.MONSOON_EVM = 'revm';
    expect(defaultEngine()).toBe('revm');
    process.env.MONSOON_EVM = 'ethereumjs';
    expect(defaultEngine()).toBe('ethereumjs');
    expect(engineFor(undefined, () => {})).toBe('ethereumjs');
  });

  it('takes an explicit choice over the environment', () => {
    process.env.MONSOON_EVM = 'revm';
    expect(engineFor('ethereumjs', () => {})).toBe('ethereumjs');
    process.env.MONSOON_EVM = 'ethereumjs';
    expect(engineFor('revm', () => {})).toBe(revmAvailable() ? 'revm' : 'ethereumjs');
  });
});
