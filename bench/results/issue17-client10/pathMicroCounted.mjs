// issue17-pipe8's pathMicro.mjs with counters: withState calls, readAccounts calls and undefined
// answers, BatchGet calls, queries fetched (printed as a second line at exit).
// Run in the tree to measure: node bench/results/issue17-client10/pathMicroCounted.mjs
// Measured (05:03, load 6.2–6.9): main withState 25,672, BatchGet 126, queries 38,808;
// this branch withState 4,028, readAccounts 23,658 (2,014 undefined: the ERC-20 admissions),
// BatchGet 176–193, queries 42,475–42,494.
import { RemoteState, ShardedStorage } from '@monsoon/client';

const K = { withState: 0, readUndef: 0, readCalls: 0, batchGet: 0, fetchQ: 0 };
const ws = RemoteState.prototype.withState;
RemoteState.prototype.withState = function (...a) {
  K.withState++;
  return ws.apply(this, a);
};
const ra = RemoteState.prototype.readAccounts;
if (ra !== undefined)
  RemoteState.prototype.readAccounts = async function (...a) {
    K.readCalls++;
    const r = await ra.apply(this, a);
    if (r === undefined) K.readUndef++;
    return r;
  };
const f = RemoteState.prototype.fetch;
RemoteState.prototype.fetch = function (at, qs) {
  K.fetchQ += qs.length;
  return f.call(this, at, qs);
};
const bg = ShardedStorage.prototype.batchGet;
ShardedStorage.prototype.batchGet = function (...a) {
  K.batchGet++;
  return bg.apply(this, a);
};
process.on('exit', () => console.log(JSON.stringify({ K })));
await import('../issue17-pipe8/pathMicro.mjs');
