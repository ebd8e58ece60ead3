// A BatchGet answer received as grpc-js hands it (a Buffer) decoded and converted to the domain
// type, the way the generated deserializers did before (decode the Buffer: every bytes field a
// Buffer, each viewed again by the converters) and after (decode a plain view of it: plain fields,
// used as they are). CPU µs per message, alternating. `node bench/results/decode-s14/decodeAb.mjs
// [accounts=300]` after `npm run build`.
import { randomBytes } from 'node:crypto';
import { batchGetResponseFromProto } from '../../../packages/protocol/dist/index.js';
import { BatchGetResponse } from '../../../packages/protocol/dist/generated/monsoon/storage/v1/storage.js';

const n = Number(process.argv[2] ?? 300);
const msg = {
  blockHash: randomBytes(32),
  number: 5n,
  results: Array.from({ length: n }, () => ({ address: randomBytes(20), accountRlp: randomBytes(80), slotValues: [], code: new Uint8Array(0) })),
  bag: { nodes: Array.from({ length: n * 4 }, (_, i) => randomBytes(i % 3 === 0 ? 532 : 110)) },
};
const frame = Buffer.from(BatchGetResponse.encode(msg).finish());
const old = () => batchGetResponseFromProto(BatchGetResponse.decode(frame));
const neu = () => batchGetResponseFromProto(BatchGetResponse.decode(new Uint8Array(frame.buffer, frame.byteOffset, frame.length)));
for (let r = 0; r < 4; r++)
  for (const [name, f] of [
    ['old', old],
    ['new', neu],
  ]) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < 2000; i++) f();
    const c = process.cpuUsage(c0);
    console.log(name, ((c.user + c.system) / 2000).toFixed(1), 'us/msg');
  }
