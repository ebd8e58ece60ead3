/**
 * Sender recovery: who signed each transaction. Recovering a secp256k1 public key is the most
 * expensive step of checking a transaction (native libsecp256k1 ≈ 15.5K/s a core here, the
 * @noble code ethereumjs uses by default ≈ 630/s), so it goes through the native library, in
 * batches, and — with {@link SenderRecoveryPool} — on worker threads, off the execution thread.
 *
 * Recovered public keys are stored in ethereumjs' own per-transaction cache
 * (`tx.cache.senderPubKey`), so `getSenderAddress()` during execution does not recover again.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { CustomCrypto } from '@ethereumjs/common';
import { Capability, TransactionType, type TypedTransaction } from '@ethereumjs/tx';
import { evmAddon, evmAddonPath, evmUnavailable } from '@monsoon/evm';
import { keccak } from '@monsoon/keccak';
import { bigintToBytes, rlpEncode } from '@monsoon/util';
import { ExecutionError, ExecutionErrorCode } from './executionError.js';
import {
  addonRecoverer,
  type PackedRecover,
  packageRecoverer,
  REQUEST_BYTES_PER_ITEM,
  REQUEST_WITH_KEYS_BYTES_PER_ITEM,
  type RecoveryRequest,
  type RecoveryWorkerData,
  type RecoveryWorkerMessage,
  recoveryWorkerSource,
  type Secp256k1Recover,
} from './recoveryWorker.js';
import { SignedTx } from './signedTx.js';
import { signatureValuesError } from './txEnvelope.js';

// ------------------------------------------------------------------ the secp256k1 library

/**
 * Which secp256k1 implementation recovery uses: libsecp256k1 inside the revm addon (a batch in
 * one call), the `secp256k1` package's C bindings, or the package's elliptic fallback.
 */
export type Secp256k1Backend = 'addon' | 'native' | 'js';

interface Secp256k1Module extends Secp256k1Recover {
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaRecover(
    signature: Uint8Array,
    recid: number,
    message: Uint8Array,
    compressed?: boolean,
    output?: Uint8Array,
  ): Uint8Array;
}

interface LoadedSecp256k1 {
  /** The `secp256k1` package (its bindings, or elliptic): one signature at a time, for ethereumjs. */
  readonly lib: Secp256k1Module;
  /** What batches are recovered with. */
  readonly backend: Secp256k1Backend;
  /** Recovers a packed batch on the calling thread. */
  readonly recover: PackedRecover;
  /** Signs a hash (see {@link ecdsaSign}). */
  readonly sign: (hash: Uint8Array, key: Uint8Array) => EcdsaSignature;
  /** What a worker thread loads to recover the way this thread does. */
  readonly worker: RecoveryWorkerData;
}

/**
 * The `secp256k1` package silently falls back to elliptic.js (~25× slower) when its native
 * bindings do not load; we load the two halves ourselves to know which we got. Batches go to
 * the revm addon's libsecp256k1 where the addon is built (~1.5× less CPU a signature than the
 * package's bindings, and one call a batch). Like MONSOON_KECCAK: unset prefers the addon, then
 * the package's bindings, then elliptic; `addon`, `native` and `js` force one and throw without it.
 */
function loadSecp256k1(mode: string | undefined): LoadedSecp256k1 {
  const require = createRequire(import.meta.url);
  const load = (specifier: string, backend: Secp256k1Backend): LoadedSecp256k1 => {
    const path = require.resolve(specifier);
    const lib = require(path) as Secp256k1Module;
    return {
      lib,
      backend,
      recover: packageRecoverer(lib),
      sign: (hash, key) => lib.ecdsaSign(hash, key),
      worker: { secp256k1Path: path },
    };
  };
  const pkg = (): LoadedSecp256k1 => {
    try {
      return load('secp256k1/bindings.js', 'native');
    } catch {
      return load('secp256k1/elliptic.js', 'js');
    }
  };
  const addon = (): LoadedSecp256k1 | undefined => {
    const evm = evmAddon();
    if (evm === undefined || typeof evm.recoverPacked !== 'function') return undefined;
    const sign = (hash: Uint8Array, key: Uint8Array): EcdsaSignature => {
      const out = new Uint8Array(65);
      evm.signRecoverable(hash, key, out);
      return { signature: out.subarray(0, 64), recid: out[64]! };
    };
    return {
      ...pkg(),
      backend: 'addon',
      recover: addonRecoverer(evm),
      sign,
      worker: { addonPath: evmAddonPath() },
    };
  };
  switch (mode ?? '') {
    case '':
      return addon() ?? pkg();
    case 'addon': {
      const loaded = addon();
      if (loaded === undefined) {
        throw new Error(
          `MONSOON_SECP256K1=addon, but ${evmUnavailable() ?? 'the revm addon has no recoverPacked'}`,
        );
      }
      return loaded;
    }
    case 'native':
      try {
        return load('secp256k1/bindings.js', 'native');
      } catch (e) {
        throw new Error(
          `MONSOON_SECP256K1=native, but secp256k1's native bindings could not be loaded (${e instanceof Error ? e.message : String(e)})`,
          { cause: e },
        );
      }
    case 'js':
      return load('secp256k1/elliptic.js', 'js');
    default:
      throw new Error(`MONSOON_SECP256K1 must be "addon", "native", "js" or unset, got "${mode}"`);
  }
}

