/**
 * The shared gRPC server on 127.0.0.1:0 with a small JSON-serialized service: each unary method
 * decodes, runs and encodes; a throw in decode or run gets its error's status (and the error code
 * trailer), one in encode is INTERNAL; internal failures and (when asked) refusals are logged;
 * every call is observed; streaming handlers pass through; close() cuts off what outlives its
 * deadline.
 */
import {
  type Client,
  credentials,
  type handleServerStreamingCall,
  type handleUnaryCall,
  Metadata,
  makeGenericClientConstructor,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  ERROR_CODE_TRAILER,
  GrpcServer,
  grpcStatusMapping,
  type Logger,
  type MethodTable,
  type RequestMetrics,
  unaryRpc,
} from '@monsoon/edge';
import { rejection } from '@monsoon/test-utils';
import { CodedError } from '@monsoon/util';

interface Text {
  text: string;
}

/** A JSON method definition (the generated ones use protobuf; grpc-js takes any serializer). */
function method(name: string, responseStream: boolean) {
  const ser = (v: unknown) => Buffer.from(JSON.stringify(v));
  const de = (b: Buffer) => JSON.parse(b.toString()) as Text;
  return {
    path: `/test.v1.EchoService/${name}`,
    requestStream: false,
    responseStream,
    requestSerialize: ser,
    requestDeserialize: de,
    responseSerialize: ser,
    responseDeserialize: de,
  } as const;
}

const EchoService = {
  echo: method('Echo', false),
  apply: method('Apply', false),
  repeat: method('Repeat', true),
};

interface EchoServiceServer {
  [name: string]: handleUnaryCall<Text, Text> | handleServerStreamingCall<Text, Text>;
  echo: handleUnaryCall<Text, Text>;
  apply: handleUnaryCall<Text, Text>;
  repeat: handleServerStreamingCall<Text, Text>;
}

class WordError extends CodedError<'EMPTY' | 'SHOUTED'> {}

const grpcStatusOf = grpcStatusMapping([
  {
    is: (e): e is WordError => e instanceof WordError,
    codes: { EMPTY: status.INVALID_ARGUMENT, SHOUTED: status.FAILED_PRECONDITION },
  },
]);

