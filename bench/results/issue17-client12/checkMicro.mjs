// (client12) RemoteState's check of BatchGet answers (private; called directly): 40 answers, each of
// 260 accounts of a 20,000-account state (a third asking for code) and the token with 60 of its slots,
// checked into a fresh RemoteState per round with a view at the root (as readAccounts leaves one);
// process CPU per answer. Run from a worktree's root: node bench/results/issue17-client12/checkMicro.mjs
// (env R: measured rounds, default 40). Add --trace-gc and count Scavenge lines for the GC figure.
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import * as client from '@monsoon/client';
import * as ex from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import * as protocol from '@monsoon/protocol';
import * as workload from '@monsoon/workload';
import { byteKey } from '@monsoon/dsm-tree';
const seed = new TextEncoder().encode('client5-micro');
const rules = { ...ex.defaultChainRules };
const accounts = await workload.AccountSet.create({ seed, count: 20_000, cacheDir: join(tmpdir(), 'client5-micro-accounts') });
const state = protocol.genesisState(protocol.parseGenesis(workload.buildGenesis(accounts, { chainId: rules.chainId })), { hash: keccak });
const stateRoot = state.root();
const blockHash = new Uint8Array(32).fill(0xbb);
const at = { blockHash, stateRoot };
// The token: the genesis account with storage.
const g = protocol.parseGenesis(workload.buildGenesis(accounts, { chainId: rules.chainId }));
const token = g.alloc.find((a) => (a.storage?.length ?? a.storage?.size ?? 0) > 0);
const tokenAddr = token.address;
const slotsAll = token.storage.map((s) => s[0]);
const addrs = Array.from({ length: 20000 }, (_, i) => accounts.address(i));
const answers = [];
for (let k = 0; k < 40; k++) {
  const qs = [];
  for (let i = 0; i < 260; i++) qs.push({ address: addrs[(k * 260 + i * 7) % addrs.length], slots: [], code: i % 3 === 0 });
  const slots = slotsAll.slice(k * 60, k * 60 + 60);
  qs.push({ address: tokenAddr, slots, code: true });
  const bag = state.proveAccounts(qs.map((q) => q.address));
  bag.push(...state.proveStorageMany(tokenAddr, slots));
  const results = qs.map((q) => { const a = state.getAccount(q.address); return { address: q.address, accountRlp: a && (state.accounts.get(keccak.keccak256(q.address))), slotValues: q.slots.map((s) => state.getStorage(q.address, s) ?? new Uint8Array(0)), code: (q.code && a && state.getCode(a.codeHash)) || new Uint8Array(0) }; });
  // One copy of each node, as a storage node's bag has it.
  const seen = new Set(); const nodes = [];
  for (const n of bag) { const h = Buffer.from(n).toString('hex'); if (!seen.has(h)) { seen.add(h); nodes.push(n); } }
  answers.push({ qs, res: { blockHash, number: 1n, results, bag: nodes } });
}
const replica = { address: 'x' };
const run = (rounds) => {
  for (let r = 0; r < rounds; r++) {
    const remote = new client.RemoteState({}, { compactLevels: 2, maxCachedNodes: 200_000 });
    remote.viewAt(byteKey(stateRoot));
    for (const { qs, res } of answers) remote.check(at, qs, res, replica);
  }
};
run(10);
const t0 = process.cpuUsage(); const R = Number(process.env.R ?? 40); run(R); const c = process.cpuUsage(t0);
console.log(`check µs per answer: ${((c.user + c.system) / (R * answers.length)).toFixed(1)}`);
