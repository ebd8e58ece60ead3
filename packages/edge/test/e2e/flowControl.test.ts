/**
 * The roles' HTTP/2 windows, seen from the other end of a real connection on 127.0.0.1: a
 * GrpcServer advertises the wide stream window in its SETTINGS and opens its connection window
 * to it; a grpc-js channel made with channelOptions() does the same towards a plain HTTP/2
 * server, where a channel without them stays at HTTP/2's 64 KiB.
 */
import { type ClientHttp2Session, connect, createServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { describe, expect, it } from '@jest/globals';
import { channelOptions, FLOW_CONTROL_WINDOW, GrpcServer, grpcStatusMapping } from '@monsoon/edge';
import { until } from '@monsoon/test-utils';

const DEFAULT_WINDOW = 65_535;

const ser = (v: unknown) => Buffer.from(JSON.stringify(v));
const de = (b: Buffer) => JSON.parse(b.toString()) as { text: string };
const EchoService = {
  echo: {
    path: '/test.v1.EchoService/Echo',
    requestStream: false,
    responseStream: false,
    requestSerialize: ser,
    requestDeserialize: de,
    responseSerialize: ser,
    responseDeserialize: de,
  },
} as const;

describe('flow-control windows', () => {
  it('a GrpcServer advertises the wide stream window and opens its connection window', async () => {
    const server = await GrpcServer.create(
      { listen: '127.0.0.1:0' },
      { grpcStatusOf: grpcStatusMapping([]) },
      EchoService,
      {
        echo: {
          decode: (r: { text: string }) => r,
          run: (r: { text: string }) => r,
          encode: (r: { text: string }) => r,
        },
      },
    );
    let session: ClientHttp2Session | undefined;
    try {
      session = connect(`http://127.0.0.1:${server.port}`);
      const settings = await new Promise<{ initialWindowSize?: number }>((resolve, reject) => {
        session!.once('remoteSettings', resolve);
        session!.once('error', reject);
      });
      expect(settings.initialWindowSize).toBe(FLOW_CONTROL_WINDOW);
      // The connection window comes as a WINDOW_UPDATE after the SETTINGS.
      await until(() => session!.state.remoteWindowSize! >= FLOW_CONTROL_WINDOW, {
        what: 'connection window',
        timeoutMs: 10_000,
      });
      expect(session.state.remoteWindowSize).toBe(FLOW_CONTROL_WINDOW);
    } finally {
      session?.close();
      await server.close();
    }
  });

  it('a channel with channelOptions() advertises the wide window; one without stays at 64 KiB', async () => {
    const seen: { initialWindowSize: number | undefined; connectionWindow: () => number }[] = [];
    const http2 = createServer();
    const sessions: ServerHttp2Session[] = [];
    http2.on('session', (s: ServerHttp2Session) => {
      sessions.push(s);
      s.once('remoteSettings', (r) =>
        seen.push({
          initialWindowSize: r.initialWindowSize,
          connectionWindow: () => s.state.remoteWindowSize!,
        }),
      );
    });
    await new Promise<void>((resolve) => http2.listen(0, '127.0.0.1', resolve));
    const address = `127.0.0.1:${(http2.address() as AddressInfo).port}`;
    const Echo = makeGenericClientConstructor(EchoService, 'EchoService');
    const ready = (c: InstanceType<typeof Echo>) =>
      new Promise<void>((resolve, reject) =>
        c.waitForReady(Date.now() + 10_000, (e) => (e ? reject(e) : resolve())),
      );
    const wide = new Echo(address, credentials.createInsecure(), channelOptions());
    const plain = new Echo(address, credentials.createInsecure());
    try {
      await ready(wide);
      await until(() => seen.length === 1 && seen[0]!.connectionWindow() >= FLOW_CONTROL_WINDOW, {
        what: 'wide channel',
        timeoutMs: 10_000,
      });
      expect(seen[0]!.initialWindowSize).toBe(FLOW_CONTROL_WINDOW);
      await ready(plain);
      await until(() => seen.length === 2, { what: 'plain channel', timeoutMs: 10_000 });
      expect(seen[1]!.initialWindowSize).toBe(DEFAULT_WINDOW);
      expect(seen[1]!.connectionWindow()).toBe(DEFAULT_WINDOW);
    } finally {
      wide.close();
      plain.close();
      for (const s of sessions) s.destroy();
      await new Promise((resolve) => http2.close(resolve));
    }
  });
});