/** A logger that keeps what it is told. */
function recordingLogger(): Logger & {
  lines: { level: string; msg: string; meta: Record<string, unknown> }[];
} {
  const lines: { level: string; msg: string; meta: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (msg: string, meta: Record<string, unknown> = {}) => {
      lines.push({ level, msg, meta });
    };
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Never settles: a call that is still running when the server closes. */
const forever = new Promise<never>(() => {});
/** Called when a `hang` call reaches its handler. */
let hangReached: () => void = () => {};

function methods(): MethodTable<EchoServiceServer> {
  return {
    echo: unaryRpc({
      decode: (r: Text) => {
        if (r.text === '') throw new WordError('EMPTY', 'text: expected a word, found nothing');
        return r.text;
      },
      run: (word: string) => {
        if (word === 'hang') {
          hangReached();
          return forever;
        }
        if (word === 'boom') throw new RangeError('the handler broke');
        if (word === word.toUpperCase()) throw new WordError('SHOUTED', `${word}: expected lower case`);
        return word.length;
      },
      encode: (n: number, word: string) => {
        if (word === 'badanswer') throw new WordError('EMPTY', 'a coded error while encoding');
        return { text: `${word}:${n}` };
      },
    }),
    apply: unaryRpc({
      decode: (r: Text) => r.text,
      run: (word: string) => {
        throw new WordError('SHOUTED', `${word}: refused`);
      },
      encode: (_: never) => ({ text: '' }),
      logRefusals: true,
    }),
    repeat: (call) => {
      call.write({ text: call.request.text });
      call.write({ text: call.request.text });
      call.end();
    },
  };
}

type EchoClient = Client & Record<string, (...args: unknown[]) => unknown>;
const EchoClientCtor = makeGenericClientConstructor(EchoService, 'EchoService');

function call(client: EchoClient, name: 'echo' | 'apply', text: string): Promise<Text> {
  return new Promise((resolve, reject) =>
    client[name]!({ text }, new Metadata(), {}, (e: ServiceError | null, r: Text) =>
      e ? reject(e) : resolve(r),
    ),
  );
}

async function refusal(p: Promise<unknown>): Promise<{ code: status; details: string; trailer: unknown[] }> {
  const e = await rejection<ServiceError>(p);
  return { code: e.code, details: e.details, trailer: e.metadata.get(ERROR_CODE_TRAILER) };
}

let server: GrpcServer | undefined;
let client: EchoClient | undefined;

afterEach(async () => {
  client?.close();
  await server?.close();
  server = client = undefined;
});

async function start(shutdownTimeoutMs = 5_000) {
  const log = recordingLogger();
  const observed: [string, string][] = [];
  const metrics: RequestMetrics = { observeRequest: (m, code) => void observed.push([m, code]) };
  server = await GrpcServer.create<EchoServiceServer>(
    { listen: '127.0.0.1:0', shutdownTimeoutMs },
    { grpcStatusOf, logger: log, metrics },
    EchoService,
    methods(),
  );
  client = new EchoClientCtor(server.address(), credentials.createInsecure()) as unknown as EchoClient;
  return { log, observed, server, client };
}

describe('GrpcServer', () => {
  it('binds the port asked for 0, and answers decode → run → encode', async () => {
    const { server, client, observed, log } = await start();
    expect(server.port).toBeGreaterThan(0);
    expect(server.address()).toBe(`127.0.0.1:${server.port}`);
    expect(await call(client, 'echo', 'monsoon')).toEqual({ text: 'monsoon:7' });
    expect(observed).toEqual([['Echo', 'OK']]);
    expect(log.lines).toEqual([]);
  });

  it("a throw in decode or run gets the error's status and code trailer; refusals are not logged unless asked", async () => {
    const { client, observed, log } = await start();
    expect(await refusal(call(client, 'echo', ''))).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'EMPTY: text: expected a word, found nothing',
      trailer: ['EMPTY'],
    });
    expect(await refusal(call(client, 'echo', 'LOUD'))).toEqual({
      code: status.FAILED_PRECONDITION,
      details: 'SHOUTED: LOUD: expected lower case',
      trailer: ['SHOUTED'],
    });
    expect(log.lines).toEqual([]);
    expect(await refusal(call(client, 'apply', 'x'))).toMatchObject({ code: status.FAILED_PRECONDITION });
    expect(log.lines).toEqual([
      {
        level: 'warn',
        msg: 'call refused',
        meta: { method: 'Apply', code: 'FAILED_PRECONDITION', error: 'SHOUTED: x: refused' },
      },
    ]);
    expect(observed).toEqual([
      ['Echo', 'INVALID_ARGUMENT'],
      ['Echo', 'FAILED_PRECONDITION'],
      ['Apply', 'FAILED_PRECONDITION'],
    ]);
  });

  it('an unexpected error in run, and any error in encode, is INTERNAL and logged for the operator', async () => {
    const { client, log } = await start();
    expect(await refusal(call(client, 'echo', 'boom'))).toEqual({
      code: status.INTERNAL,
      details: 'internal error: the handler broke',
      trailer: [],
    });
    // A coded error the mapping knows is still ours when encoding throws it.
    expect(await refusal(call(client, 'echo', 'badanswer'))).toEqual({
      code: status.INTERNAL,
      details: 'EMPTY: a coded error while encoding',
      trailer: ['EMPTY'],
    });
    expect(log.lines.map((l) => [l.level, l.msg, l.meta.method, l.meta.error])).toEqual([
      ['error', 'call failed', 'Echo', 'the handler broke'],
      ['error', 'call failed', 'Echo', 'EMPTY: a coded error while encoding'],
    ]);
    expect(log.lines[0]!.meta.stack).toEqual(expect.stringContaining('RangeError: the handler broke'));
  });

  it('serves a streaming method from the same table as a plain handler', async () => {
    const { client } = await start();
    const got: Text[] = [];
    await new Promise<void>((resolve, reject) => {
      const s = client.repeat!({ text: 'again' }) as NodeJS.EventEmitter;
      s.on('data', (t: Text) => got.push(t));
      s.on('end', resolve);
      s.on('error', reject);
    });
    expect(got).toEqual([{ text: 'again' }, { text: 'again' }]);
  });

  it('close() lets finished calls be, and cuts off a call that outlives the deadline', async () => {
    const { server, client, log } = await start(200);
    const reached = new Promise<void>((resolve) => {
      hangReached = resolve;
    });
    const hung = refusal(call(client, 'echo', 'hang'));
    await reached;
    await server.close();
    expect((await hung).code).not.toBe(status.OK);
    expect(log.lines).toContainEqual({
      level: 'warn',
      msg: 'shutdown timed out; cutting off calls in progress',
      meta: { ms: 200 },
    });
    expect(server.close()).toBe(server.close());
  });

  it('refuses a malformed listen address or option', async () => {
    await expect(
      GrpcServer.create<EchoServiceServer>({ listen: 'nowhere' }, { grpcStatusOf }, EchoService, methods()),
    ).rejects.toThrow(/^BAD_ARGUMENT: listen address "nowhere": expected host:port/);
    await expect(
      GrpcServer.create<EchoServiceServer>(
        { listen: '127.0.0.1:0', maxReceiveMessageBytes: 0 },
        { grpcStatusOf },
        EchoService,
        methods(),
      ),
    ).rejects.toThrow('BAD_ARGUMENT: maxReceiveMessageBytes: expected a positive integer, found 0');
  });
});
