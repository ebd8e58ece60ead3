// node buckets.mjs <heapprofile>: self bytes bucketed by the nearest (leaf-most) frame matching a rule.
import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const rules = [
  ['cache.addNodes', /^addNodes .*nodeBag/],
  ['prove (views)', /^prove .*remoteState/],
  ['BatchGet decode', /^responseDeserialize .*storage\.js/],
  ['BatchGet request', /^batchGetRequestToProto|^send .*remoteState\.js/],
  ['chain follow', /chainFollower\.js|^clientBlockOf|logIndex|clientEvents/],
  ['Submit response', /^responseDeserialize .*miner\.js/],
  ['submit (bag, request)', /^submit .*submitQueue/],
  ['ERC20 withState', /^remote\.withState/],
  ['accountRead withState', /^withState .*remoteState/],
  ['readAccounts', /^readAccounts/],
  ['speculate', /^speculate/],
  ['txPool.add', /^add .*txPool/],
  ['waiterOf', /^waiterOf/],
  ['poolSubmitter.send', /^send .*poolSubmitter/],
  ['submitQueue.send', /^send .*submitQueue|^enqueue/],
  ['decodeWithSenders', /^decodeWithSenders/],
  ['client.submitTransactions', /client\.js|clientServer\.js/],
  ['grpc', /grpc|http2|stream/],
];
const by = new Map(); let all = 0;
function walk(n, stack) {
  const fr = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url}`;
  const st = [...stack, fr];
  const self = n.selfSize ?? 0;
  if (self > 0) {
    all += self;
    let b = 'other';
    outer: for (let i = st.length - 1; i >= 0; i--) for (const [name, re] of rules) if (re.test(st[i])) { b = name; break outer; }
    by.set(b, (by.get(b) ?? 0) + self);
  }
  for (const c of n.children ?? []) walk(c, st);
}
walk(p.head, []);
console.log(`total ${(all / 2 ** 20).toFixed(1)} MiB`);
for (const [k, v] of [...by].sort((a, b) => b[1] - a[1])) console.log(`${(100 * v / all).toFixed(1).padStart(5)}%  ${(v / 2 ** 20).toFixed(1).padStart(6)} MiB  ${k}`);
