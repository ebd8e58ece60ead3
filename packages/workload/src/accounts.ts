/**
 * The load test's accounts: a deterministic set of `count` key pairs derived from a seed (see
 * {@link deriveAccount}), kept in one packed buffer, optionally cached on disk.
 */
import { availableParallelism } from 'node:os';
import {
  ACCOUNT_RECORD_BYTES,
  accountCacheFile,
  readAccountCache,
  writeAccountCache,
} from './accountCache.js';
import { ADDRESS_BYTES, deriveAccountRecords, PRIVATE_KEY_BYTES, PUBLIC_KEY_BYTES } from './deriveAccount.js';
import { deriveAccountRecordsInWorkers } from './publicKeyWorkers.js';
import { isWorkloadError, WorkloadError, WorkloadErrorCode } from './workloadError.js';

/** Called during long derivations with the number of accounts done so far. */
export type ProgressCallback = (done: number, total: number) => void;

/** Options of {@link AccountSet.create}. */
export interface AccountSetOptions {
  /** Any bytes; the same seed always gives the same accounts. */
  readonly seed: Uint8Array;
  /** How many accounts: indices 0 … count-1. */
  readonly count: number;
  /**
   * Directory for the cache file (created if missing). With it, create() loads the whole set
   * from the cache, or derives it all and writes the cache.
   */
  readonly cacheDir?: string;
  /** Derive every account in create() (default: only when `cacheDir` is set; otherwise on first use). */
  readonly eager?: boolean;
  /** Progress of an up-front derivation, every {@link ACCOUNT_PROGRESS_STEP} accounts and at the end. */
  readonly onProgress?: ProgressCallback;
  /**
   * Worker threads for deriving many accounts at once (default {@link defaultDerivationWorkers}:
   * one per CPU, at most 8); 0 derives on the calling thread. Runs shorter than
   * {@link PARALLEL_MIN_ACCOUNTS} always stay on the calling thread. Same accounts either way.
   */
  readonly workers?: number;
}

/** How create() got the accounts: no cache involved, loaded from it, derived and written, or a bad file replaced. */
export type AccountCacheStatus = 'none' | 'loaded' | 'created' | 'rebuilt';

/** Accounts derived between two progress callbacks (and between two yields to the event loop). */
export const ACCOUNT_PROGRESS_STEP = 16_384;

/** Fewer accounts than this to derive are not worth starting worker threads for (~30 ms each). */
export const PARALLEL_MIN_ACCOUNTS = 32_768;

/** Worker threads a derivation uses by default: one per CPU, at most 8. */
export function defaultDerivationWorkers(): number {
  return Math.min(8, availableParallelism());
}

/** A deterministic set of accounts: index → private key, address. */
export class AccountSet {
  /** The seed the accounts derive from. */
  readonly seed: Uint8Array;
  /** Number of accounts. */
  readonly count: number;
  /** Where the accounts came from (see {@link AccountCacheStatus}). */
  readonly cacheStatus: AccountCacheStatus;
  /** The cache file, when there is one. */
  readonly cacheFile: string | undefined;
  /** Record i (116 bytes at 116·i) = private key i ‖ address i ‖ public key i; zero until derived. */
  private readonly records: Uint8Array;
  /** Per account, 1 once derived; `undefined` once all are. */
  private derived: Uint8Array | undefined;
  private derivedSoFar: number;
  private readonly workers: number;

  private constructor(
    seed: Uint8Array,
    count: number,
    records: Uint8Array,
    complete: boolean,
    cacheStatus: AccountCacheStatus,
    cacheFile: string | undefined,
    workers: number,
  ) {
    this.workers = workers;
    this.seed = seed;
    this.count = count;
    this.records = records;
    this.derived = complete ? undefined : new Uint8Array(count);
    this.derivedSoFar = complete ? count : 0;
    this.cacheStatus = cacheStatus;
    this.cacheFile = cacheFile;
  }

