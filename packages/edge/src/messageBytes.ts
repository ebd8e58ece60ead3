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