let loadedSecp: LoadedSecp256k1 | undefined;

/**
 * The library, loaded on first use: a process that never recovers a signature (a storage node)
 * never maps the revm addon for it.
 */
function secp(): LoadedSecp256k1 {
  loadedSecp ??= loadSecp256k1(process.env.MONSOON_SECP256K1);
  return loadedSecp;
}

/** Which secp256k1 implementation is in use, for logs and benchmarks. */
export function secp256k1Backend(): Secp256k1Backend {
  return secp().backend;
}

/** A recoverable ECDSA signature: r‖s (64 bytes, low s) and the recovery id (0 or 1). */
export interface EcdsaSignature {
  readonly signature: Uint8Array;
  readonly recid: number;
}

/**
 * Signs a 32-byte hash with a 32-byte private key, RFC 6979 (deterministic): the same signature
 * as the `secp256k1` package's `ecdsaSign`, on the library recovery uses (the revm addon's
 * libsecp256k1 where it is built: 29 against 50 µs of CPU a signature). For load generators and
 * tools; nodes never sign. Throws for a key that is zero or not below the curve order.
 */
export function ecdsaSign(hash: Uint8Array, privateKey: Uint8Array): EcdsaSignature {
  return secp().sign(hash, privateKey);
}

// ------------------------------------------------------------------ ethereumjs plug-in

/** Big-endian bytes of at most 32 bytes, left-padded into `out` at `offset`. */
function putWord(out: Uint8Array, offset: number, word: Uint8Array, what: string): void {
  if (word.length > 32) {
    throw new ExecutionError(
      ExecutionErrorCode.BadSignature,
      `${what} must be at most 32 bytes, found ${word.length}`,
    );
  }
  out.set(word, offset + 32 - word.length);
}

/** `value` (< 2^256) as 32 big-endian bytes into `out` at `offset`. */
function putBigWord(out: Uint8Array, offset: number, value: bigint): void {
  out.set(bigintToBytes(value, 32), offset);
}

/**
 * ethereumjs' `ecrecover` (CustomCrypto.ecrecover) on native libsecp256k1: the sender's 64-byte
 * public key (x‖y, no 0x04 prefix). Same semantics as `@ethereumjs/util`'s: v of 0 or 1 is the
 * recovery id; otherwise v − 27, or v − (2·chainId + 35) when a chain id is given. Throws
 * BadSignature for a recovery id other than 0 or 1, r or s zero or ≥ n, or no key. Does not
 * refuse high s: the ECRECOVER precompile accepts it, and transactions check it before.
 */
export function nativeEcrecover(
  msgHash: Uint8Array,
  v: bigint,
  r: Uint8Array,
  s: Uint8Array,
  chainId?: bigint,
): Uint8Array {
  const recid = v === 0n || v === 1n ? v : chainId === undefined ? v - 27n : v - (2n * chainId + 35n);
  if (recid !== 0n && recid !== 1n) {
    const expected =
      chainId === undefined ? '0, 1, 27 or 28' : `0, 1, ${2n * chainId + 35n} or ${2n * chainId + 36n}`;
    throw new ExecutionError(ExecutionErrorCode.BadSignature, `v must be ${expected}, found ${v}`, {
      v,
      chainId,
    });
  }
  const sig = new Uint8Array(64);
  putWord(sig, 0, r, 'r');
  putWord(sig, 32, s, 's');
  try {
    return secp().lib.ecdsaRecover(sig, Number(recid), msgHash, false).subarray(1);
  } catch (e) {
    throw new ExecutionError(
      ExecutionErrorCode.BadSignature,
      `signature does not recover to a public key (${e instanceof Error ? e.message : String(e)})`,
      {},
      e,
    );
  }
}

