import { expect } from '@jest/globals';
import { DsmError, type DsmErrorCode } from '@monsoon/dsm-tree';
import { thrown } from '@monsoon/test-utils';

export { thrown };

/** Asserts that `fn` throws a DsmError with `code`, and returns it (for its meta). */
export function expectDsmError(fn: () => unknown, code: DsmErrorCode): DsmError {
  const e = thrown(fn);
  expect(e).toBeInstanceOf(DsmError);
  expect((e as DsmError).code).toBe(code);
  return e as DsmError;
}
