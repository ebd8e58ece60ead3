import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';

/**
 * `service` with the named streaming methods' responses encoded once per message object, not once
 * per stream: a miner writes the same block message to every SubscribeBlocks stream (clients and
 * load drivers), and grpc-js serializes whatever it is handed on each write. The cache is keyed by
 * the message object (a WeakMap, so it lives as long as the message does): a message must not be
 * changed after it was first written.
 */
export function withSharedEncoding<S extends ServiceDefinition>(
  service: S,
  methods: readonly (keyof S)[],
): S {
  const out: Record<string, MethodDefinition<unknown, object>> = { ...service };
  for (const name of methods) {
    const m = service[name] as MethodDefinition<unknown, object>;
    const encode = m.responseSerialize;
    const encoded = new WeakMap<object, Buffer>();
    out[name as string] = {
      ...m,
      responseSerialize: (value: object): Buffer => {
        let bytes = encoded.get(value);
        if (bytes === undefined) {
          bytes = encode(value);
          encoded.set(value, bytes);
        }
        return bytes;
      },
    };
  }
  return out as unknown as S;
}

/** What a request message was decoded from, by the decoded object (see withReceivedBytes). */
const received = new WeakMap<object, Uint8Array>();

/**
 * `service` with the named methods' requests remembered as they came (receivedBytes): a storage
 * node logs an ApplyBlockRequest as its protobuf bytes, which it would otherwise encode again
 * from the message grpc-js just decoded from those very bytes. The bytes are copied out of the
 * frame they arrived in, so what keeps them keeps only them.
 */
export function withReceivedBytes<S extends ServiceDefinition>(service: S, methods: readonly (keyof S)[]): S {
  const out: Record<string, MethodDefinition<object, unknown>> = { ...service };
  for (const name of methods) {
    const m = service[name] as MethodDefinition<object, unknown>;
    const decode = m.requestDeserialize;
    out[name as string] = {
      ...m,
      requestDeserialize: (bytes: Buffer): object => {
        const value = decode(bytes);
        received.set(value, new Uint8Array(bytes));
        return value;
      },
    };
  }
  return out as unknown as S;
}

/** The bytes `message` was decoded from, when its method was served withReceivedBytes. */
export function receivedBytes(message: object): Uint8Array | undefined {
  return received.get(message);
}