/**
 * Native crypto for ethereumjs: `makeCommon(chainId, nativeCustomCrypto)` makes transactions,
 * blocks, the EVM's KECCAK256 and the ECRECOVER precompile use libsecp256k1 and the keccak addon.
 */
export const nativeCustomCrypto: CustomCrypto = Object.freeze({
  ecrecover: nativeEcrecover,
  keccak256: keccak.keccak256,
});

/**
 * Stores a sender public key recovered elsewhere in ethereumjs' per-transaction cache, the
 * documented `TransactionCache.senderPubKey` that `getSenderPublicKey()` (and so
 * `getSenderAddress()`, `verifySignature()`, `runTx`) returns without recovering. Like
 * ethereumjs, only for frozen transactions (the default), whose fields cannot change after.
 * The key must have been recovered from this transaction's own signature: it is trusted.
 * Returns whether it was stored.
 */
export function cacheSenderPublicKey(tx: TypedTransaction, publicKey: Uint8Array): boolean {
  if (publicKey.length !== 64) {
    throw new RangeError(`a sender public key is 64 bytes (x‖y), found ${publicKey.length}`);
  }
  if (!Object.isFrozen(tx)) return false;
  tx.cache.senderPubKey = publicKey;
  return true;
}

// ------------------------------------------------------------------ batches

/** One signature to recover, in the form the pool ships to workers. */
export interface RecoveryItem {
  /** The 32-byte hash that was signed. */
  readonly msgHash: Uint8Array;
  /** r‖s, 64 bytes. */
  readonly sig64: Uint8Array;
  /** 0 or 1 (anything else does not recover). */
  readonly recid: number;
}

/**
 * Signatures packed column-wise: hashes (32 each), r‖s (64 each), recovery ids (1 each), and
 * where every signer's key is claimed, those keys (x‖y, 64 each).
 */
interface SignatureBatch {
  readonly count: number;
  readonly hashes: Uint8Array;
  readonly sigs: Uint8Array;
  readonly recids: Uint8Array;
  readonly keys: Uint8Array | undefined;
}

/** Items [start, end) of `b` as one worker request (layout: recoveryWorker.ts). */
function packRequest(b: SignatureBatch, start: number, end: number): Uint8Array {
  const m = end - start;
  const keys = b.keys;
  const req = new Uint8Array(
    m * (keys === undefined ? REQUEST_BYTES_PER_ITEM : REQUEST_WITH_KEYS_BYTES_PER_ITEM),
  );
  req.set(b.hashes.subarray(32 * start, 32 * end), 0);
  req.set(b.sigs.subarray(64 * start, 64 * end), 32 * m);
  req.set(b.recids.subarray(start, end), 96 * m);
  if (keys !== undefined) req.set(keys.subarray(64 * start, 64 * end), 97 * m);
  return req;
}

/** Public keys of a whole batch, merged from responses: keys 64 each, then one status byte each. */
interface RecoveredKeys {
  readonly count: number;
  readonly keys: Uint8Array;
  readonly ok: Uint8Array;
}

function mergeResponses(
  count: number,
  parts: readonly { start: number; response: Uint8Array }[],
): RecoveredKeys {
  if (parts.length === 1 && parts[0]!.start === 0) {
    const r = parts[0]!.response;
    return { count, keys: r.subarray(0, 64 * count), ok: r.subarray(64 * count) };
  }
  const keys = new Uint8Array(64 * count);
  const ok = new Uint8Array(count);
  for (const { start, response } of parts) {
    const m = response.length / 65;
    keys.set(response.subarray(0, 64 * m), 64 * start);
    ok.set(response.subarray(64 * m), start);
  }
  return { count, keys, ok };
}

/** keccak256 of every key in one native call; address i is bytes 12–32 of digest i. */
function addressDigests(k: RecoveredKeys): Uint8Array {
  if (k.count === 0) return new Uint8Array(0);
  const offsets = new Uint32Array(k.count + 1);
  for (let i = 0; i <= k.count; i++) offsets[i] = 64 * i;
  const d = keccak.keccak256Packed(k.keys, offsets, k.count);
  // A plain Uint8Array view (the addon returns a Buffer), so addresses are plain Uint8Arrays.
  return new Uint8Array(d.buffer, d.byteOffset, d.length);
}

