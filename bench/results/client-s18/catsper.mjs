// node catsper.mjs runDir...: KB per accepted tx by category (both clients summed), columns per run
import { readFileSync, readdirSync } from 'node:fs';
const markers = [
  ['exec(speculate run)', /^(execute blockExecutor|remote\.withState\.from speculate|run revmEngine)/],
  ['chain following', /^(clientBlockOf chain|\(anon\) chainFollower|headArrived clientEvents|add chain|index chain)/],
  ['batchGet decode', /^responseDeserialize storage/],
  ['proof check', /^check remoteState/],
  ['readAccounts', /^readAccounts remoteState/],
  ['withState', /^withState remoteState/],
  ['decodeWithSenders', /^decodeWithSenders readBackend/],
  ['submit response decode', /^responseDeserialize miner/],
  ['submit build', /^submit submitQueue/],
  ['batchGet send', /^send remoteState/],
  ['pool onHead', /^\(anon\) poolSubmitter.js:3[0-9]/],
  ['speculate other', /^speculate speculate/],
  ['submitQueue.send', /^send submitQueue/],
  ['poolSubmitter.send', /^send poolSubmitter/],
  ['poolSubmitter.submit', /^submit poolSubmitter/],
  ['clientServer', /^(run clientServer|fateOf clientServer|\(anon\) clientServer)/],
  ['admit', /^(admit client|\(anon\) client.js:2[0-9][0-9]|submitTransactions client)/],
];
const key = (f) => `${f.functionName || '(anon)'} ${f.url.split('/').slice(-1)}:${f.lineNumber}`;
const cols = [];
for (const d of process.argv.slice(2)) {
  const m = new Map(); let acc = 0;
  for (const f of readdirSync(d).filter((f) => f.startsWith('gc.'))) {
    const g = JSON.parse(readFileSync(`${d}/${f}`)); acc += g.accepted;
    const p = JSON.parse(readFileSync(`${d}/alloc.${f.slice(3, -5)}.heapprofile`));
    (function walk(n, stack) {
      const st = [...stack, key(n.callFrame)]; const sz = n.selfSize ?? 0;
      if (sz) { let cat = 'other'; outer: for (let i = st.length - 1; i >= 0; i--) for (const [c, re] of markers) if (re.test(st[i])) { cat = c; break outer; } m.set(cat, (m.get(cat) ?? 0) + sz); m.set('TOTAL', (m.get('TOTAL') ?? 0) + sz); }
      for (const c of n.children ?? []) walk(c, st);
    })(p.head, []);
  }
  cols.push({ d, m, acc });
}
const cats = ['TOTAL', ...markers.map((x) => x[0]), 'other'];
console.log('category'.padEnd(24) + cols.map((c) => c.d.split('/').pop().padStart(10)).join(''));
for (const c of cats) console.log(c.padEnd(24) + cols.map((x) => ((x.m.get(c) ?? 0) / 1024 / x.acc).toFixed(2).padStart(10)).join(''));
