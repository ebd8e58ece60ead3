import { createRequire } from 'node:module';
const require = createRequire(new URL('../../../packages/client/package.json', import.meta.url));
const { AccountSet, TrafficGenerator } = await import(new URL('../../../packages/workload/dist/index.js', import.meta.url).href);
const ex = await import(new URL('../../../packages/execution/dist/index.js', import.meta.url).href);
const secp = require('secp256k1');
const N = 2000;
const accounts = await AccountSet.create({ seed: new TextEncoder().encode('m17'), count: 500, eager: true, workers: 0 });
const gen = new TrafficGenerator({ chainId: 1337n }, { accounts });
const common = ex.makeCommon(1337n);
const txs = gen.take(N);
const pubs = new Uint8Array(64 * N);
for (let i = 0; i < N; i++) pubs.set(secp.publicKeyCreate(accounts.privateKey(txs[i].from), false).subarray(1), 64 * i);
const signed = txs.map((t) => ex.decodeSignedTx(t.raw, common));
console.log('backend', ex.secp256k1Backend());
for (const size of (process.env.SIZES ?? "5,10,20,50,100").split(",").map(Number)) {
  for (const withKeys of [false, true, false, true]) {
    const t0 = process.cpuUsage();
    let n = 0;
    for (let rep = 0; rep < 3; rep++)
      for (let i = 0; i + size <= N; i += size) {
        const batch = txs.slice(i, i + size).map((t) => ex.decodeSignedTx(t.raw, common));
        ex.recoverSenders(batch, withKeys ? pubs.subarray(64 * i, 64 * (i + size)) : undefined);
        n += size;
      }
    const u = process.cpuUsage(t0);
    console.log(size, withKeys ? 'keys' : 'recover', ((u.user + u.system) / n).toFixed(1), 'us/tx');
  }
}
