// A gRPC answer of `--bytes` to a client whose event loop is busy `--busy` ms of every `--period`,
// with Node's 64 KiB windows and with channelOptions()' 16 MiB: call latency, alternating.
//   node bench/results/flow-control-s15/windowMicro.mjs [--bytes 150000] [--busy 30] [--period 50] [--calls 200]
// The server runs in a child process with an idle loop (as a storage node mostly is).
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { channelOptions, GrpcServer, grpcStatusMapping } from '@monsoon/edge';

const { values: a } = parseArgs({
  options: {
    bytes: { type: 'string', default: '150000' },
    busy: { type: 'string', default: '30' },
    period: { type: 'string', default: '50' },
    calls: { type: 'string', default: '200' },
    serve: { type: 'string' },
  },
});
const ser = (v) => (Buffer.isBuffer(v) ? v : Buffer.from(JSON.stringify(v)));
const Service = {
  get: {
    path: '/micro.v1.Bytes/Get',
    requestStream: false,
    responseStream: false,
    requestSerialize: ser,
    requestDeserialize: (b) => JSON.parse(b.toString()),
    responseSerialize: (v) => v,
    responseDeserialize: (b) => b,
  },
};

if (a.serve !== undefined) {
  // Child: a GrpcServer (16 MiB windows, as every role's) answering `bytes`.
  const body = Buffer.alloc(Number(a.bytes), 7);
  const server = await GrpcServer.create(
    { listen: '127.0.0.1:0' },
    { grpcStatusOf: grpcStatusMapping([]) },
    Service,
    { get: { decode: (r) => r, run: () => body, encode: (b) => b } },
  );
  process.send({ port: server.port });
} else {
  const children = [];
  const start = async () => {
    const c = fork(new URL(import.meta.url), ['--serve', 'wide', '--bytes', a.bytes], { stdio: 'inherit' });
    children.push(c);
    return new Promise((resolve) => c.once('message', (m) => resolve(m.port)));
  };
  const port = await start();
  const Client = makeGenericClientConstructor(Service, 'Bytes');
  const sides = {
    narrow: new Client(`127.0.0.1:${port}`, credentials.createInsecure(), {
      'grpc.max_receive_message_length': 256 * 1024 * 1024,
    }),
    wide: new Client(`127.0.0.1:${port}`, credentials.createInsecure(), channelOptions()),
  };
  // The client's loop: busy `busy` ms of every `period` (synchronous work, as a client's batches are).
  const busy = Number(a.busy);
  const period = Number(a.period);
  const timer = setInterval(() => {
    const until = performance.now() + busy;
    while (performance.now() < until);
  }, period - busy);
  const call = (c) =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      c.get({}, (e, r) => (e ? reject(e) : resolve([performance.now() - t0, r.length])));
    });
  const ms = { narrow: [], wide: [] };
  for (let i = 0; i < Number(a.calls); i++) {
    for (const side of i % 2 ? ['wide', 'narrow'] : ['narrow', 'wide']) {
      const [t, n] = await call(sides[side]);
      if (n !== Number(a.bytes)) throw new Error(`got ${n} bytes`);
      ms[side].push(t);
    }
  }
  clearInterval(timer);
  const q = (xs, p) => [...xs].sort((x, y) => x - y)[Math.floor(p * (xs.length - 1))];
  for (const side of ['narrow', 'wide']) {
    const xs = ms[side].slice(10);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    console.log(
      `${side === 'narrow' ? 'client 64 KiB' : 'client 16 MiB'} (server 16 MiB): ${a.bytes} B answer, loop busy ${busy} of every ${period} ms: mean ${mean.toFixed(1)} ms, p50 ${q(xs, 0.5).toFixed(1)}, p99 ${q(xs, 0.99).toFixed(1)} (${xs.length} calls)`,
    );
  }
  for (const c of Object.values(sides)) c.close();
  for (const c of children) c.kill();
}
