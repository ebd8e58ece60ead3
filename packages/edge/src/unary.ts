/** A generated gRPC client's unary method as a promise. */
import { type CallOptions, Metadata, type ServiceError } from '@grpc/grpc-js';

/**
 * A generated unary method, by its last overload (request, metadata, options, callback): the
 * one TypeScript infers from, so Req and Res come out typed.
 */
export type UnaryMethod<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  cb: (err: ServiceError | null, res: Res) => void,
) => unknown;

/**
 * `unary(client, client.getAccount, req)`: resolves with the response, rejects with the
 * ServiceError (its `code`, `details` and trailers).
 */
export function unary<Req, Res>(
  client: object,
  method: UnaryMethod<Req, Res>,
  req: Req,
  options: Partial<CallOptions> = {},
): Promise<Res> {
  return new Promise((resolve, reject) =>
    method.call(client, req, new Metadata(), options, (err, res) => (err ? reject(err) : resolve(res))),
  );
}
