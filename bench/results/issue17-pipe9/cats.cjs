// Self time attributed to the innermost matching category on the stack. node cats.cjs file from to
const fs = require('fs');
const p = JSON.parse(fs.readFileSync(process.argv[2]));
const from = +process.argv[3], to = +process.argv[4];
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children || []) parent.set(c, n.id);
let t = p.startTime; const ts = p.timeDeltas.map((d) => (t += d));
const cats = [
  ['recovery', /^recoverSenders senderRecovery/],
  ['decodeTx', /^decodeWithSenders /],
  ['check(BatchGet answer)', /^check remoteState/],
  ['remember(cache)', /^remember remoteState/],
  ['lacking probe', /^lacking remoteState/],
  ['batch send/merge', /^send remoteState/],
  ['fetch (route/enqueue)', /^fetch remoteState/],
  ['batchGet grpc', /^batchGet shardedStorage/],
  ['speculate', /^speculate speculate/],
  ['admission accountRead', /^accountRead readBackend/],
  ['pool submitter', /^(send|submit|settle|pump) poolSubmitter/],
  ['submitQueue submit (bag,encode,call)', /^submit submitQueue/],
  ['submitQueue other', /submitQueue/],
  ['chain follow', /chainFollower|clientBlockOf|^add chain/],
  ['grpc server (SendTransactions)', /grpcServer|clientServer/],
  ['grpc/http2 io', /grpc-js|http2|stream_base|node:net/],
  ['GC', /^\(garbage collector\)/],
];
const name = (n) => { const c = n.callFrame; return `${c.functionName || '(anon)'} ${c.url.split('/').pop()}:${c.lineNumber + 1}`; };
const memo = new Map();
function catOf(id) {
  if (memo.has(id)) return memo.get(id);
  let x = id, r = 'other';
  outer: while (x !== undefined) { const nm = name(byId.get(x)); for (const [c, re] of cats) if (re.test(nm)) { r = c; break outer; } x = parent.get(x); }
  memo.set(id, r); return r;
}
const sum = new Map(); let busy = 0;
for (let i = 0; i < p.samples.length; i++) {
  const age = (p.endTime - ts[i]) / 1e6; if (age > from || age < to) continue;
  const n = byId.get(p.samples[i]); if (n.callFrame.functionName === '(idle)') continue;
  const d = p.timeDeltas[i + 1] ?? 1000; busy += d; const c = catOf(p.samples[i]); sum.set(c, (sum.get(c) || 0) + d);
}
console.log(`busy ${(busy / 1e6).toFixed(2)} s`);
for (const [c, d] of [...sum].sort((a, b) => b[1] - a[1])) console.log(`${(100 * d / busy).toFixed(1).padStart(5)} ${c}`);
if (process.argv[5]) { const cat = process.argv[5]; const fn = new Map();
for (let i = 0; i < p.samples.length; i++) { const age = (p.endTime - ts[i]) / 1e6; if (age > from || age < to) continue; const n = byId.get(p.samples[i]); if (n.callFrame.functionName === '(idle)') continue; if (catOf(p.samples[i]) !== cat) continue; const d = p.timeDeltas[i + 1] ?? 1000;
 // key: self fn + nearest 3 ancestors
 let x = parent.get(p.samples[i]); const st=[name(n)]; for (let k=0;k<+(process.argv[6]||2)&&x!==undefined;k++){st.push(name(byId.get(x))); x=parent.get(x);} const key=st.join(' < '); fn.set(key,(fn.get(key)||0)+d); }
for (const [k, d] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${(100 * d / busy).toFixed(2).padStart(6)} ${k}`); }
