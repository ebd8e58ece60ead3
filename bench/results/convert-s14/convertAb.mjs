// The protocol converters a storage node runs on every block and BatchGet, before and after field
// paths were built only for refusals (checks.ts eachIn): ApplyBlockRequest from proto (a block's
// 3,000 account updates for one storage process) and a BatchGet answer of 300 accounts to proto,
// checked against its request. CPU µs per message, alternating.
//   node bench/results/convert-s14/convertAb.mjs <old protocol dist> <new protocol dist> (absolute paths; a copy of
//   packages/protocol/dist built before the change, kept beside it so its imports resolve)
import { randomBytes } from 'node:crypto';

const [oldDir, newDir] = process.argv.slice(2);
const load = async (d) => import(`${d}/index.js`);
const impls = [
  ['old', await load(oldDir)],
  ['new', await load(newDir)],
];

const accounts = Array.from({ length: 3000 }, (_, i) => ({
  address: randomBytes(20),
  deleted: false,
  nonce: BigInt(i),
  balance: randomBytes(9),
  code: new Uint8Array(0),
  clearStorage: false,
  storage: i % 6 === 0 ? [{ slot: randomBytes(32), value: randomBytes(32) }] : [],
}));
for (const a of accounts) if (a.balance[0] === 0) a.balance[0] = 1;
const apply = {
  headerRlp: randomBytes(500),
  shards: Array.from({ length: 8 }, (_, s) => ({ shard: s, accounts: accounts.filter((_, i) => i % 8 === s) })),
  expectedRoots: Array.from({ length: 16 }, (_, s) => ({ shard: s, root: randomBytes(32) })),
};
const queries = Array.from({ length: 300 }, () => ({ address: randomBytes(20), slots: [], code: false }));
const answer = {
  blockHash: randomBytes(32),
  number: 7n,
  results: queries.map((q) => ({ address: q.address, accountRlp: randomBytes(75), slotValues: [], code: new Uint8Array(0) })),
  bag: Array.from({ length: 1200 }, () => randomBytes(200)),
};
const request = { at: { kind: 'hash', hash: answer.blockHash }, queries, omitLevels: 0 };

for (let round = 0; round < 4; round++)
  for (const [name, p] of impls) {
    const n = 300;
    let c0 = process.cpuUsage();
    for (let i = 0; i < n; i++) p.applyBlockRequestFromProto(apply, { shardCount: 16 });
    let c = process.cpuUsage(c0);
    const a = (c.user + c.system) / n;
    c0 = process.cpuUsage();
    for (let i = 0; i < n; i++) p.batchGetResponseToProto(answer, request);
    c = process.cpuUsage(c0);
    const b = (c.user + c.system) / n;
    console.log(`${name}: ApplyBlockRequest from proto ${a.toFixed(0)} us, BatchGet answer to proto ${b.toFixed(0)} us`);
  }
