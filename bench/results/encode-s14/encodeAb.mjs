// A BatchGet answer encoded the way ts-proto's gRPC serializers did (a fresh writer, two copies)
// and the way packages/protocol/src/encodeMessage.ts does (one writer per process, one copy),
// alternating, CPU µs per message. `node bench/results/encode-s14/encodeAb.mjs [accounts=300]`
// after `npm run build`.
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { BatchGetResponse } from '../../../packages/protocol/dist/generated/monsoon/storage/v1/storage.js';
import { randomBytes } from 'node:crypto';
const nQ = Number(process.argv[2] ?? 300);
const msg = { blockHash: randomBytes(32), number: 5n, results: [], bag: { nodes: [] } };
for (let i = 0; i < nQ; i++) msg.results.push({ address: randomBytes(20), accountRlp: randomBytes(80), slotValues: [], code: new Uint8Array(0) });
for (let i = 0; i < nQ * 4; i++) msg.bag.nodes.push(randomBytes(i % 3 === 0 ? 532 : 110));
const w = new BinaryWriter();
const old = () => Buffer.from(BatchGetResponse.encode(msg).finish());
const neu = () => { const b = BatchGetResponse.encode(msg, w).finish(); return Buffer.from(b.buffer, b.byteOffset, b.byteLength); };
if (!old().equals(neu())) throw new Error('differ');
console.log('bytes', old().length);
for (let r = 0; r < 4; r++) for (const [name, f] of [['old', old], ['new', neu]]) {
  const c0 = process.cpuUsage(); const n = 2000;
  for (let i = 0; i < n; i++) f();
  const c = process.cpuUsage(c0); console.log(name, ((c.user + c.system) / n).toFixed(1), 'us/msg');
}
