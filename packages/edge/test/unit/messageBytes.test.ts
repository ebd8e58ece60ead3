/**
 * withSharedEncoding: a streaming method's response is encoded once per message object however
 * many streams it is written to, and what each stream receives is that message; other methods
 * and the definition handed in are left as they were.
 */
import { credentials, makeGenericClientConstructor, status } from '@grpc/grpc-js';
import { describe, expect, it } from '@jest/globals';
import { GrpcServer, grpcStatusMapping, withSharedEncoding } from '@monsoon/edge';

interface Text {
  text: string;
}

/** A JSON service whose response encodings are counted. */
function countingService() {
  const encoded: Text[] = [];
  const method = (name: string, responseStream: boolean) => ({
    path: `/test.v1.FeedService/${name}`,
    requestStream: false,
    responseStream,
    requestSerialize: (v: Text) => Buffer.from(JSON.stringify(v)),
    requestDeserialize: (b: Buffer) => JSON.parse(b.toString()) as Text,
    responseSerialize: (v: Text) => {
      encoded.push(v);
      return Buffer.from(JSON.stringify(v));
    },
    responseDeserialize: (b: Buffer) => JSON.parse(b.toString()) as Text,
  });
  return { encoded, service: { feed: method('Feed', true), echo: method('Echo', false) } };
}

describe('withSharedEncoding', () => {
  it('encodes a message object once, and a new object again', () => {
    const { encoded, service } = countingService();
    const shared = withSharedEncoding(service, ['feed']);
    const m = { text: 'block #1' };
    const a = shared.feed.responseSerialize(m);
    const b = shared.feed.responseSerialize(m);
    expect(b).toBe(a);
    expect(JSON.parse(a.toString())).toEqual(m);
    expect(encoded).toEqual([m]);
    const n = { text: 'block #1' };
    expect(shared.feed.responseSerialize(n)).not.toBe(a);
    expect(encoded).toHaveLength(2);
    // Only the named methods, and the definition handed in is not changed.
    shared.echo.responseSerialize(m);
    shared.echo.responseSerialize(m);
    expect(encoded).toHaveLength(4);
    service.feed.responseSerialize(m);
    expect(encoded).toHaveLength(5);
    expect(shared.feed.path).toBe(service.feed.path);
  });

  it('every stream of a served method receives the message, encoded once', async () => {
    const { encoded, service } = countingService();
    const block = { text: 'block #7' };
    const server = await GrpcServer.create(
      { listen: '127.0.0.1:0' },
      { grpcStatusOf: grpcStatusMapping([]) },
      withSharedEncoding(service, ['feed']),
      {
        feed: (call: { write(t: Text): boolean; end(): void }) => {
          call.write(block);
          call.end();
        },
        echo: (_call: unknown, cb: (e: { code: status } | null) => void) =>
          cb({ code: status.UNIMPLEMENTED }),
      },
    );
    const Ctor = makeGenericClientConstructor(service, 'FeedService');
    const client = new Ctor(server.address(), credentials.createInsecure()) as unknown as {
      feed(r: Text): NodeJS.EventEmitter;
      close(): void;
    };
    try {
      const read = (): Promise<Text[]> =>
        new Promise<Text[]>((resolve, reject) => {
          const got: Text[] = [];
          const s = client.feed({ text: '' });
          s.on('data', (t: Text) => got.push(t));
          s.on('end', () => resolve(got));
          s.on('error', reject);
        });
      const [one, two, three] = await Promise.all([read(), read(), read()]);
      expect([one, two, three]).toEqual([[block], [block], [block]]);
      expect(encoded).toEqual([block]);
    } finally {
      client.close();
      await server.close();
    }
  });
});
