/**
 * The code a sender-recovery worker thread runs, and the packed batch format it speaks.
 *
 * A batch of `m` signatures travels as ONE ArrayBuffer, transferred (not copied) both ways:
 *
 *   request  (97·m bytes): message hashes `[0, 32m)`, signatures r‖s `[32m, 96m)`,
 *                          recovery ids `[96m, 97m)` (anything but 0 or 1 is skipped)
 *   response (65·m bytes): public keys x‖y `[0, 64m)`, status `[64m, 65m)`: 1 recovered, 0 not
 *
 * A request may carry the public keys its senders are claimed to have (a client recovered them
 * and sent them with its Submit): then 64·m more bytes, x‖y `[97m, 161m)`. With the revm addon
 * the worker checks all m signatures against those keys in one batch and recovers one by one
 * only if that check fails; the response is the same bytes either way (the package ignores them).
 *
 * The worker does only the elliptic-curve part; the caller hashes all the public keys to
 * addresses in one native keccak call (~0.3 µs each), so the worker needs one module only: the
 * revm addon, whose libsecp256k1 recovers a whole batch in one call (~48 µs a signature), or
 * where that is not built the `secp256k1` package, one call per signature (~70 µs; both CPU time
 * on this project's 2-core box, same signatures).
 *
 * Why the worker is started from a string (`eval: true`) built from the functions below rather
 * than from a file: the same code then runs from compiled `dist/` and from sources under Jest
 * (where a worker file would be a `.ts` that Node cannot load), so the threaded path that the
 * tests exercise is the one production uses. The functions are therefore self-contained: they
 * may use nothing from this module's scope, only their arguments and globals. (Coverage
 * instrumentation that rewrites function bodies would break that; the default test run has none.)
 */

/** The part of the `secp256k1` package's API the worker needs. */
export interface Secp256k1Recover {
  ecdsaRecover(
    signature: Uint8Array,
    recid: number,
    message: Uint8Array,
    compressed: boolean,
    output: Uint8Array,
  ): Uint8Array;
}

/** Bytes one item takes in a request: 32 (hash) + 64 (r‖s) + 1 (recovery id). */
export const REQUEST_BYTES_PER_ITEM = 97;
/** Bytes one item takes in a request with claimed keys: {@link REQUEST_BYTES_PER_ITEM} + 64 (x‖y). */
export const REQUEST_WITH_KEYS_BYTES_PER_ITEM = 161;
/** Bytes one item takes in a response: 64 (public key) + 1 (status). */
export const RESPONSE_BYTES_PER_ITEM = 65;

/**
 * Recovers the `count` public keys of a packed request (layout in the module doc) into a new
 * packed response. Never throws for a bad signature: its status byte stays 0.
 */
export function recoverPacked(request: Uint8Array, count: number, secp: Secp256k1Recover): Uint8Array {
  const out = new Uint8Array(count * 65);
  const scratch = new Uint8Array(65);
  const sigBase = 32 * count;
  const recidBase = 96 * count;
  const statusBase = 64 * count;
  for (let i = 0; i < count; i++) {
    const recid = request[recidBase + i];
    if (recid !== 0 && recid !== 1) continue;
    try {
      secp.ecdsaRecover(
        request.subarray(sigBase + 64 * i, sigBase + 64 * i + 64),
        recid,
        request.subarray(32 * i, 32 * i + 32),
        false,
        scratch,
      );
    } catch {
      // r or s zero or ≥ n, or no point for this r: not recoverable, status stays 0.
      continue;
    }
    out.set(scratch.subarray(1), 64 * i);
    out[statusBase + i] = 1;
  }
  return out;
}

/**
 * Recovers a packed request of `count` signatures into a new packed response (layout above);
 * `withKeys`: the request carries claimed keys.
 */
export type PackedRecover = (request: Uint8Array, count: number, withKeys?: boolean) => Uint8Array;

/** The part of the revm addon's API recovery needs (native/evm, src/recover.rs, src/batch_verify.rs). */
export interface AddonRecover {
  recoverPacked(request: Uint8Array, count: number, out: Uint8Array): void;
  recoverPackedWithKeys?(request: Uint8Array, count: number, out: Uint8Array): void;
}

/** {@link PackedRecover} on the revm addon: the whole batch in one call (claimed keys checked in one batch). */
export function addonRecoverer(addon: AddonRecover): PackedRecover {
  return (request, count, withKeys) => {
    const out = new Uint8Array(count * 65);
    if (!withKeys) addon.recoverPacked(request, count, out);
    else if (addon.recoverPackedWithKeys !== undefined) addon.recoverPackedWithKeys(request, count, out);
    else addon.recoverPacked(request.subarray(0, 97 * count), count, out);
    return out;
  };
}

/**
 * {@link PackedRecover} on the `secp256k1` package: {@link recoverPacked}, one call per signature
 * (claimed keys, which follow the first 97·count bytes, are not read).
 */
export function packageRecoverer(secp: Secp256k1Recover): PackedRecover {
  return (request, count) => recoverPacked(request, count, secp);
}

/** A request posted to a worker. */
export interface RecoveryRequest {
  readonly id: number;
  readonly count: number;
  /** The request carries claimed keys (161·count bytes, not 97·count). */
  readonly withKeys: boolean;
  readonly buffer: ArrayBuffer;
}

/** What a worker posts back: `ready` once after loading secp256k1, then one response per request. */
export type RecoveryWorkerMessage =
  | { readonly ready: true }
  | { readonly id: number; readonly buffer: ArrayBuffer };

/** The minimal MessagePort surface the worker body uses. */
export interface RecoveryWorkerPort {
  on(event: 'message', listener: (request: RecoveryRequest) => void): unknown;
  postMessage(message: RecoveryWorkerMessage, transfer?: ArrayBuffer[]): void;
}

/** What a worker is started with: the module it recovers with, by absolute path. */
export type RecoveryWorkerData = { readonly addonPath: string } | { readonly secp256k1Path: string };

/**
 * The recoverer a worker loads from its {@link RecoveryWorkerData}. Refers to `addonRecoverer`,
 * `packageRecoverer` and `recoverPacked` by name: the worker source defines them side by side.
 */
export function workerRecoverer(data: RecoveryWorkerData, load: (path: string) => unknown): PackedRecover {
  return 'addonPath' in data
    ? addonRecoverer(load(data.addonPath) as AddonRecover)
    : packageRecoverer(load(data.secp256k1Path) as Secp256k1Recover);
}

/** A worker's body: answers each request with `recover`, transferring the response. */
export function recoveryWorkerMain(port: RecoveryWorkerPort, recover: PackedRecover): void {
  port.on('message', (request) => {
    const out = recover(new Uint8Array(request.buffer), request.count, request.withKeys);
    port.postMessage({ id: request.id, buffer: out.buffer as ArrayBuffer }, [out.buffer as ArrayBuffer]);
  });
  port.postMessage({ ready: true });
}

/**
 * The source of a worker started with `new Worker(source, { eval: true, workerData })`, where
 * `workerData` is a {@link RecoveryWorkerData}: the module the main thread recovers with, so
 * that workers use what it uses.
 */
export function recoveryWorkerSource(): string {
  return [
    "'use strict';",
    "const { parentPort, workerData } = require('node:worker_threads');",
    recoverPacked.toString(),
    addonRecoverer.toString(),
    packageRecoverer.toString(),
    workerRecoverer.toString(),
    `(${recoveryWorkerMain.toString()})(parentPort, workerRecoverer(workerData, require));`,
  ].join('\n');
}
