import { createRequire } from 'node:module';

/** One block's engine inside the addon (src/lib.rs `Engine`); see {@link EvmAddon}. */
export interface EngineBinding {
  /** Applies state records (see `encodeRecords` in protocol.ts). */
  feed(records: Uint8Array): void;
  /**
   * Feeds `records`, runs one encoded transaction, and copies its encoded result into `out`
   * when it fits. Returns the result's length either way: a longer one is fetched with `result`.
   */
  execute(tx: Uint8Array, records: Uint8Array, out: Uint8Array): number;
  /**
   * Feeds `records`, runs the encoded batch's transactions in order from index `from` (see
   * `TxWriter.encodeBatch`, `decodeBatchResult`), and copies the answer into `out` as `execute`.
   */
  executeBatch(batch: Uint8Array, from: number, records: Uint8Array, out: Uint8Array): number;
  /** Copies the last result into `out` (as long as `execute` said); returns its length. */
  result(out: Uint8Array): number;
  /** The last executed transaction's changes become the state the next one reads. */
  commit(): void;
  /** Drops the last executed transaction's changes. */
  discard(): void;
  /** Makes this engine a new one for another block (constructor's `config`), its state dropped. */
  reset(config: Uint8Array): void;
  /**
   * Transactions of batches whose run ahead was taken instead of running them again (nothing
   * that run read had changed), since the engine was made or reset.
   */
  reused(): number;
}

/** The addon's exports. */
export interface EvmAddon {
  Engine: new (config: Uint8Array) => EngineBinding;
  /**
   * Recovers a packed batch of `count` signatures on libsecp256k1 (src/recover.rs): `request`
   * is 97·count bytes, `out` 65·count (layout: packages/execution/src/recoveryWorker.ts).
   */
  recoverPacked(request: Uint8Array, count: number, out: Uint8Array): void;
  /**
   * `recoverPacked` for a request followed by the 64-byte keys its senders are claimed to have
   * (161·count bytes; src/batch_verify.rs): the claimed keys if one batch check under fresh random
   * weights passes, else `recoverPacked`'s answer. Byte for byte `recoverPacked`'s either way.
   */
  recoverPackedWithKeys(request: Uint8Array, count: number, out: Uint8Array): void;
  /**
   * The batch check alone with fixed `weights` (16·count bytes) and bucket window (0: default),
   * for tests and benchmarks: whether every signature was made by its claimed key. `jacobian`:
   * libsecp256k1's own Pippenger (Jacobian buckets) instead of the affine-bucket one nodes use.
   */
  batchVerifyPacked(
    request: Uint8Array,
    count: number,
    weights: Uint8Array,
    window: number,
    jacobian?: boolean,
  ): boolean;
  /** Signs a 32-byte hash with a 32-byte key (RFC 6979, low s): r‖s and the recovery id into `out` (65). */
  signRecoverable(hash: Uint8Array, key: Uint8Array, out: Uint8Array): void;
}

/** Where scripts/build.mjs puts the addon; src/ and dist/ are both one level below the package root. */
export const EVM_ADDON_PATH = '../build/evm.node';

/** The loaded addon, or why it could not be loaded (not built: no cargo, or MONSOON_SKIP_EVM_BUILD). */
export type EvmLoad = { addon: EvmAddon; error?: undefined } | { addon?: undefined; error: unknown };

/** The addon's absolute path, for a worker thread that loads it on its own. */
export function evmAddonPath(): string {
  return createRequire(import.meta.url).resolve(EVM_ADDON_PATH);
}

/** Loads the addon without throwing. */
export function loadEvm(): EvmLoad {
  try {
    return { addon: createRequire(import.meta.url)(EVM_ADDON_PATH) as EvmAddon };
  } catch (error) {
    return { error };
  }
}

let loaded: EvmLoad | undefined;

/**
 * The addon, loaded on first use, or undefined where it is not built. Lazy on purpose: a
 * process that never runs revm (storage nodes, the cluster, roles on the default engine) never
 * maps the library.
 */
export function evmAddon(): EvmAddon | undefined {
  loaded ??= loadEvm();
  return loaded.addon;
}

/** Why the addon is not there (undefined when it is); loads it like {@link evmAddon}. */
export function evmUnavailable(): string | undefined {
  loaded ??= loadEvm();
  return loaded.addon === undefined
    ? `the revm addon (native/evm/build/evm.node) is not built: ${String((loaded.error as Error)?.message ?? loaded.error).split('\n')[0]}`
    : undefined;
}
