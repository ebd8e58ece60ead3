/** AccountSet: the derivation rule, determinism, lazy and eager derivation, and the on-disk cache. */

import { open, readFile, stat, truncate } from 'node:fs/promises';
import { privateToAddress, privateToPublic } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { makeTmpDir, removeDir } from '@monsoon/test-utils';
import { toHex as hex } from '@monsoon/util';
import {
  ACCOUNT_CACHE_HEADER_BYTES,
  ACCOUNT_RECORD_BYTES,
  AccountSet,
  accountCacheFile,
  deriveAccount,
  deriveAccountRecords,
  isWorkloadError,
  PARALLEL_MIN_ACCOUNTS,
  readAccountCache,
  WorkloadErrorCode,
  writeAccountCache,
} from '@monsoon/workload';
import { keccak_256 } from '@noble/hashes/sha3.js';

const SEED = new TextEncoder().encode('accounts test');
const OTHER_SEED = new TextEncoder().encode('accounts test 2');

function addresses(set: AccountSet): string[] {
  return Array.from({ length: set.count }, (_, i) => hex(set.address(i)));
}

async function flipByte(file: string, offset: number): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, offset);
    b[0]! ^= 0x01;
    await fh.write(b, 0, 1, offset);
  } finally {
    await fh.close();
  }
}

async function withTmpDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await makeTmpDir();
  try {
    await fn(dir);
  } finally {
    await removeDir(dir);
  }
}

describe('account derivation', () => {
  it('private key i is keccak256(seed ‖ uint64be(i))', () => {
    for (const i of [0, 1, 255, 256, 2 ** 32 + 7]) {
      const input = new Uint8Array(SEED.length + 8);
      input.set(SEED);
      new DataView(input.buffer).setBigUint64(SEED.length, BigInt(i));
      expect(hex(deriveAccount(SEED, i).privateKey)).toBe(hex(keccak_256(input)));
    }
  });

  it('addresses match @ethereumjs/util privateToAddress', async () => {
    const set = await AccountSet.create({ seed: SEED, count: 64, eager: true });
    for (let i = 0; i < set.count; i++) {
      expect(hex(set.address(i))).toBe(hex(privateToAddress(set.privateKey(i))));
    }
  });

  it('the batched path equals one-at-a-time derivation', () => {
    const records = new Uint8Array(40 * ACCOUNT_RECORD_BYTES);
    deriveAccountRecords(SEED, 10, 40, records);
    expect(records.subarray(0, 10 * ACCOUNT_RECORD_BYTES).every((b) => b === 0)).toBe(true);
    for (let i = 10; i < 40; i++) {
      const { privateKey, address, publicKey } = deriveAccount(SEED, i);
      expect(hex(records.subarray(i * ACCOUNT_RECORD_BYTES, (i + 1) * ACCOUNT_RECORD_BYTES))).toBe(
        hex(privateKey) + hex(address) + hex(publicKey),
      );
    }
  });

  it('keeps each public key (x ‖ y): what @ethereumjs/util derives, lazily or eagerly', async () => {
    const eager = await AccountSet.create({ seed: SEED, count: 64, eager: true });
    const lazy = await AccountSet.create({ seed: SEED, count: 64 });
    for (let i = 0; i < eager.count; i++) {
      expect(hex(eager.publicKey(i))).toBe(hex(privateToPublic(eager.privateKey(i))));
      expect(hex(lazy.publicKey(63 - i))).toBe(hex(privateToPublic(eager.privateKey(63 - i))));
      expect(hex(deriveAccount(SEED, i).publicKey)).toBe(hex(eager.publicKey(i)));
    }
  });

  it('is deterministic per seed, and different seeds give different accounts', async () => {
    const a = await AccountSet.create({ seed: SEED, count: 100, eager: true });
    const b = await AccountSet.create({ seed: Uint8Array.from(SEED), count: 100 });
    const c = await AccountSet.create({ seed: OTHER_SEED, count: 100, eager: true });
    expect(addresses(b)).toEqual(addresses(a));
    expect(new Set(addresses(a)).size).toBe(100);
    const shared = addresses(c).filter((x) => addresses(a).includes(x));
    expect(shared).toEqual([]);
  });

  it('derives lazily: only the accounts used, with the same result as eager', async () => {
    const lazy = await AccountSet.create({ seed: SEED, count: 1000 });
    expect(lazy.derivedCount).toBe(0);
    const k7 = hex(lazy.privateKey(7));
    lazy.address(7);
    lazy.address(999);
    expect(lazy.derivedCount).toBe(2);
    expect(k7).toBe(hex(deriveAccount(SEED, 7).privateKey));
    const progress: number[] = [];
    await lazy.deriveAll((done, total) => {
      expect(total).toBe(1000);
      progress.push(done);
    });
    expect(lazy.derivedCount).toBe(1000);
    expect(progress.at(-1)).toBe(1000);
    const eager = await AccountSet.create({ seed: SEED, count: 1000, eager: true });
    expect(addresses(lazy)).toEqual(addresses(eager));
  });

  it('derives the same accounts on worker threads as on the calling thread, with progress', async () => {
    const count = PARALLEL_MIN_ACCOUNTS + 7_000;
    const progress: number[] = [];
    const single = await AccountSet.create({
      seed: SEED,
      count,
      eager: true,
      workers: 0,
      onProgress: (d) => progress.push(d),
    });
    expect(progress).toEqual([16_384, 32_768, count]);

    // Lazily derived accounts first, then the rest on two workers.
    const parallelProgress: number[] = [];
    const parallel = await AccountSet.create({ seed: SEED, count, workers: 2 });
    const early = hex(parallel.address(5));
    await parallel.deriveAll((d, total) => {
      expect(total).toBe(count);
      parallelProgress.push(d);
    });
    expect(parallel.derivedCount).toBe(count);
    expect(parallelProgress).toHaveLength(3);
    expect(parallelProgress.at(-1)).toBe(count);
    expect(early).toBe(hex(single.address(5)));
    let differ = 0;
    for (let i = 0; i < count; i++) {
      if (
        hex(parallel.privateKey(i)) !== hex(single.privateKey(i)) ||
        hex(parallel.address(i)) !== hex(single.address(i)) ||
        hex(parallel.publicKey(i)) !== hex(single.publicKey(i))
      )
        differ++;
    }
    expect(differ).toBe(0);
  });

  it('refuses bad counts and indices with coded errors', async () => {
    await expect(AccountSet.create({ seed: SEED, count: 0 })).rejects.toMatchObject({
      code: WorkloadErrorCode.BadOptions,
    });
    const set = await AccountSet.create({ seed: SEED, count: 5 });
    for (const i of [-1, 5, 1.5, Number.NaN]) {
      expect(() => set.address(i)).toThrow(expect.objectContaining({ code: WorkloadErrorCode.BadIndex }));
    }
  });
});

