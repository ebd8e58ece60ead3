import { expect } from '@jest/globals';
import { StorageError, type StorageErrorCode } from '@monsoon/storage-node';

/** Asserts that `p` rejects with a StorageError of `code`, and returns it (for its meta). */
export async function expectStorageError(p: Promise<unknown>, code: StorageErrorCode): Promise<StorageError> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(StorageError);
  expect((caught as StorageError).code).toBe(code);
  return caught as StorageError;
}