function addressAt(digests: Uint8Array, i: number): Uint8Array {
  return digests.slice(32 * i + 12, 32 * i + 32);
}

/** `items` packed; throws RangeError for wrong lengths (a caller's bug, not a bad signature). */
function batchOfItems(items: readonly RecoveryItem[]): SignatureBatch {
  const n = items.length;
  const b = {
    count: n,
    hashes: new Uint8Array(32 * n),
    sigs: new Uint8Array(64 * n),
    recids: new Uint8Array(n),
    keys: undefined,
  };
  for (let i = 0; i < n; i++) {
    const { msgHash, sig64, recid } = items[i]!;
    if (msgHash.length !== 32)
      throw new RangeError(`item ${i}: msgHash must be 32 bytes, found ${msgHash.length}`);
    if (sig64.length !== 64) throw new RangeError(`item ${i}: sig64 must be 64 bytes, found ${sig64.length}`);
    b.hashes.set(msgHash, 32 * i);
    b.sigs.set(sig64, 64 * i);
    b.recids[i] = recid === 0 || recid === 1 ? recid : 0xff;
  }
  return b;
}

/** A transaction whose sender can be recovered: an @ethereumjs/tx one, or a {@link SignedTx}. */
export type RecoverableTx = TypedTransaction | SignedTx;

/** The recovery id of a signed transaction, or why there is none. */
function recoveryId(tx: RecoverableTx): number | string {
  const signedTx = tx instanceof SignedTx;
  const { v } = tx;
  if (v === undefined || (!signedTx && (tx.r === undefined || tx.s === undefined)))
    return 'transaction is not signed (no v, r, s)';
  let recid: bigint;
  let chainId: bigint | undefined;
  if (tx.type === TransactionType.Legacy) {
    chainId = signedTx
      ? tx.chainId
      : tx.supports(Capability.EIP155ReplayProtection)
        ? tx.common.chainId()
        : undefined;
    recid = chainId !== undefined ? v - (2n * chainId + 35n) : v - 27n;
  } else recid = v;
  if (recid !== 0n && recid !== 1n) return `v must be ${expectedV(tx.type, chainId)}, found ${v}`;
  // A SignedTx's r and s are checked as bytes: read as bigints, they were most of its decode.
  return (signedTx ? tx.signatureError() : signatureValuesError(tx.r!, tx.s!)) ?? Number(recid);
}

/** What a transaction's v may be (spelled out for a refusal only: a string a transaction, else). */
function expectedV(type: number, chainId: bigint | undefined): string {
  if (type !== TransactionType.Legacy) return 'a y-parity of 0 or 1';
  if (chainId === undefined) return '27 or 28';
  const base = 2n * chainId + 35n;
  return `${base} or ${base + 1n} (EIP-155, chain ${chainId})`;
}

/** What a transaction signed: the RLP of its signing fields (legacy) or its typed payload. */
function signingPayload(tx: RecoverableTx): Uint8Array {
  if (tx instanceof SignedTx) return tx.signingPayload();
  const m = tx.getMessageToSign();
  return Array.isArray(m) ? rlpEncode(m) : m;
}

/** A batch of transactions prepared for recovery: `indices[j]` is the tx of signature j. */
interface PreparedTxs {
  readonly batch: SignatureBatch;
  readonly indices: readonly number[];
}

/**
 * The claimed keys (64 bytes each, one per transaction of `txs`) of the transactions at
 * `indices`, packed; undefined without claims. Throws RangeError for claims of the wrong length.
 */
function claimedKeysAt(
  claimed: Uint8Array | undefined,
  txs: number,
  indices: readonly number[],
): Uint8Array | undefined {
  if (claimed === undefined) return undefined;
  if (claimed.length !== 64 * txs)
    throw new RangeError(
      `claimed keys for ${txs} transactions are ${64 * txs} bytes, found ${claimed.length}`,
    );
  return indices.length === txs ? claimed : keysAt(claimed, indices);
}

/** The 64-byte keys of `keys` (packed, one per transaction) at `indices`, packed in that order. */
export function keysAt(keys: Uint8Array, indices: readonly number[]): Uint8Array {
  const out = new Uint8Array(64 * indices.length);
  for (let j = 0; j < indices.length; j++)
    out.set(keys.subarray(64 * indices[j]!, 64 * indices[j]! + 64), 64 * j);
  return out;
}

