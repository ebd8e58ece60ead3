// Micro A/B of the two path walkers' callers, base (packages/dsm-tree/dist/ab-base: the branch
// start's dist copied aside) against this tree's dist, alternating in one process:
//  - walkPath: a client's per-root read, every node by hash from a Map (as RemoteState.cached);
//  - readPacked: a tree whose root is a stub over a NodeCache (the tiered store's arena) doing,
//    per 1,000-key batch, get of each key and one proveMany (what a BatchGet does below a stub).
// Figures: CPU µs per key walk (process.cpuUsage), median over rounds; allocation per round.
//   node --expose-gc bench/results/tiered14-walker/walkerMicro.mjs [accounts 200000] [rounds 12]
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ONLY = process.argv[4]; // 'walk' | 'packed': one caller only
const VARIANT = process.argv[5]; // another dsm-tree build's dist dir for B (default: this tree's)
const here = resolve(import.meta.dirname, '../../..');
const load = (p) => import(pathToFileURL(resolve(here, p)).href);
const A = await load('packages/dsm-tree/dist/ab-base/index.js');
const B = await load(VARIANT ? `${VARIANT}/index.js` : 'packages/dsm-tree/dist/index.js');
const { NodeCache } = await load('packages/storage-node/dist/index.js');

const N = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 12);
const BATCH = 1000;

// An account-like trie: 32-byte hashed keys, ~70-byte values.
const tree = new B.DsmTree();
const keys = [];
for (let i = 0; i < N; i++) {
  const k = randomBytes(32);
  keys.push(k);
  tree.put(k, randomBytes(60 + (i % 20)));
}
const root = tree.root();
const rootBin = Buffer.from(root).toString('latin1');
const nodes = new Map();
const cache = new NodeCache();
tree.forEachNode((h, enc) => {
  nodes.set(h, Buffer.from(enc, 'latin1'));
  cache.set(h, enc, false);
});
const absent = Array.from({ length: N / 10 }, () => randomBytes(32));
const probeKeys = [...keys.slice(0, 50_000), ...absent.slice(0, 5_000)];
console.log(`trie of ${N} keys, ${nodes.size} nodes`);

// Sanity: both builds answer the same (the differential tests are the real check).
for (const k of probeKeys.slice(0, 2000)) {
  const a = A.walkPath(rootBin, k, (h) => nodes.get(h));
  const b = B.walkPath(rootBin, k, (h) => nodes.get(h));
  if (Buffer.compare(Buffer.from(a.value ?? []), Buffer.from(b.value ?? [])) !== 0 || a.hashes.length !== b.hashes.length)
    throw new Error('walkPath answers differ');
}

function walkRound(M) {
  let n = 0;
  const getBin = (h) => nodes.get(h);
  for (const k of probeKeys) if (M.walkPath(rootBin, k, getBin) !== undefined) n++;
  return probeKeys.length;
}

function packedTree(M) {
  const src = {
    readAt: 0,
    getBin: (h) => cache.get(h),
    readBin(hashIn, at) {
      const s = cache.getAt(hashIn, at);
      this.readAt = cache.foundAt;
      return s;
    },
  };
  return M.DsmTree.fromRootHash(root, { source: src });
}
const packedA = packedTree(A);
const packedB = packedTree(B);
if (ONLY !== 'walk') {
  const ks = probeKeys.slice(0, BATCH);
  const pa = packedA.proveMany(ks, 0);
  const pb = packedB.proveMany(ks, 0);
  if (JSON.stringify(pa.map((x) => Buffer.from(x).toString('hex'))) !== JSON.stringify(pb.map((x) => Buffer.from(x).toString('hex'))))
    throw new Error('proveMany answers differ');
}

function packedRound(t) {
  let n = 0;
  for (let i = 0; i + BATCH <= probeKeys.length; i += BATCH) {
    const ks = probeKeys.slice(i, i + BATCH);
    for (const k of ks) t.get(k);
    t.proveMany(ks, 0);
    n += BATCH;
  }
  return n;
}

function measure(fn) {
  globalThis.gc?.();
  const h0 = process.memoryUsage().heapUsed;
  const c0 = process.cpuUsage();
  const n = fn();
  const c = process.cpuUsage(c0);
  return { us: (c.user + c.system) / n, n, heapKB: (process.memoryUsage().heapUsed - h0) / 1024 };
}

const res = { walkA: [], walkB: [], packedA: [], packedB: [] };
// Warm both (JIT) before measuring.
for (let i = 0; i < 2; i++) {
  walkRound(A); walkRound(B);
  if (ONLY !== 'walk') { packedRound(packedA); packedRound(packedB); }
}
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
  if (ONLY !== 'packed') for (const v of order) res[`walk${v}`].push(measure(() => walkRound(v === 'A' ? A : B)).us);
  if (ONLY !== 'walk') for (const v of order) res[`packed${v}`].push(measure(() => packedRound(v === 'A' ? packedA : packedB)).us);
}
const pairs = (a, b) => a.filter((x, i) => b[i] > x).length;
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (xs) => `median ${med(xs).toFixed(3)} µs/key (min ${Math.min(...xs).toFixed(3)}, max ${Math.max(...xs).toFixed(3)})`;
if (ONLY !== 'packed') console.log(`walkPath   new slower in ${pairs(res.walkA, res.walkB)} of ${res.walkA.length} rounds`);
if (ONLY !== 'walk') console.log(`readPacked new slower in ${pairs(res.packedA, res.packedB)} of ${res.packedA.length} rounds`);
if (ONLY !== 'packed') {
  console.log(`walkPath   base ${f(res.walkA)}`);
  console.log(`walkPath   new  ${f(res.walkB)}`);
}
if (ONLY !== 'walk') {
  console.log(`readPacked base ${f(res.packedA)} (get + proveMany share of a 1,000-key batch)`);
  console.log(`readPacked new  ${f(res.packedB)}`);
}
console.log(JSON.stringify({ N, rounds: ROUNDS, ...res }));
