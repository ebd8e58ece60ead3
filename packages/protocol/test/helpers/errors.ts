import { expect } from '@jest/globals';
import { ProtocolError, type ProtocolErrorCode } from '@monsoon/protocol';

/**
 * Asserts that `f` throws a ProtocolError of `code` about `field`, whose message says what was
 * expected and what was found; returns it.
 */
export function expectProtocolError(f: () => unknown, code: ProtocolErrorCode, field: string): ProtocolError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ProtocolError);
  const e = caught as ProtocolError;
  expect({ code: e.code, field: e.meta.field }).toEqual({ code, field });
  expect(e.message).toBe(`${code}: ${field}: expected ${e.meta.expected}, found ${e.meta.found}`);
  return e;
}
