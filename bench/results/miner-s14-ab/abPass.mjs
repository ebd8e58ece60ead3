// In-process A/B of the miner's execution-only pass (what `bench miner --pass` times): two builds
// loaded side by side (their own @monsoon/* copies), passes alternating ABBA over the same planned
// blocks (`--plans` file written by `bench miner --pass <kind> --plans <file>`), process CPU per
// transaction of the timed phases (decode, bag check, execute, seal; recovery left out).
// usage: node --expose-gc abPass.mjs <rootA> <rootB> <plans.json> [rounds] [accounts]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
const [rootA, rootB, plansFile, roundsArg = '6', accountsArg = '100000'] = process.argv.slice(2);
const side = async (root) => {
  const req = createRequire(`${root}/package.json`);
  const imp = (m) => import(req.resolve(m));
  return {
    root,
    miner: await imp('@monsoon/miner'),
    ex: await imp('@monsoon/execution'),
    dsm: await imp('@monsoon/dsm-tree'),
    proto: await imp('@monsoon/protocol'),
    work: await imp('@monsoon/workload'),
    keccak: (await imp('@monsoon/keccak')).keccak,
  };
};
const A = await side(rootA);
const B = await side(rootB);
const bytes = (s) => new Uint8Array(Buffer.from(s, 'base64'));
const blocks = JSON.parse(readFileSync(plansFile, 'utf8')).map((b) =>
  b.map((s) => ({ transactions: s.transactions.map(bytes), bag: s.bag.map(bytes), prefetchedRoot: bytes(s.prefetchedRoot) })),
);
const n = blocks.reduce((m, b) => m + b.reduce((k, s) => k + s.transactions.length, 0), 0);
// As bench/miner.ts: the same accounts, genesis and rules.
const rules = { ...A.ex.defaultChainRules, gasLimit: 2000n * 100_000n };
const accounts = await A.work.AccountSet.create({ seed: new TextEncoder().encode('monsoon-bench'), count: Number(accountsArg), cacheDir: join(tmpdir(), 'monsoon-bench-accounts') });
const genesisJson = A.work.buildGenesis(accounts, { chainId: rules.chainId });
process.env.MONSOON_EVM_BATCH = '1';
async function pass(S) {
  const genesis = S.proto.parseGenesis(genesisJson);
  const common = S.ex.makeCommon(rules.chainId, S.ex.nativeCustomCrypto);
  const miner = await S.miner.Miner.create(genesis, { rules, retention: 2, maxBlockTransactions: 2000, fastTransfers: true, engine: 'revm' });
  let cpu = 0;
  const since = (c0) => { const c = process.cpuUsage(c0); return c.user + c.system; };
  for (const block of blocks) {
    for (const s of block) {
      let c0 = process.cpuUsage();
      const txs = s.transactions.map((raw) => S.ex.decodeSignedTx(raw, common));
      const bag = new S.dsm.NodeBag({ hash: S.keccak });
      bag.addNodes(s.bag);
      cpu += since(c0);
      const senders = S.ex.recoverSenders(txs);
      const items = txs.map((tx, i) => ({ tx, sender: senders[i] }));
      c0 = process.cpuUsage();
      const res = await miner.submitPrepared({ bag, prefetchedRoot: s.prefetchedRoot, items });
      cpu += since(c0);
      if (res.results.some((r) => r.status !== S.proto.TxStatus.Accepted)) throw new Error('refused');
    }
    const c0 = process.cpuUsage();
    await miner.seal();
    cpu += since(c0);
  }
  return { cpu: cpu / n, root: Buffer.from(miner.head.header.stateRoot).toString('hex').slice(0, 8) };
}
await pass(A); await pass(B); // JIT warm-up
const out = { A: [], B: [] };
for (let r = 0; r < Number(roundsArg); r++) {
  for (const name of r % 2 === 0 ? ['A', 'B'] : ['B', 'A']) {
    globalThis.gc?.();
    const s = await pass(name === 'A' ? A : B);
    out[name].push(s.cpu);
    console.log(`${name} ${s.cpu.toFixed(1)} µs CPU/tx root ${s.root} load ${loadavg()[0].toFixed(1)}`);
  }
}
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
for (const k of ['A', 'B']) console.log(`${k} min ${Math.min(...out[k]).toFixed(1)} median ${med(out[k]).toFixed(1)} (${k === 'A' ? rootA : rootB})`);
