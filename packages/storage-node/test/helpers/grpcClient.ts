/** The generated StorageService client, promisified, and assertions on refused calls. */
import { type CallOptions, credentials, Metadata, type ServiceError, type status } from '@grpc/grpc-js';
import { expect } from '@jest/globals';
import { StorageServiceClient } from '@monsoon/protocol';

export function storageClient(address: string): StorageServiceClient {
  return new StorageServiceClient(address, credentials.createInsecure(), {
    'grpc.max_receive_message_length': 256 * 1024 * 1024,
  });
}

/**
 * A generated unary method, by its last overload (request, metadata, options, callback): the
 * one TypeScript infers from, so Req and Res come out typed.
 */
type Method<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  cb: (err: ServiceError | null, res: Res) => void,
) => unknown;

/** A unary call as a promise. */
export function unary<Req, Res>(
  client: StorageServiceClient,
  method: Method<Req, Res>,
  req: Req,
): Promise<Res> {
  return new Promise((resolve, reject) =>
    method.call(client, req, new Metadata(), {}, (err, res) => (err ? reject(err) : resolve(res))),
  );
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
  const v = e.metadata?.get('monsoon-error-code')[0];
  return v === undefined ? undefined : String(v);
}
