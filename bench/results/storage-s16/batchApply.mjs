// A storage process's e2e work in one process, without the network: blocks applied (ApplyBlock
// as the server runs it: the request decoded from protobuf, applied, versions pruned) and, after
// each, the BatchGets clients send at that rate (answers converted and encoded to protobuf as
// the server does). 100K accounts, 8 of 16 shards (the default cluster's storage-0), 90/10 hot
// accounts, plain transfers (sender + recipient + coinbase) and a few ERC-20 transfers (two
// slots of one token contract). CPU (process.cpuUsage) per phase, GC pauses by kind
// (PerformanceObserver), from block WARM on.
//
//   node --expose-gc --max-semi-space-size=32 bench/results/storage-s16/batchApply.mjs <repo root> [blocks] [txs per block]
//
// A/B: run it against two built trees (this worktree and one of main) in turn.
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';

const root = process.argv[2];
const BLOCKS = Number(process.argv[3] ?? 90);
const TXS = Number(process.argv[4] ?? 4000);
const WARM = Number(process.env.WARM ?? 20);
const BATCH_TXS = 88; // transactions per client BatchGet (e2e: ~0.011 calls a tx)
const imp = (p) => import(pathToFileURL(join(root, p)).href);
const dsm = await imp('packages/dsm-tree/dist/index.js');
const proto = await imp('packages/protocol/dist/index.js');
const sn = await imp('packages/storage-node/dist/index.js');
const { keccak } = await imp('native/keccak/dist/index.js');

let seed = 0x5eed;
const rnd = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return seed >>> 0;
};
const bytes = (n) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = rnd() & 255;
  return b;
};

const N = 100_000;
const addresses = [];
const alloc = [];
for (let i = 0; i < N; i++) {
  const address = bytes(20);
  addresses.push(address);
  alloc.push({ address, nonce: 0n, balance: 10n ** 24n + BigInt(rnd()), code: new Uint8Array(0), storage: [] });
}
// One token contract with balances of the first 20K accounts.
const token = bytes(20);
const slotOf = (i) => keccak.keccak256(Buffer.concat([new Uint8Array(12), addresses[i], new Uint8Array(32)]));
const tokenStorage = [];
for (let i = 0; i < 20_000; i++) tokenStorage.push([slotOf(i), Uint8Array.of(1, rnd() & 255, rnd() & 255)]);
alloc.push({ address: token, nonce: 1n, balance: 0n, code: bytes(200), storage: tokenStorage });
const genesis = {
  chainId: 1337n,
  difficulty: 0n,
  gasLimit: 30_000_000n,
  timestamp: 1_700_000_000n,
  extraData: new Uint8Array(0),
  coinbase: new Uint8Array(20),
  nonce: new Uint8Array(8),
  minDifficulty: 0n,
  alloc,
};
const layout = new proto.ShardLayout(16);
const owned = [0, 1, 2, 3, 4, 5, 6, 7];
const ownedSet = new Set(owned);
const shardOf = (a) => layout.shardOfKey(keccak.keccak256(a));

// The reference state (what the miner computes), for each block's roots: built untimed.
let ref = proto.genesisState(genesis, { hash: keccak });
const node = sn.StorageNode.fromGenesis(
  genesis,
  { shards: owned, ...(process.env.WINDOW ? { window: Number(process.env.WINDOW) } : {}) },
  { hash: keccak },
);
let parent = { hash: node.head.hash, number: 0n };
const hot = (r) => (r % 10 < 9 ? r % 10_000 : r % N); // 10% of accounts take 90% of transactions
const coinbase = bytes(20);

function makeBlock(b) {
  const txs = [];
  const touched = new Map();
  const touch = (address, storage) => {
    const id = Buffer.from(address).toString('latin1');
    let u = touched.get(id);
    if (u === undefined) {
      const cur = ref.getAccount(address);
      u = {
        deleted: false,
        address,
        nonce: (cur?.nonce ?? 0n) + 1n,
        balance: (cur?.balance ?? 0n) + BigInt(rnd() % 1000) + 1n,
        code: undefined,
        clearStorage: false,
        storage: [],
      };
      touched.set(id, u);
    }
    if (storage !== undefined) u.storage.push(storage);
  };
  for (let t = 0; t < TXS; t++) {
    const s = hot(rnd());
    const erc20 = rnd() % 100 < 15;
    const to = erc20 ? hot(rnd()) % 20_000 : hot(rnd());
    txs.push({ from: s, to, erc20 });
    touch(addresses[s]);
    if (erc20) {
      touch(token, { slot: slotOf(s % 20_000), value: Uint8Array.of(2, rnd() & 255) });
      touch(token, { slot: slotOf(to), value: Uint8Array.of(3, rnd() & 255) });
    } else touch(addresses[to]);
  }
  touch(coinbase);
  const byShard = new Map();
  for (const u of touched.values()) {
    // Last write of a slot wins (the block's net effect).
    const slots = new Map();
    for (const w of u.storage) slots.set(Buffer.from(w.slot).toString('latin1'), w);
    u.storage = [...slots.values()];
    proto.applyAccountUpdate(ref, u);
    const s = shardOf(u.address);
    if (!byShard.has(s)) byShard.set(s, []);
    byShard.get(s).push(u);
  }
  ref.rootBin();
  const header = {
    parentHash: parent.hash,
    miner: coinbase,
    stateRoot: ref.root(),
    transactionsRoot: dsm.EMPTY_ROOT,
    receiptsRoot: dsm.EMPTY_ROOT,
    difficulty: 0n,
    number: parent.number + 1n,
    gasLimit: 30_000_000n,
    gasUsed: 0n,
    timestamp: 1_700_000_000n + BigInt(b),
    extraData: new Uint8Array(0),
    nonce: new Uint8Array(8),
  };
  const req = {
    headerRlp: proto.encodeHeader(header),
    shards: [...byShard].filter(([s]) => ownedSet.has(s)).map(([shard, accounts]) => ({ shard, accounts })),
    expectedRoots: layout.all().map((shard) => ({ shard, root: ref.accounts.refAt(layout.path(shard)) ?? new Uint8Array(0) })),
  };
  parent = { hash: proto.headerHash(header, keccak), number: header.number };
  // What the server receives: the request's protobuf bytes.
  const wire = proto.storagePb.ApplyBlockRequest.encode(proto.applyBlockRequestToProto(req, { shardCount: 16 })).finish();
  // The next block's clients read its parent's state: BatchGets of BATCH_TXS transactions' accounts
  // in this node's shards (a plain transfer: sender and recipient, no code; ERC-20: sender, token
  // with code and its two slots).
  const batches = [];
  for (let i = 0; i < txs.length; i += BATCH_TXS) {
    const queries = new Map();
    const q = (address, code, slot) => {
      if (!ownedSet.has(shardOf(address))) return;
      const id = Buffer.from(address).toString('latin1');
      let e = queries.get(id);
      if (e === undefined) queries.set(id, (e = { address, slots: [], code }));
      if (slot !== undefined) e.slots.push(slot);
    };
    for (const tx of txs.slice(i, i + BATCH_TXS)) {
      q(addresses[tx.from], false);
      if (tx.erc20) {
        q(token, true, slotOf(tx.from % 20_000));
        q(token, true, slotOf(tx.to));
      } else q(addresses[tx.to], false);
    }
    q(coinbase, false);
    const request = { at: proto.HEAD, omitLevels: 0, queries: [...queries.values()] };
    batches.push(proto.batchGetRequestToProto(request));
  }
  return { wire, batches };
}