/** Checks every signature, writing refusals into `out`; packs the rest, hashing messages in one call. */
function prepareTxs(
  txs: readonly RecoverableTx[],
  out: (Uint8Array | ExecutionError)[],
  claimed?: Uint8Array,
): PreparedTxs {
  const indices: number[] = [];
  const payloads: Uint8Array[] = [];
  const recids: number[] = [];
  for (let i = 0; i < txs.length; i++) {
    const tx = txs[i]!;
    const recid = recoveryId(tx);
    if (typeof recid === 'string') {
      out[i] = new ExecutionError(ExecutionErrorCode.BadSignature, `transaction ${i}: ${recid}`, {
        index: i,
      });
      continue;
    }
    indices.push(i);
    payloads.push(signingPayload(tx));
    recids.push(recid);
  }
  const n = indices.length;
  const batch: SignatureBatch = {
    count: n,
    hashes: n === 0 ? new Uint8Array(0) : keccak.keccak256Batch(payloads),
    sigs: new Uint8Array(64 * n),
    recids: Uint8Array.from(recids),
    keys: claimedKeysAt(claimed, txs.length, indices),
  };
  for (let j = 0; j < n; j++) {
    const tx = txs[indices[j]!]!;
    if (tx instanceof SignedTx) tx.writeSignature(batch.sigs, 64 * j);
    else {
      putBigWord(batch.sigs, 64 * j, tx.r!);
      putBigWord(batch.sigs, 64 * j + 32, tx.s!);
    }
  }
  return { batch, indices };
}

/**
 * The public key each {@link SignedTx} was recovered to by {@link recoverSenders} (not the pool):
 * what a client sends with its Submit so that the miner checks instead of recovering.
 */
const recoveredKeys = new WeakMap<SignedTx, Uint8Array>();

/**
 * The 64-byte public key (x‖y) {@link recoverSenders} recovered `tx`'s signature to on this
 * thread, or undefined (not recovered there, or its signature does not recover).
 */
export function recoveredSenderKey(tx: SignedTx): Uint8Array | undefined {
  return recoveredKeys.get(tx);
}

/**
 * Fills `out` from recovered keys: the address, or BadSignature; caches each key on its
 * @ethereumjs/tx transaction (a SignedTx's sender travels beside it; with `keep`, its key is
 * kept for {@link recoveredSenderKey}).
 */
function finishTxs(
  txs: readonly RecoverableTx[],
  prepared: PreparedTxs,
  keys: RecoveredKeys,
  out: (Uint8Array | ExecutionError)[],
  keep = false,
): void {
  const digests = addressDigests(keys);
  for (let j = 0; j < prepared.indices.length; j++) {
    const i = prepared.indices[j]!;
    if (keys.ok[j] !== 1) {
      out[i] = new ExecutionError(
        ExecutionErrorCode.BadSignature,
        `transaction ${i}: signature does not recover to a public key`,
        { index: i },
      );
      continue;
    }
    const tx = txs[i]!;
    if (!(tx instanceof SignedTx)) cacheSenderPublicKey(tx, keys.keys.slice(64 * j, 64 * j + 64));
    else if (keep) recoveredKeys.set(tx, keys.keys.subarray(64 * j, 64 * j + 64));
    out[i] = addressAt(digests, j);
  }
}

/**
 * The 20-byte sender of each transaction, recovered with native secp256k1 on this thread, in one
 * batch (message hashes and address hashes each in one native keccak call). A transaction whose
 * signature is invalid (unsigned, v or recovery id out of range, r or s out of range, high s,
 * no key) gets a BadSignature ExecutionError in its slot; the batch never throws for one.
 * Each recovered public key is cached on its @ethereumjs/tx transaction (see
 * {@link cacheSenderPublicKey}); a {@link SignedTx} recovers to the same address, and (unless
 * `keepKeys` is false: a miner has no use for them) its key is kept for {@link recoveredSenderKey}.
 *
 * `claimedKeys`: the public key (x‖y) each transaction's signer is said to have, 64 bytes a
 * transaction, packed. With the revm addon they are checked in one batch, and each signature
 * recovered only if that check fails; the answer is the same whatever they say (senders always
 * come from the signatures), only its cost changes.
 */
