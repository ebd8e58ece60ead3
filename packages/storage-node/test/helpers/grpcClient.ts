/** The generated StorageService client, promisified, and assertions on refused calls. */
import { credentials, type ServiceError, type status } from '@grpc/grpc-js';
import { expect } from '@jest/globals';
import { ERROR_CODE_TRAILER } from '@monsoon/edge';
import { StorageServiceClient } from '@monsoon/protocol';

export { unary } from '@monsoon/edge';

export function storageClient(address: string): StorageServiceClient {
  return new StorageServiceClient(address, credentials.createInsecure(), {
    'grpc.max_receive_message_length': 256 * 1024 * 1024,
  });
}

/** Asserts that `p` fails with `code` and, when given, details equal to / matching `details`. */
export async function expectStatus(
  p: Promise<unknown>,
  code: status,
  details?: string | RegExp,
): Promise<ServiceError> {
  const err = await p.then(
    () => undefined,
    (e: ServiceError) => e,
  );
  expect(err).toBeDefined();
  expect({ code: err!.code, details: err!.details }).toEqual({
    code,
    details:
      details === undefined
        ? expect.any(String)
        : typeof details === 'string'
          ? details
          : expect.stringMatching(details),
  });
  return err!;
}

/** The `monsoon-error-code` trailer of a refused call. */
export function errorCodeOf(e: ServiceError): string | undefined {
  const v = e.metadata?.get(ERROR_CODE_TRAILER)[0];
  return v === undefined ? undefined : String(v);
}
