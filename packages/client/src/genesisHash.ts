/**
 * Block 0's hash of a genesis file: the trust root a client's chain is linked down to. It needs
 * the genesis state root, the whole allocation built into a trie and hashed (~4 s of CPU and
 * ~400 MiB for the workload's 100,000 accounts and its token's 100,000 slots), which a client
 * holds no use for afterwards. So it is computed in a worker thread that exits when done: the
 * client's event loop keeps serving meanwhile, and the trie's memory goes with the worker.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Genesis } from '@monsoon/protocol';

/**
 * The genesis, and the file the worker resolves its modules from (this one): Node's resolution
 * from here, so the built packages even where this thread resolves them otherwise (Jest maps
 * them to their sources, which a worker cannot load).
 */
interface GenesisHashWorkerData {
  readonly genesis: Genesis;
  readonly from: string;
}

/** The worker's body (its source is this function's text, so it names nothing outside it). */
async function genesisHashWorkerMain(
  data: GenesisHashWorkerData,
  load: (specifier: string) => Promise<Record<string, unknown>>,
): Promise<Uint8Array> {
  const p = (await load('@monsoon/protocol')) as unknown as typeof import('@monsoon/protocol');
  const { keccak } = (await load('@monsoon/keccak')) as unknown as typeof import('@monsoon/keccak');
  const root = p.genesisState(data.genesis, { hash: keccak }).root();
  return p.headerHash(p.genesisHeader(data.genesis, root), keccak);
}

function workerSource(): string {
  return [
    "'use strict';",
    "const { parentPort, workerData } = require('node:worker_threads');",
    "const { pathToFileURL } = require('node:url');",
    "const resolve = require('node:module').createRequire(workerData.from).resolve;",
    `(${genesisHashWorkerMain.toString()})(workerData, (s) => import(pathToFileURL(resolve(s)).href)).then(`,
    '  (hash) => parentPort.postMessage({ hash }),',
    '  (e) => parentPort.postMessage({ error: String(e && e.stack || e) }),',
    ');',
  ].join('\n');
}

/** Block 0's hash of `genesis`, computed once in a worker thread; rejects with the worker's error. */
export function genesisHashInWorker(genesis: Genesis): Promise<Uint8Array> {
  const workerData: GenesisHashWorkerData = { genesis, from: fileURLToPath(import.meta.url) };
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerSource(), { eval: true, workerData });
    let settled = false;
    worker.once('message', (m: { hash?: Uint8Array; error?: string }) => {
      settled = true;
      if (m.hash !== undefined) resolve(m.hash);
      else reject(new Error(`genesis hash not computed: ${m.error}`));
      void worker.terminate();
    });
    worker.once('error', (e) => {
      settled = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`genesis hash worker exited with code ${code}`));
    });
    // A client closing does not wait for it.
    worker.unref();
  });
}

/**
 * Block 0's hash of `genesis`, computed (in a worker) when first asked and kept. The genesis is
 * let go of once the worker has its copy (workerData is cloned when the worker is made).
 */
export function genesisHashOf(genesis: Genesis): () => Promise<Uint8Array> {
  let held: Genesis | undefined = genesis;
  let hash: Promise<Uint8Array> | undefined;
  return () => {
    if (hash === undefined) {
      hash = genesisHashInWorker(held!);
      held = undefined;
    }
    return hash;
  };
}