const gc = { minor: 0, minorMs: 0, major: 0, majorMs: 0, other: 0, otherMs: 0 };
// Entries arrive after the run (the loop never yields to the event loop): counted by their time.
let from = Number.POSITIVE_INFINITY;
let to = Number.POSITIVE_INFINITY;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.startTime < from || e.startTime > to) continue;
    const k = e.detail?.kind ?? e.kind;
    const which =
      k === constants.NODE_PERFORMANCE_GC_MINOR ? 'minor' : k === constants.NODE_PERFORMANCE_GC_MAJOR ? 'major' : 'other';
    gc[which]++;
    gc[`${which}Ms`] += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

const session = new Session();
session.connect();
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let applyMs = 0;
let batchMs = 0;
let nodeBatchMs = 0;
let queries = 0;
let updates = 0;
let proofBytes = 0;
// Every block made first (the reference state's own garbage is collected before the run).
const blocksMade = [];
for (let b = 1; b <= BLOCKS; b++) blocksMade.push(makeBlock(b));
ref = undefined;
globalThis.gc?.();
const t0 = performance.now();
for (let b = 1; b <= BLOCKS; b++) {
  const { wire, batches } = blocksMade[b - 1];
  blocksMade[b - 1] = undefined;
  if (b === WARM + 1) {
    from = performance.now();
    if (process.env.ALLOC_FILE) {
      await session.post('HeapProfiler.enable');
      await session.post('HeapProfiler.startSampling', {
        samplingInterval: 16384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    }
    applyMs = batchMs = nodeBatchMs = queries = updates = proofBytes = 0;
  }
  let c = cpu();
  const req = proto.applyBlockRequestFromProto(proto.storagePb.ApplyBlockRequest.decode(wire), { shardCount: 16 });
  await node.applyBlock(req, wire);
  applyMs += cpu() - c;
  updates += req.shards.reduce((n, s) => n + s.accounts.length, 0);
  c = cpu();
  for (const p of batches) {
    const r = proto.batchGetRequestFromProto(p);
    const c0 = cpu();
    const res = node.read(() => node.batchGet(r));
    nodeBatchMs += cpu() - c0;
    const out = proto.storagePb.BatchGetResponse.encode(proto.batchGetResponseToProto(res, r)).finish();
    proofBytes += out.length;
    queries += r.queries.length;
  }
  batchMs += cpu() - c;
}
to = performance.now();
if (process.env.ALLOC_FILE) {
  const { profile } = await session.post('HeapProfiler.stopSampling');
  writeFileSync(process.env.ALLOC_FILE, JSON.stringify(profile));
}
await new Promise((r) => setTimeout(r, 100));
const blocks = BLOCKS - WARM;
console.log(
  JSON.stringify({
    blocks,
    updatesPerBlock: Math.round(updates / blocks),
    queriesPerBlock: Math.round(queries / blocks),
    applyUsPerUpdate: +((1000 * applyMs) / updates).toFixed(2),
    batchUsPerQuery: +((1000 * batchMs) / queries).toFixed(2),
    nodeBatchUsPerQuery: +((1000 * nodeBatchMs) / queries).toFixed(2),
    cpuMsPerBlock: +((applyMs + batchMs) / blocks).toFixed(1),
    answerBytesPerQuery: Math.round(proofBytes / queries),
    gcMinor: gc.minor,
    gcMinorMs: Math.round(gc.minorMs),
    gcMajor: gc.major,
    gcMajorMs: Math.round(gc.majorMs),
    heapUsedMiB: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
    liveMiB: (globalThis.gc?.(), Math.round(process.memoryUsage().heapUsed / 2 ** 20)),
    versions: node.versions.size,
    wallS: +((performance.now() - t0) / 1000).toFixed(1),
  }),
);
