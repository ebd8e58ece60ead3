// (client14) What a client's node cache and per-root reads cost the garbage collector: RemoteState's
// check of BatchGet answers (private; called directly) at 8 state roots in turn (each a view, as
// readAccounts leaves one; 6 kept), 40 answers of 260 accounts of a 20,000-account state a root,
// into one RemoteState whose cache (maxCachedNodes 40,000) turns its generations as a client's does.
// Prints process CPU per answer, and the scavenges, mark-compacts and their ms over the measured passes.
// Run from a worktree's root: node --max-semi-space-size=64 bench/results/issue17-client14/cacheMicro.mjs
// (env P: measured passes, default 12).
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as client from '@monsoon/client';
import { byteKey } from '@monsoon/dsm-tree';
import * as ex from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import * as protocol from '@monsoon/protocol';
import * as workload from '@monsoon/workload';
import { countGc } from './gcCounter.mjs';

const seed = new TextEncoder().encode('client5-micro');
const rules = { ...ex.defaultChainRules };
const accounts = await workload.AccountSet.create({ seed, count: 20_000, cacheDir: join(tmpdir(), 'client5-micro-accounts') });
const genesis = protocol.parseGenesis(workload.buildGenesis(accounts, { chainId: rules.chainId }));
const addrs = Array.from({ length: 20_000 }, (_, i) => accounts.address(i));
const ROOTS = 8;
const roots = [];
for (let j = 0; j < ROOTS; j++) {
  const state = protocol.genesisState(genesis, { hash: keccak });
  // Each root differs from the others in 64 accounts' balances (as blocks do).
  for (let i = 0; i < 64; i++) {
    const a = addrs[(j * 997 + i * 131) % addrs.length];
    const acc = state.getAccount(a);
    state.putAccount(a, { ...acc, balance: acc.balance + BigInt(j + 1) });
  }
  const stateRoot = state.root();
  const blockHash = new Uint8Array(32).fill(j + 1);
  const at = { blockHash, stateRoot };
  const answers = [];
  for (let k = 0; k < 40; k++) {
    const qs = [];
    for (let i = 0; i < 260; i++) qs.push({ address: addrs[(j * 5_000 + k * 260 + i * 7) % addrs.length], slots: [], code: false });
    const bag = state.proveAccounts(qs.map((q) => q.address));
    const results = qs.map((q) => ({ address: q.address, accountRlp: state.accounts.get(keccak.keccak256(q.address)), slotValues: [], code: new Uint8Array(0) }));
    const seen = new Set();
    const nodes = [];
    for (const n of bag) {
      const h = Buffer.from(n).toString('latin1');
      if (!seen.has(h)) {
        seen.add(h);
        nodes.push(n);
      }
    }
    // One message's bytes: a decoded answer's nodes are views into it.
    const packed = new Uint8Array(nodes.reduce((t, n) => t + n.length, 0));
    const offsets = [0];
    for (const n of nodes) {
      packed.set(n, offsets.at(-1));
      offsets.push(offsets.at(-1) + n.length);
    }
    answers.push({ qs, packed, offsets, results });
  }
  roots.push({ at, answers });
}
const replica = { address: 'x' };
const remote = new client.RemoteState({}, { compactLevels: 2, maxCachedNodes: 40_000 });
const pass = () => {
  for (const { at, answers } of roots) {
    remote.viewAt(byteKey(at.stateRoot));
    // Every answer as a fresh decode gives it: a new message, its nodes views into it.
    for (const { qs, packed, offsets, results } of answers) {
      const msg = packed.slice();
      const bag = new Array(offsets.length - 1);
      for (let i = 0; i < bag.length; i++) bag[i] = msg.subarray(offsets[i], offsets[i + 1]);
      const res = { blockHash: at.blockHash, number: 1n, results, bag };
      remote.check(at, qs, res, replica);
    }
  }
};
for (let i = 0; i < 3; i++) pass();
const gc = countGc();
const P = Number(process.env.P ?? 12);
const t0 = process.cpuUsage();
for (let i = 0; i < P; i++) pass();
const c = process.cpuUsage(t0);
const gcs = await gc.done();
const n = P * ROOTS * 40;
console.log(
  `check µs per answer ${((c.user + c.system) / n).toFixed(1)}; ${gcs}; cached ${remote.cachedNodes}`,
);
