// Per client heap profile: sampled MiB total, chain-following MiB (chain.js frames, ∝ chain txs), ratio, readAccounts-incl share.
import { readFileSync, readdirSync } from 'node:fs';
for (const dir of process.argv.slice(2)) {
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.heapprofile'))) {
    const p = JSON.parse(readFileSync(`${dir}/${f}`));
    let total = 0, chain = 0, ra = 0, spec = 0;
    (function walk(n, inChain, inRa, inSpec) {
      const cf = n.callFrame;
      const u = cf.url;
      const c = inChain || (u.includes('/client/dist/chain.js'));
      const r = inRa || (u.includes('/client/dist/remoteState.js') && cf.functionName === 'readAccounts');
      const s = inSpec || (u.includes('/client/dist/speculate.js') && cf.functionName === 'speculate');
      const sz = n.selfSize ?? 0;
      total += sz; if (c) chain += sz; if (r) ra += sz; if (s) spec += sz;
      for (const k of n.children ?? []) walk(k, c, r, s);
    })(p.head, false, false, false);
    const M = 2 ** 20;
    console.log(`${dir.split('/').pop()} ${f} total ${(total / M).toFixed(0)} MiB chain ${(chain / M).toFixed(1)} MiB total/chain ${(total / chain).toFixed(2)} readAccounts ${(100 * ra / total).toFixed(1)}% speculate ${(100 * spec / total).toFixed(1)}%`);
  }
}
