// CPU per execute() that ends MISSING (a witness lacking the sender's path), two builds loaded in
// one process, alternating. usage: node missingMicro.mjs <rootOld> <rootNew>
import { createRequire } from 'node:module';
const [rootOld, rootNew] = process.argv.slice(2);
const sides = { old: rootOld, new: rootNew };
const load = async (root) => {
  const req = createRequire(`${root}/packages/miner/package.json`);
  const imp = (m) => import(req.resolve(m));
  return { ex: await imp('@monsoon/execution'), dsm: await imp('@monsoon/dsm-tree'), tx: await imp('@ethereumjs/tx') };
};
const L = { old: await load(sides.old), new: await load(sides.new) };
const key = new Uint8Array(32).fill(7);
async function setup(m) {
  const { ex, dsm, tx } = m;
  const rules = { ...ex.defaultChainRules };
  const common = ex.makeCommon(rules);
  const full = new dsm.StateTree();
  const senders = [];
  for (let i = 0; i < 2000; i++) { const a = new Uint8Array(20); a[0] = 1; a[1] = i >> 8; a[2] = i & 255; full.putAccount(a, dsm.makeAccount({ balance: 10n ** 20n })); senders.push(a); }
  const partial = dsm.StateTree.fromRootHash(full.root(), { resolver: () => undefined });
  const env = { number: 1n, timestamp: 1n, coinbase: new Uint8Array(20).fill(9), gasLimit: 30_000_000n };
  const e = await ex.BlockExecutor.create(partial, env, rules, { common, engine: 'revm', recordAccesses: false });
  const t = tx.createLegacyTx({ nonce: 0n, to: new Uint8Array(20).fill(3), value: 1n, gasLimit: 21000n, gasPrice: 10n ** 10n }, { common }).sign(key);
  const st = ex.decodeSignedTx(t.serialize(), common);
  return { e, st, senders };
}
const S = { old: await setup(L.old), new: await setup(L.new) };
for (let r = 0; r < 6; r++) for (const side of r % 2 ? ['new', 'old'] : ['old', 'new']) {
  const { e, st, senders } = S[side];
  const c0 = process.cpuUsage(); let missing = 0;
  for (let i = 0; i < 4000; i++) { const o = await e.execute(st, senders[i % 2000]); if (o.status === 'missing') missing++; }
  const c = process.cpuUsage(c0);
  console.log(side, ((c.user + c.system) / 4000).toFixed(2), 'us CPU per missing execute', missing);
}