export function recoverSenders(
  txs: readonly RecoverableTx[],
  claimedKeys?: Uint8Array,
  keepKeys = true,
): (Uint8Array | ExecutionError)[] {
  const out: (Uint8Array | ExecutionError)[] = new Array(txs.length);
  const prepared = prepareTxs(txs, out, claimedKeys);
  const { batch } = prepared;
  const response = secp().recover(packRequest(batch, 0, batch.count), batch.count, batch.keys !== undefined);
  finishTxs(txs, prepared, mergeResponses(batch.count, [{ start: 0, response }]), out, keepKeys);
  return out;
}

// ------------------------------------------------------------------ the pool

export interface SenderRecoveryPoolOptions {
  /** Worker threads; 0 recovers in-process, on the calling thread. */
  threads: number;
  /**
   * Fewest signatures sent to a worker in one message: a small batch goes to fewer workers,
   * since a message costs about as much as one recovery.
   */
  minItemsPerMessage: number;
}

/** Defaults of SenderRecoveryPoolOptions: one thread per core but one, for the execution thread. */
export const defaultSenderRecoveryPoolOptions: Readonly<SenderRecoveryPoolOptions> = Object.freeze({
  threads: Math.max(1, availableParallelism() - 1),
  minItemsPerMessage: 32,
});

interface Pending {
  readonly resolve: (response: Uint8Array) => void;
  readonly reject: (error: unknown) => void;
}

/** One worker thread and the requests it has not answered yet. */
class RecoveryThread {
  readonly pending = new Map<number, Pending>();
  /** Set by close(): the exit that follows is expected. */
  closing = false;

  private constructor(
    readonly worker: Worker,
    private readonly onFailure: (error: Error) => void,
  ) {
    worker.on('message', (m: RecoveryWorkerMessage) => {
      if (!('id' in m)) return;
      const p = this.pending.get(m.id);
      if (p === undefined) return;
      this.pending.delete(m.id);
      // An idle worker must not keep the process alive (a forgotten close() would hang it).
      if (this.pending.size === 0) worker.unref();
      p.resolve(new Uint8Array(m.buffer));
    });
    worker.on('error', (e) => this.onFailure(e));
    worker.on('exit', (code) => {
      if (!this.closing) this.onFailure(new Error(`recovery worker exited unexpectedly with code ${code}`));
    });
  }

  /** Starts a worker and waits until it has loaded secp256k1. */
  static start(onFailure: (error: Error) => void): Promise<RecoveryThread> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(recoveryWorkerSource(), {
        eval: true,
        workerData: secp().worker,
      });
      // Remove only our own listeners: Worker keeps internal ones (port referencing) on itself.
      const stopWaiting = (): void => {
        worker.off('error', onError);
        worker.off('exit', onExit);
        worker.off('message', onMessage);
      };
      const fail = (e: unknown): void => {
        stopWaiting();
        void worker.terminate();
        reject(e);
      };
      const onError = (e: Error): void => fail(e);
      const onExit = (code: number): void =>
        fail(new Error(`recovery worker exited with code ${code} before it was ready`));
      const onMessage = (m: RecoveryWorkerMessage): void => {
        if (!('ready' in m)) {
          fail(new Error(`recovery worker: expected a ready message first, found ${JSON.stringify(m)}`));
          return;
        }
        stopWaiting();
        worker.unref();
        resolve(new RecoveryThread(worker, onFailure));
      };
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.on('message', onMessage);
    });
  }

  send(request: RecoveryRequest): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(request.id, { resolve, reject });
      this.worker.postMessage(request, [request.buffer]);
    });
  }

  rejectAll(error: unknown): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}

/**
 * Recovers signatures on worker threads. A batch is split into one packed, transferred message
 * per worker (not one message per signature); workers do the curve arithmetic and the calling
 * thread hashes the keys. If a worker dies, every batch in flight and every later call rejects
 * with why (a plain Error: a broken pool is not a property of any transaction).
 */
export class SenderRecoveryPool {
  private nextId = 1;
  private nextThread = 0;
  private failure: Error | undefined;
  private closed = false;

  private constructor(
    private readonly opts: SenderRecoveryPoolOptions,
    private readonly workers: RecoveryThread[],
  ) {}