  /**
   * A set of `count` accounts under `seed`. With `cacheDir`, loads the cache file for this seed
   * and count if it is valid, else derives everything and (re)writes it; a damaged file is
   * replaced, not an error. Without, derives lazily unless `eager`.
   */
  static async create(opts: AccountSetOptions): Promise<AccountSet> {
    const { seed, count, cacheDir, onProgress, workers = defaultDerivationWorkers() } = opts;
    if (!Number.isSafeInteger(count) || count < 1) {
      throw new WorkloadError(
        WorkloadErrorCode.BadOptions,
        `count: expected a positive integer, found ${count}`,
        { count },
      );
    }
    if (!Number.isInteger(workers) || workers < 0) {
      throw new WorkloadError(
        WorkloadErrorCode.BadOptions,
        `workers: expected an integer >= 0, found ${workers}`,
        { workers },
      );
    }
    const seedCopy = Uint8Array.from(seed);
    const fresh = (status: AccountCacheStatus, file: string | undefined) =>
      new AccountSet(
        seedCopy,
        count,
        new Uint8Array(count * ACCOUNT_RECORD_BYTES),
        false,
        status,
        file,
        workers,
      );
    if (cacheDir === undefined) {
      const set = fresh('none', undefined);
      if (opts.eager) await set.deriveAll(onProgress);
      return set;
    }
    const file = accountCacheFile(cacheDir, seedCopy, count);
    let status: AccountCacheStatus = 'created';
    try {
      const records = await readAccountCache(file, seedCopy, count);
      if (records !== undefined) {
        onProgress?.(count, count);
        return new AccountSet(seedCopy, count, records, true, 'loaded', file, workers);
      }
    } catch (e) {
      if (!isWorkloadError(e, WorkloadErrorCode.BadCache)) throw e;
      status = 'rebuilt';
    }
    const set = fresh(status, file);
    await set.deriveAll(onProgress);
    await writeAccountCache(file, seedCopy, count, set.records);
    return set;
  }

  /** Accounts derived so far (`count` once all are). */
  get derivedCount(): number {
    return this.derivedSoFar;
  }

  /**
   * Derives every account not derived yet: on worker threads when there are many (see
   * {@link AccountSetOptions.workers}), else on this thread, yielding to the event loop every
   * {@link ACCOUNT_PROGRESS_STEP} accounts so progress can be shown.
   */
  async deriveAll(onProgress?: ProgressCallback): Promise<void> {
    const derived = this.derived;
    if (derived === undefined) {
      onProgress?.(this.count, this.count);
      return;
    }
    if (this.workers > 0 && this.count - this.derivedSoFar >= PARALLEL_MIN_ACCOUNTS) {
      // Re-deriving the few accounts already derived lazily writes the same bytes again.
      let done = 0;
      await deriveAccountRecordsInWorkers(this.seed, this.count, this.records, {
        workers: this.workers,
        chunk: ACCOUNT_PROGRESS_STEP,
        onChunk: (from, to) => {
          done += to - from;
          onProgress?.(done, this.count);
        },
      });
      this.derived = undefined;
      this.derivedSoFar = this.count;
      return;
    }
    for (let from = 0; from < this.count; from += ACCOUNT_PROGRESS_STEP) {
      const to = Math.min(this.count, from + ACCOUNT_PROGRESS_STEP);
      // Runs of not-yet-derived accounts go through the batched path.
      let i = from;
      while (i < to) {
        if (derived[i]) {
          i++;
          continue;
        }
        let j = i;
        while (j < to && !derived[j]) j++;
        deriveAccountRecords(this.seed, i, j, this.records);
        derived.fill(1, i, j);
        this.derivedSoFar += j - i;
        i = j;
      }
      onProgress?.(to, this.count);
      if (to < this.count) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.derived = undefined;
  }

  /** Account `index`'s 32-byte private key: a view into the set's buffer, do not modify it. */
  privateKey(index: number): Uint8Array {
    const at = this.ensure(index);
    return this.records.subarray(at, at + PRIVATE_KEY_BYTES);
  }

  /** Account `index`'s 20-byte address: a view into the set's buffer, do not modify it. */
  address(index: number): Uint8Array {
    const at = this.ensure(index) + PRIVATE_KEY_BYTES;
    return this.records.subarray(at, at + ADDRESS_BYTES);
  }

  /**
   * Account `index`'s 64-byte public key (x ‖ y): a view into the set's buffer, do not modify it.
   * What a load driver sends beside a transaction so that a client checks its signature
   * instead of recovering it.
   */
  publicKey(index: number): Uint8Array {
    const at = this.ensure(index) + PRIVATE_KEY_BYTES + ADDRESS_BYTES;
    return this.records.subarray(at, at + PUBLIC_KEY_BYTES);
  }

  /** The record offset of `index`, deriving it first when needed. */
  private ensure(index: number): number {
    if (!Number.isInteger(index) || index < 0 || index >= this.count) {
      throw new WorkloadError(
        WorkloadErrorCode.BadIndex,
        `account index: expected an integer in [0, ${this.count}), found ${index}`,
        {
          index,
          count: this.count,
        },
      );
    }
    const derived = this.derived;
    if (derived !== undefined && !derived[index]) {
      deriveAccountRecords(this.seed, index, index + 1, this.records);
      derived[index] = 1;
      this.derivedSoFar++;
      if (this.derivedSoFar === this.count) this.derived = undefined;
    }
    return index * ACCOUNT_RECORD_BYTES;
  }
}
