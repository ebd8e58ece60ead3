// (client12) A storage node's BatchGet of what clients ask at admission for the workload's plain transfers
// (firstReads: sender, coinbase, recipient), with the recipient's code asked (CODE=1, as before) or not
// (CODE=0, as firstReads now asks for what can only be a plain transfer): 200 batches of 260 queries from a
// 20,000-account genesis, process CPU per batch. Run from a worktree's root:
//   CODE=1 node bench/results/issue17-client12/codeQueryMicro.mjs; CODE=0 node ...
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import * as ex from '@monsoon/execution';
import { atNumber, parseGenesis } from '@monsoon/protocol';
import { StorageNode } from '@monsoon/storage-node';
import * as workload from '@monsoon/workload';
const CODE = process.env.CODE !== '0';
const seed = new TextEncoder().encode('client5-micro');
const rules = { ...ex.defaultChainRules };
const common = ex.makeCommon(rules, ex.nativeCustomCrypto);
const accounts = await workload.AccountSet.create({ seed, count: 20_000, cacheDir: join(tmpdir(), 'client5-micro-accounts') });
const node = StorageNode.fromGenesis(parseGenesis(workload.buildGenesis(accounts, { chainId: rules.chainId })));
const gen = new workload.TrafficGenerator({ chainId: rules.chainId, seed }, { accounts });
const txs = gen.take(60_000).map((t) => ex.decodeSignedTx(t.raw, common)).filter((t) => t.data.length === 0);
const senders = ex.recoverSenders(txs);
const coinbase = new Uint8Array(20).fill(0xcb);
const batches = [];
for (let b = 0; b < 200; b++) {
  const queries = [];
  for (let i = b * 87; i < b * 87 + 87; i++) {
    const t = txs[i % txs.length];
    queries.push({ address: senders[i % txs.length], slots: [], code: false }, { address: coinbase, slots: [], code: false }, { address: t.to, slots: [], code: CODE });
  }
  batches.push({ at: atNumber(0n), queries, omitLevels: 0 });
}
for (const r of batches.slice(0, 50)) node.batchGet(r);
const t0 = process.cpuUsage();
const R = 5;
for (let k = 0; k < R; k++) for (const r of batches) node.batchGet(r);
const c = process.cpuUsage(t0);
console.log(`CODE=${CODE ? 1 : 0} storage µs per batch of 261: ${((c.user + c.system) / (R * batches.length)).toFixed(1)}`);
