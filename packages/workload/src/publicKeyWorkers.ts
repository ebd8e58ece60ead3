/**
 * Account derivation on worker threads. Creating a secp256k1 public key (~25 µs native) is
 * nearly all of the cost of deriving an account, so workers do only that: the calling thread
 * derives the private keys (keccak, ~1 µs each) into the records, posts them to a worker in
 * chunks, and hashes the returned public keys to addresses in one native keccak call per chunk.
 * The result is byte-for-byte what the single-threaded path makes, in any worker count.
 *
 * The worker is started from a string (`eval: true`) made from {@link publicKeysPacked} and
 * {@link publicKeyWorkerMain}, not from a file, so that the same code runs from `dist/` and
 * from sources under Jest (where a worker file would be a `.ts` Node cannot load). Those two
 * functions may therefore use nothing from this module's scope.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { keccak } from '@monsoon/keccak';
import secp256k1 from 'secp256k1';
import { ACCOUNT_RECORD_BYTES, ADDRESS_BYTES, PRIVATE_KEY_BYTES } from './deriveAccount.js';
import { WorkloadError, WorkloadErrorCode } from './workloadError.js';

/** The part of the `secp256k1` package the worker uses. */
interface Secp256k1Create {
  publicKeyCreate(privateKey: Uint8Array, compressed: boolean, output: Uint8Array): Uint8Array;
}

/** A chunk of private keys (32 bytes each, back to back) posted to a worker. */
interface PublicKeyRequest {
  readonly id: number;
  readonly count: number;
  readonly buffer: ArrayBuffer;
}

/** The worker's answer: 64-byte public keys (x ‖ y) back to back, or `ready` once loaded. */
type PublicKeyWorkerMessage =
  | { readonly ready: true }
  | { readonly id: number; readonly buffer: ArrayBuffer };

/** The uncompressed public keys (x ‖ y, 64 bytes each) of `count` packed private keys. */
export function publicKeysPacked(keys: Uint8Array, count: number, secp: Secp256k1Create): Uint8Array {
  const out = new Uint8Array(64 * count);
  const pub = new Uint8Array(65);
  for (let i = 0; i < count; i++) {
    secp.publicKeyCreate(keys.subarray(32 * i, 32 * i + 32), false, pub);
    out.set(pub.subarray(1), 64 * i);
  }
  return out;
}

/** A worker's body: answers each request with {@link publicKeysPacked}, transferring the result. */
export function publicKeyWorkerMain(
  port: {
    on(event: 'message', listener: (request: PublicKeyRequest) => void): unknown;
    postMessage(message: PublicKeyWorkerMessage, transfer?: ArrayBuffer[]): void;
  },
  secp: Secp256k1Create,
): void {
  port.on('message', (request) => {
    const out = publicKeysPacked(new Uint8Array(request.buffer), request.count, secp);
    port.postMessage({ id: request.id, buffer: out.buffer as ArrayBuffer }, [out.buffer as ArrayBuffer]);
  });
  port.postMessage({ ready: true });
}

function workerSource(): string {
  return [
    "'use strict';",
    "const { parentPort, workerData } = require('node:worker_threads');",
    publicKeysPacked.toString(),
    `(${publicKeyWorkerMain.toString()})(parentPort, require(workerData.secp256k1Path));`,
  ].join('\n');
}

/** A started worker and its requests in flight. */
class KeyWorker {
  private readonly pending = new Map<
    number,
    { resolve: (b: Uint8Array) => void; reject: (e: unknown) => void }
  >();
  private nextId = 0;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (m: PublicKeyWorkerMessage) => {
      if ('ready' in m) return;
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p?.resolve(new Uint8Array(m.buffer));
    });
    worker.on('error', (e) => this.failAll(e));
    worker.on('exit', (code) => this.failAll(new Error(`key derivation worker exited with code ${code}`)));
  }

  static start(secp256k1Path: string): Promise<KeyWorker> {
    const worker = new Worker(workerSource(), { eval: true, workerData: { secp256k1Path } });
    return new Promise((resolve, reject) => {
      const onError = (e: unknown) => reject(e);
      worker.once('error', onError);
      worker.once('message', () => {
        worker.off('error', onError);
        resolve(new KeyWorker(worker));
      });
    });
  }

  publicKeys(keys: Uint8Array, count: number): Promise<Uint8Array> {
    const id = this.nextId++;
    const buffer = keys.buffer as ArrayBuffer;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, count, buffer } satisfies PublicKeyRequest, [buffer]);
    });
  }

  private failAll(e: unknown): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  async stop(): Promise<void> {
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }
}

/** Where the `secp256k1` package resolves from here, so workers load the same module. */
function secp256k1Path(): string {
  return createRequire(import.meta.url).resolve('secp256k1');
}

/**
 * Derives accounts [0, count) into `records` (116 bytes each: private key ‖ address ‖ public key) with
 * `workers` threads, `chunk` accounts per request, two requests in flight per worker so none
 * waits on the calling thread. `onChunk(from, to)` reports each finished chunk (in completion
 * order).
 */
export async function deriveAccountRecordsInWorkers(
  seed: Uint8Array,
  count: number,
  records: Uint8Array,
  opts: {
    readonly workers: number;
    readonly chunk: number;
    readonly onChunk?: (from: number, to: number) => void;
  },
): Promise<void> {
  const { workers, chunk, onChunk } = opts;
  if (!Number.isInteger(workers) || workers < 1 || !Number.isInteger(chunk) || chunk < 1) {
    throw new WorkloadError(
      WorkloadErrorCode.BadOptions,
      `expected workers >= 1 and chunk >= 1, found ${workers} and ${chunk}`,
      {
        workers,
        chunk,
      },
    );
  }
  const stride = ACCOUNT_RECORD_BYTES;
  const pool = await Promise.all(Array.from({ length: workers }, () => KeyWorker.start(secp256k1Path())));
  const input = new Uint8Array(seed.length + 8);
  input.set(seed);
  const view = new DataView(input.buffer);
  let next = 0;
  const run = async (w: KeyWorker): Promise<void> => {
    while (next < count) {
      const from = next;
      const to = Math.min(count, from + chunk);
      next = to;
      const n = to - from;
      const keys = new Uint8Array(32 * n);
      for (let k = 0; k < n; k++) {
        view.setBigUint64(seed.length, BigInt(from + k));
        let key = keccak.keccak256(input);
        while (!secp256k1.privateKeyVerify(key)) key = keccak.keccak256(key);
        keys.set(key, 32 * k);
        records.set(key, (from + k) * stride);
      }
      const pubs = await w.publicKeys(keys, n);
      const offsets = new Uint32Array(n + 1);
      for (let k = 1; k <= n; k++) offsets[k] = 64 * k;
      const digests = keccak.keccak256Packed(pubs, offsets, n);
      for (let k = 0; k < n; k++) {
        records.set(digests.subarray(32 * k + 12, 32 * k + 32), (from + k) * stride + PRIVATE_KEY_BYTES);
        records.set(
          pubs.subarray(64 * k, 64 * k + 64),
          (from + k) * stride + PRIVATE_KEY_BYTES + ADDRESS_BYTES,
        );
      }
      onChunk?.(from, to);
    }
  };
  try {
    await Promise.all(pool.flatMap((w) => [run(w), run(w)]));
  } finally {
    await Promise.all(pool.map((w) => w.stop()));
  }
}