describe('account cache', () => {
  const COUNT = 300;

  it('is written once, then loaded with identical accounts', async () => {
    await withTmpDir(async (dir) => {
      const first = await AccountSet.create({ seed: SEED, count: COUNT, cacheDir: dir });
      expect(first.cacheStatus).toBe('created');
      expect(first.cacheFile).toBe(accountCacheFile(dir, SEED, COUNT));
      expect((await stat(first.cacheFile!)).size).toBe(
        ACCOUNT_CACHE_HEADER_BYTES + COUNT * ACCOUNT_RECORD_BYTES,
      );

      const progress: number[] = [];
      const second = await AccountSet.create({
        seed: SEED,
        count: COUNT,
        cacheDir: dir,
        onProgress: (d) => progress.push(d),
      });
      expect(second.cacheStatus).toBe('loaded');
      expect(second.derivedCount).toBe(COUNT);
      expect(progress).toEqual([COUNT]);
      expect(addresses(second)).toEqual(addresses(first));
      for (const i of [0, 123, COUNT - 1]) {
        expect(hex(second.privateKey(i))).toBe(hex(deriveAccount(SEED, i).privateKey));
        expect(hex(second.publicKey(i))).toBe(hex(deriveAccount(SEED, i).publicKey));
      }
    });
  });

  it('keys the file by seed and count', async () => {
    await withTmpDir(async (dir) => {
      const a = await AccountSet.create({ seed: SEED, count: COUNT, cacheDir: dir });
      const b = await AccountSet.create({ seed: OTHER_SEED, count: COUNT, cacheDir: dir });
      const c = await AccountSet.create({ seed: SEED, count: COUNT + 1, cacheDir: dir });
      expect(new Set([a.cacheFile, b.cacheFile, c.cacheFile]).size).toBe(3);
      expect([a.cacheStatus, b.cacheStatus, c.cacheStatus]).toEqual(['created', 'created', 'created']);
    });
  });

  /** Damages the cache with `damage`, then checks the next create() detects it, rebuilds and rewrites the file. */
  async function expectRebuilt(damage: (file: string) => Promise<void>): Promise<void> {
    await withTmpDir(async (dir) => {
      const good = await AccountSet.create({ seed: SEED, count: COUNT, cacheDir: dir });
      const file = good.cacheFile!;
      const goodBytes = await readFile(file);
      await damage(file);
      expect((await readFile(file)).equals(goodBytes)).toBe(false);

      const rebuilt = await AccountSet.create({ seed: SEED, count: COUNT, cacheDir: dir });
      expect(rebuilt.cacheStatus).toBe('rebuilt');
      expect(addresses(rebuilt)).toEqual(addresses(good));
      expect((await readFile(file)).equals(goodBytes)).toBe(true);
      expect((await AccountSet.create({ seed: SEED, count: COUNT, cacheDir: dir })).cacheStatus).toBe(
        'loaded',
      );
    });
  }

  it('detects a flipped byte in an account not re-derived on load', async () => {
    // Account 100 is not among the 8 sampled ones (0, 43, 85, 128, …); the checksum catches it.
    await expectRebuilt((file) =>
      flipByte(file, ACCOUNT_CACHE_HEADER_BYTES + 100 * ACCOUNT_RECORD_BYTES + 40),
    );
  });

  it('detects a flipped header byte (magic, count, seed hash, checksum)', async () => {
    for (const offset of [0, 15, 20, 60]) await expectRebuilt((file) => flipByte(file, offset));
  });

  it('detects a truncated file', async () => {
    await expectRebuilt((file) => truncate(file, ACCOUNT_CACHE_HEADER_BYTES + 10 * ACCOUNT_RECORD_BYTES));
  });

  it('detects a well-formed file whose keys are not the seed’s (a different derivation)', async () => {
    await expectRebuilt(async (file) => {
      const wrong = new Uint8Array(COUNT * ACCOUNT_RECORD_BYTES);
      deriveAccountRecords(OTHER_SEED, 0, COUNT, wrong);
      await writeAccountCache(file, SEED, COUNT, wrong); // valid checksum, header for SEED
    });
  });

  it('detects a well-formed file whose public key of a sampled account is wrong', async () => {
    await expectRebuilt(async (file) => {
      const records = (await readAccountCache(file, SEED, COUNT))!.slice();
      // A byte of the last account's public key (the last account is always re-derived on load).
      records[(COUNT - 1) * ACCOUNT_RECORD_BYTES + 80]! ^= 0x01;
      await writeAccountCache(file, SEED, COUNT, records);
    });
  });

  it('replaces a file of the previous format (no public keys) with a new one', async () => {
    await expectRebuilt(async (file) => {
      // Format 1: magic MNSACCT1, 52-byte records (private key ‖ address), its own checksum.
      const records = (await readAccountCache(file, SEED, COUNT))!;
      const old = new Uint8Array(COUNT * 52);
      for (let i = 0; i < COUNT; i++)
        old.set(records.subarray(i * ACCOUNT_RECORD_BYTES, i * ACCOUNT_RECORD_BYTES + 52), 52 * i);
      const header = new Uint8Array(ACCOUNT_CACHE_HEADER_BYTES);
      header.set(new TextEncoder().encode('MNSACCT1'));
      new DataView(header.buffer).setBigUint64(8, BigInt(COUNT));
      header.set(keccak_256(SEED), 16);
      header.set(keccak_256(old), 48);
      const fh = await open(file, 'w');
      await fh.write(header);
      await fh.write(old);
      await fh.close();
    });
  });

  it('a cache error is coded BAD_CACHE', async () => {
    await withTmpDir(async (dir) => {
      const set = await AccountSet.create({ seed: SEED, count: COUNT, cacheDir: dir });
      await flipByte(set.cacheFile!, 70);
      const err = await readAccountCache(set.cacheFile!, SEED, COUNT).catch((e: unknown) => e);
      expect(isWorkloadError(err, WorkloadErrorCode.BadCache)).toBe(true);
      expect(String((err as Error).message)).toContain('checksum');
      expect(await readAccountCache(`${set.cacheFile}.missing`, SEED, COUNT)).toBeUndefined();
    });
  });
});
