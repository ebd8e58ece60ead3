/**
 * State reads from one storage process, two ways, on this machine: gRPC BatchGet (the node's JS
 * thread answers, the client checks every proof) against one-sided walks of the region the node
 * exports under /dev/shm (the client maps it read-only and walks from the state root, checking
 * every node's keccak; the node does nothing). Reports account proofs per second per client core
 * (client CPU, not wall time, so the two share a yardstick on a shared 2-core box), storage CPU
 * per proof, and the p50/p99 of a single verified node read.
 *
 *   npm run build && npm run bench -- reads [--accounts 100000] [--seconds 3]
 *
 * Both ways end in what the client keeps: a proof of each account checked against the state
 * root. gRPC: BatchGet of 1,000 accounts, 2 in flight, each answer checked as RemoteState does
 * (a tree over the bag, every account read through it). shm: the JS walk per account and batched
 * a level at a time (walkAccounts), and the addon's native walk batched (MappedWalkSource: bucket
 * scans, copies, keccak and RLP in C++; the walk is the check). "Client path" repeats gRPC and the
 * shm transport (native walk) through RemoteState.fetch (batching, caching the nodes).
 *
 * Measured 2026-11-24 04:07–04:18 UTC (2-core EPYC VM, load average 10–14 from other jobs), three
 * runs at 100K: gRPC 14.9K–18.5K proofs per client core-second at 21–32 µs of storage CPU each; shm
 * JS walk batched 59.6K–85.9K, native walk batched 131.7K–140.2K (7.6–9.2× under that load), 0
 * storage CPU (goal met); one verified node read alone p50 2.33–2.35 µs (JS), 3.17–3.22 µs (native,
 * one N-API call each), 2.36–2.51 µs of client CPU per node inside the native batched walk (goal
 * 2 µs: missed under this load, keccak-bound). Two runs at 1M: gRPC 7.8K–8.7K, native batched
 * 73.6K–82.5K (8.4–10.6×). Client path: gRPC 19.1K–20.2K, shm 61.3K–61.9K.
 * On a quiet box (05:16–05:17 UTC, load 1.6–2.1, three runs at 100K) the ratio is lower, because
 * the gRPC path's client CPU per proof grows with contention far more than the walk's: gRPC
 * 23.1K–24.5K, native walk 95.9K–96.9K per client core-second (4.0–4.2×: goal 5× missed); node read
 * p50 1.65–1.71 µs per node inside the batched walk's steps, 2.31 µs alone (JS). See the root README.
 * After four-way keccak and one copy a node (2026-11-24 08:33–08:35 UTC, quiet, six runs): gRPC
 * 25.9K–29.8K; native walk bimodal — 208.7K–216.5K (7.5–8.4×) when the JS thread had 95–96% of
 * the process's CPU, 117.3K–159.1K (4.5–5.3×) when V8's other threads took 19–26% (more full
 * collections: the walk allocates ~1 MB of node bytes per batch). Node read p50 inside the batched
 * walk 0.94–1.09 µs.
 * Session 8 (2026-11-24 11:26–11:31 UTC, quiet, load 1.0–1.9; walks without per-account proof
 * lists, one-sided phases before gRPC's): 100K, four runs — gRPC 28.0K–31.0K, native walk
 * 285.6K–308.7K (9.3–10.6×), JS thread 93–97% every run; 1M, two runs — gRPC 19.1K–19.4K, native
 * 184.7K–187.4K (9.5–9.8×); storage CPU 0 in every one-sided phase; node read p50 inside the walk
 * 0.79–0.98 µs, alone 2.3–3.0 µs. Main before it, same window: 8.0× and 4.5× (its slow mode).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { defaultClientOptions, RemoteState, ShardedStorage, ShmReads, type StateRef } from '@monsoon/client';
import { NodeBag, StateTree } from '@monsoon/dsm-tree';
import { unary } from '@monsoon/edge';
import { nativeKeccak } from '@monsoon/keccak';
import {
  type AccountQuery,
  atHash,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  HEAD,
} from '@monsoon/protocol';
import {
  MappedWalkSource,
  RegionReader,
  SharedRegion,
  walkAccount,
  walkAccounts,
  walkAccountsFrom,
} from '@monsoon/rdma';
import { Prng } from './lib/prng.js';
import { cpuSeconds, mainThreadCpuSeconds } from './lib/processCpu.js';
import { startStorageProcess } from './lib/storageProcess.js';

const { values: args } = parseArgs({
  options: {
    accounts: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '3' },
  },
});
const N = Number(args.accounts);
const SECONDS = Number(args.seconds);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const keccak = nativeKeccak!;
const BATCH = 1000;

function startNode(
  genesisFile: string,
  dataDir: string,
  region: string,
): Promise<{ proc: ChildProcess; address: string }> {
  return startStorageProcess([
    '--genesis',
    genesisFile,
    '--listen',
    '127.0.0.1:0',
    '--data-dir',
    dataDir,
    '--fsync',
    'none',
    '--export-region',
    region,
    '--region-mb',
    String(Math.max(256, Math.ceil((N * 1200) / 1e6))),
  ]);
}

/** Client CPU seconds (this process) so far. */
function clientCpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