  /** Starts `threads` workers (default {@link defaultSenderRecoveryPoolOptions}) and waits until each is ready. */
  static async create(options: Partial<SenderRecoveryPoolOptions> = {}): Promise<SenderRecoveryPool> {
    const opts = { ...defaultSenderRecoveryPoolOptions, ...options };
    if (!Number.isInteger(opts.threads) || opts.threads < 0) {
      throw new RangeError(`threads must be a non-negative integer, found ${opts.threads}`);
    }
    if (!Number.isInteger(opts.minItemsPerMessage) || opts.minItemsPerMessage < 1) {
      throw new RangeError(`minItemsPerMessage must be a positive integer, found ${opts.minItemsPerMessage}`);
    }
    const workers: RecoveryThread[] = [];
    let pool: SenderRecoveryPool | undefined;
    const onFailure = (e: Error): void => pool?.fail(e);
    try {
      for (const w of await Promise.allSettled(
        Array.from({ length: opts.threads }, () => RecoveryThread.start(onFailure)),
      )) {
        if (w.status === 'rejected') throw w.reason;
        workers.push(w.value);
      }
    } catch (e) {
      await Promise.all(workers.map((w) => w.worker.terminate()));
      throw e;
    }
    pool = new SenderRecoveryPool(opts, workers);
    return pool;
  }

  /** How many worker threads recover (0: in-process). */
  get threads(): number {
    return this.workers.length;
  }

  /**
   * The 20-byte address of each item's signer, or undefined where the signature does not
   * recover (recovery id not 0/1, r or s zero or ≥ n, no key). Does not judge high s: this is
   * plain ECDSA recovery; {@link SenderRecoveryPool.recoverSenders} applies transaction rules.
   * Throws RangeError for a hash or signature of the wrong length.
   */
  async recover(items: readonly RecoveryItem[]): Promise<(Uint8Array | undefined)[]> {
    const keys = await this.recoverKeys(batchOfItems(items));
    const digests = addressDigests(keys);
    const out: (Uint8Array | undefined)[] = new Array(keys.count);
    for (let i = 0; i < keys.count; i++) out[i] = keys.ok[i] === 1 ? addressAt(digests, i) : undefined;
    return out;
  }

  /**
   * {@link recoverSenders} on the pool: same checks, same results, same caching (but for
   * {@link recoveredSenderKey}), same use of `claimedKeys`; message hashing and key hashing stay
   * on the calling thread (native, ~1 µs a transaction).
   */
  async recoverSenders(
    txs: readonly RecoverableTx[],
    claimedKeys?: Uint8Array,
  ): Promise<(Uint8Array | ExecutionError)[]> {
    const out: (Uint8Array | ExecutionError)[] = new Array(txs.length);
    const prepared = prepareTxs(txs, out, claimedKeys);
    finishTxs(txs, prepared, await this.recoverKeys(prepared.batch), out);
    return out;
  }

  /** Stops the workers. Batches still in flight reject; later calls reject. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new Error('SenderRecoveryPool closed while this batch was in flight');
    for (const w of this.workers) {
      w.closing = true;
      w.rejectAll(error);
    }
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.failure ??= error;
    for (const w of this.workers) w.rejectAll(this.failure);
  }

  private async recoverKeys(batch: SignatureBatch): Promise<RecoveredKeys> {
    if (this.closed) throw new Error('SenderRecoveryPool is closed: expected recover() before close()');
    if (this.failure !== undefined) {
      throw new Error(`SenderRecoveryPool has failed: ${this.failure.message}`, { cause: this.failure });
    }
    const n = batch.count;
    if (this.workers.length === 0 || n === 0) {
      const response = secp().recover(packRequest(batch, 0, n), n, batch.keys !== undefined);
      return mergeResponses(n, [{ start: 0, response }]);
    }
    const parts = Math.min(this.workers.length, Math.ceil(n / this.opts.minItemsPerMessage));
    const size = Math.ceil(n / parts);
    const sent: Promise<{ start: number; response: Uint8Array }>[] = [];
    for (let start = 0; start < n; start += size) {
      const end = Math.min(n, start + size);
      const request = packRequest(batch, start, end);
      const thread = this.workers[this.nextThread++ % this.workers.length]!;
      const id = this.nextId++;
      sent.push(
        thread
          .send({
            id,
            count: end - start,
            withKeys: batch.keys !== undefined,
            buffer: request.buffer as ArrayBuffer,
          })
          .then((response) => ({ start, response })),
      );
    }
    return mergeResponses(n, await Promise.all(sent));
  }
}