interface Phase {
  proofs: number;
  wallSeconds: number;
  clientCpuSeconds: number;
  /** Of clientCpuSeconds, the JS thread's (the rest: GC helpers, compilers, the libuv pool). */
  clientMainThreadCpuSeconds: number;
  storageCpuSeconds: number;
}

async function phase(storagePid: number, run: (until: number) => Promise<number>): Promise<Phase> {
  const c0 = clientCpu();
  const m0 = mainThreadCpuSeconds();
  const s0 = cpuSeconds(storagePid);
  const t0 = performance.now();
  const proofs = await run(t0 + SECONDS * 1000);
  return {
    proofs,
    wallSeconds: (performance.now() - t0) / 1000,
    clientCpuSeconds: clientCpu() - c0,
    clientMainThreadCpuSeconds: mainThreadCpuSeconds() - m0,
    storageCpuSeconds: cpuSeconds(storagePid) - s0,
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'monsoon-bench-reads-'));
  const regionFile = join('/dev/shm', `monsoon-bench-reads-${process.pid}.region`);
  const r = new Prng(0x7eed);
  const addresses: Uint8Array[] = [];
  const alloc: Record<string, unknown> = {};
  for (let i = 0; i < N; i++) {
    const a = r.bytes(20);
    addresses.push(a);
    alloc[Buffer.from(a).toString('hex')] = {
      balance: `0x${(BigInt(r.nextU32()) * 1_000_000n).toString(16)}`,
    };
  }
  const genesisFile = join(dir, 'genesis.json');
  writeFileSync(
    genesisFile,
    JSON.stringify({ config: { chainId: 1337 }, difficulty: '0x0', gasLimit: '0x1c9c380', alloc }),
  );
  const t0 = performance.now();
  const { proc, address } = await startNode(genesisFile, join(dir, 'data'), regionFile);
  const startSeconds = (performance.now() - t0) / 1000;
  const pid = proc.pid!;
  const storage = await ShardedStorage.connect([address]);
  const replica = storage.replicas[0]!;
  const head = await headOf(storage);
  const at: StateRef = head;
  const pick = (i: number) => addresses[(i * 7919) % N]!;
  const queriesAt = (i: number): AccountQuery[] =>
    Array.from({ length: BATCH }, (_, j) => ({ address: pick(i * BATCH + j), slots: [], code: false }));
  try {
    // ---- the storage process alone (nobody reads): what it burns anyway (GC after loading, timers).
    const idle = await phase(pid, async (until) => {
      while (performance.now() < until) await new Promise((res) => setTimeout(res, 50));
      return 0;
    });

    // ---- shm: map the region the node advertises, walk each account from the root.
    const adv = replica.region!;
    const region = await SharedRegion.map(adv.path);
    const reader = new RegionReader(region.bytes, {}, keccak);
    const fetch = (h: Uint8Array) => reader.node(h);
    let k = 0;
    const shm = await phase(pid, async (until) => {
      let proofs = 0;
      while (performance.now() < until) {
        for (let j = 0; j < BATCH; j++) {
          const w = walkAccount(fetch, at.stateRoot, { address: pick(k++), slots: [], code: false }, keccak);
          if (w === undefined)
            throw new Error('a walk missed: the region should hold every node of the head');
        }
        proofs += BATCH;
        // Let the event loop breathe (timers, the gRPC channel), as a client would.
        await new Promise((res) => setImmediate(res));
      }
      return proofs;
    });

    // ---- shm, batched: 1,000 accounts walked a level at a time (shared upper nodes read once,
    // one keccak call per level: what one RDMA doorbell per level would post).
    let kb = 0;
    const shmBatched = await phase(pid, async (until) => {
      let proofs = 0;
      while (performance.now() < until) {
        const qs = Array.from({ length: BATCH }, () => ({ address: pick(kb++), slots: [], code: false }));
        const ws = walkAccounts((hs) => reader.nodes(hs), at.stateRoot, qs, keccak);
        if (ws.some((w) => w === undefined)) throw new Error('a batched walk missed');
        proofs += BATCH;
        await new Promise((res) => setImmediate(res));
      }
      return proofs;
    });

    // ---- shm, the addon's walk (src/regionWalk.cc): the same 1,000 accounts a level at a time,
    // index buckets, node copies, keccak and RLP decoding in C++, one call per step. Answered as
    // gRPC's BatchGet is and as the client's transport asks: values, and every node read (each
    // checked against its parent's hash), without a proof list per account.
    const native = new MappedWalkSource(region.bytes, reader.geometry);
    // Each step's wall time over the nodes it read: a verified node read inside the batched walk
    // (bucket scan, copy, keccak, RLP decode, and the step's JS packing), per step.
    const perNodeNs: number[] = [];
    const timed = {
      counters: native.counters,
      step: (st: Parameters<MappedWalkSource['step']>[0]) => {
        const t = process.hrtime.bigint();
        const a = native.step(st);
        if (a.nodes.length > 0) perNodeNs.push(Number(process.hrtime.bigint() - t) / a.nodes.length);
        return a;
      },
    };
    let kn = 0;
    let nativeNodes = 0;
    const nativePhase = (source: typeof timed, proofLists: boolean) =>
      phase(pid, async (until) => {
        let proofs = 0;
        while (performance.now() < until) {
          const qs = Array.from({ length: BATCH }, () => ({ address: pick(kn++), slots: [], code: false }));
          const { answers, nodes } = await walkAccountsFrom(source, at.stateRoot, qs, keccak, {
            proofs: proofLists,
          });
          if (answers.some((w) => w === undefined)) throw new Error('a native walk missed');
          if (source === timed) nativeNodes += nodes.length;
          proofs += BATCH;
          await new Promise((res) => setImmediate(res));
        }
        return proofs;
      });
    const shmNative = await nativePhase(timed, false);
    // The same with each account's proof list built (eth_getProof's shape): what that costs in JS.
    const shmNativeProofs = await nativePhase(native, true);

    // ---- gRPC BatchGet, 2 in flight, each answer checked as RemoteState.check does. After the
    // one-sided phases: the collections its garbage costs the node come later (V8 collects a
    // heap of 1M accounts' after the fact) and must not land in a one-sided phase's figures.
    let batchNo = 0;
    const grpc = await phase(pid, async (until) => {
      let proofs = 0;
      await Promise.all(
        [0, 1].map(async () => {
          while (performance.now() < until) {
            const qs = queriesAt(batchNo++);
            const res = await storage.batchGet(
              0,
              { at: atHash(at.blockHash), queries: qs, omitLevels: 0 },
              () => {},
            );
            const bag = new NodeBag({ hash: keccak });
            bag.addNodes(res.bag);
            const tree = StateTree.fromRootHash(at.stateRoot, { hash: keccak, resolver: (h) => bag.get(h) });
            for (const q of qs) tree.getAccount(q.address);
            proofs += qs.length;
          }
        }),
      );
      return proofs;
    });

    // ---- the client path both ways: RemoteState.fetch (per-shard batching, cache fills, the
    // client's compaction levels noted).
    // (Before the single reads below: their 100K retained hashes would tax every later GC.)
    const viaRemote = async (oneSided: boolean) => {
      const transport = oneSided ? await ShmReads.open(storage) : undefined;
      let b = 0;
      const p = await phase(pid, async (until) => {
        let proofs = 0;
        while (performance.now() < until) {
          // A fresh cache per round: every round fetches (nothing is served from memory).
          const remote = new RemoteState(
            storage,
            { compactLevels: defaultClientOptions.compactLevels, maxCachedNodes: 10_000_000 },
            keccak,
            transport,
          );
          await Promise.all([0, 1].map(() => remote.fetch(at, queriesAt(b++))));
          proofs += 2 * BATCH;
        }
        return proofs;
      });
      transport?.close();
      return p;
    };
    // One-sided first, for the same reason.
    const shmPath = await viaRemote(true);
    const grpcPath = await viaRemote(false);
    // ---- a single verified node read: p50/p99 over nodes of many proofs.
    const hashes: Uint8Array[] = [];
    for (let i = 0; i < 20_000 && hashes.length < 100_000; i++) {
      walkAccount(
        (h) => {
          hashes.push(h.slice());
          return reader.node(h);
        },
        at.stateRoot,
        { address: pick(i), slots: [], code: false },
        keccak,
      );
    }
    const lat = new Float64Array(hashes.length);
    let bytesRead = 0;
    for (let i = 0; i < hashes.length; i++) {
      const s = process.hrtime.bigint();
      const n = reader.node(hashes[i]!);
      lat[i] = Number(process.hrtime.bigint() - s);
      bytesRead += n!.length;
    }
    const latNative = new Float64Array(hashes.length);
    for (let i = 0; i < hashes.length; i++) {
      const s = process.hrtime.bigint();
      const n = native.node(hashes[i]!);
      latNative[i] = Number(process.hrtime.bigint() - s);
      if (n === undefined) throw new Error('a native node read missed');
    }
    // hrtime's own cost, measured the same way around nothing.
    const empty = new Float64Array(hashes.length);
    for (let i = 0; i < empty.length; i++) {
      const s = process.hrtime.bigint();
      empty[i] = Number(process.hrtime.bigint() - s);
    }
    lat.sort();
    latNative.sort();
    empty.sort();
    const pct = (a: Float64Array, p: number) => a[Math.min(a.length - 1, Math.floor(a.length * p))]!;
    const pctOf = (a: number[], p: number) => pct(Float64Array.from(a).sort(), p);
    const nodeRead = {
      samples: hashes.length,
      meanBytes: bytesRead / hashes.length,
      p50Ns: pct(lat, 0.5),
      p99Ns: pct(lat, 0.99),
      timerNs: pct(empty, 0.5),
      native: { p50Ns: pct(latNative, 0.5), p99Ns: pct(latNative, 0.99) },
      /** Client CPU per node inside the addon's batched walk (whole walk over the nodes it read). */
      nativeBatchedNsPerNode: (shmNative.clientCpuSeconds * 1e9) / nativeNodes,
      /** A node read inside the addon's batched walk: a step's time over its nodes, p50/p99 over steps. */
      nativeStep: { steps: perNodeNs.length, p50Ns: pctOf(perNodeNs, 0.5), p99Ns: pctOf(perNodeNs, 0.99) },
    };

    region.close();

    const perCore = (p: Phase) => p.proofs / p.clientCpuSeconds;
    const storageUsPerProof = (p: Phase) => (p.storageCpuSeconds * 1e6) / p.proofs;
    const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
    const out = {
      benchmark: 'reads',
      date: new Date().toISOString(),
      machine: {
        node: process.version,
        cpu: cpus()[0]?.model,
        cpus: cpus().length,
        loadAverage1m: loadavg()[0],
      },
      accounts: N,
      startSeconds,
      region: { path: adv.path, bytes: Number(adv.bytes) },
      grpc: { ...grpc, proofsPerClientCoreSec: perCore(grpc), storageUsPerProof: storageUsPerProof(grpc) },
      shm: { ...shm, proofsPerClientCoreSec: perCore(shm), storageUsPerProof: storageUsPerProof(shm) },
      shmBatched: {
        ...shmBatched,
        proofsPerClientCoreSec: perCore(shmBatched),
        storageUsPerProof: storageUsPerProof(shmBatched),
      },
      shmNative: {
        ...shmNative,
        proofsPerClientCoreSec: perCore(shmNative),
        storageUsPerProof: storageUsPerProof(shmNative),
      },
      shmNativeProofLists: {
        ...shmNativeProofs,
        proofsPerClientCoreSec: perCore(shmNativeProofs),
        storageUsPerProof: storageUsPerProof(shmNativeProofs),
      },
      nodeRead,
      storageIdleCpuPerSec: idle.storageCpuSeconds / idle.wallSeconds,
      clientPath: {
        grpc: {
          ...grpcPath,
          proofsPerClientCoreSec: perCore(grpcPath),
          storageUsPerProof: storageUsPerProof(grpcPath),
        },
        shm: {
          ...shmPath,
          proofsPerClientCoreSec: perCore(shmPath),
          storageUsPerProof: storageUsPerProof(shmPath),
        },
      },
      goals: { shmOverGrpcPerCore: 5, storageCpuRatio: 0.05, nodeReadP50Ns: 2000 },
    };
    const ratio = Math.max(perCore(shm), perCore(shmBatched), perCore(shmNative)) / perCore(grpc);
    // Storage CPU of the one-sided phases, the worst of them.
    const cpuRatio =
      Math.max(...[shm, shmBatched, shmNative, shmNativeProofs].map(storageUsPerProof)) /
      storageUsPerProof(grpc);
    console.log(
      `reads · ${fmt(N)} accounts · 1 storage process (16 shards) · started in ${startSeconds.toFixed(1)} s`,
    );
    for (const [name, p] of [
      ['gRPC BatchGet 1,000 ×2 + check', grpc],
      ['shm walks, one account at a time', shm],
      ['shm walks, 1,000 a level at a time', shmBatched],
      ['shm native walks, 1,000 a level', shmNative],
      ['  the same, proof lists built', shmNativeProofs],
      ['client path, gRPC (RemoteState)', grpcPath],
      ['client path, shm (RemoteState)', shmPath],
    ] as const) {
      console.log(
        `${name.padEnd(34)} ${fmt(p.proofs / p.wallSeconds).padStart(9)} proofs/s wall, ${fmt(perCore(p)).padStart(9)} per client core-s (JS thread ${Math.round((100 * p.clientMainThreadCpuSeconds) / p.clientCpuSeconds)}%), storage ${storageUsPerProof(p).toFixed(2).padStart(6)} µs CPU/proof`,
      );
    }
    console.log(
      `storage process idle (nobody reading): ${((idle.storageCpuSeconds / idle.wallSeconds) * 100).toFixed(1)}% of a core`,
    );
    console.log(
      `one verified node read (${fmt(nodeRead.meanBytes)} B mean): p50 ${(nodeRead.p50Ns / 1000).toFixed(2)} µs, p99 ${(nodeRead.p99Ns / 1000).toFixed(2)} µs (timer alone ${(nodeRead.timerNs / 1000).toFixed(2)} µs)`,
    );
    console.log(
      `one verified node read, native (readNode): p50 ${(nodeRead.native.p50Ns / 1000).toFixed(2)} µs, p99 ${(nodeRead.native.p99Ns / 1000).toFixed(2)} µs; inside the native batched walk: ${(nodeRead.nativeBatchedNsPerNode / 1000).toFixed(2)} µs of client CPU per node (whole walk), p50 ${(nodeRead.nativeStep.p50Ns / 1000).toFixed(2)} µs / p99 ${(nodeRead.nativeStep.p99Ns / 1000).toFixed(2)} µs per node per step (${nodeRead.nativeStep.steps} steps)`,
    );
    const p50 = Math.min(nodeRead.p50Ns, nodeRead.native.p50Ns, nodeRead.nativeStep.p50Ns);
    console.log(
      `goals: shm ≥ 5× gRPC per client core: ${ratio >= 5 ? 'PASS' : 'MISS'} (${ratio.toFixed(1)}×); storage CPU < 5% of gRPC's: ${cpuRatio < 0.05 ? 'PASS' : 'MISS'} (${(cpuRatio * 100).toFixed(1)}%); node read p50 ≤ 2 µs: ${p50 <= 2000 ? 'PASS' : 'MISS'} (${(p50 / 1000).toFixed(2)} µs)`,
    );
    const file = join(root, 'bench', 'results', N >= 1_000_000 ? 'reads-1m.json' : 'reads.json');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
    console.log(`wrote ${file}`);
  } finally {
    storage.close();
    proc.kill('SIGTERM');
    await new Promise((res) => proc.once('exit', res));
    rmSync(dir, { recursive: true, force: true });
    rmSync(regionFile, { force: true });
  }
}

/** The node's head as a client learns it: its block hash and state root (GetShardRoots). */
async function headOf(storage: ShardedStorage): Promise<StateRef> {
  const c = storage.replicas[0]!.client;
  const roots = getShardRootsResponseFromProto(
    await unary(c, c.getShardRoots, getShardRootsRequestToProto({ at: HEAD })),
  );
  return { blockHash: roots.blockHash, stateRoot: roots.stateRoot };
}

await main();
