/**
 * The on-disk cache of an {@link AccountSet}: every account's private key, address and public key, so a
 * second run with the same seed and count loads a million accounts in well under a second
 * instead of re-deriving them (~30 s, bound by secp256k1 public-key creation).
 *
 * File layout (all integers big-endian):
 *
 *   [0, 8)    magic "MNSACCT2" (the 2 is the format version; 1 had no public keys)
 *   [8, 16)   uint64 count
 *   [16, 48)  keccak256(seed): the file is for this seed only
 *   [48, 80)  keccak256(body): catches any flipped or truncated byte
 *   [80, …)   body: count records of 116 bytes, record i = private key i (32) ‖ address i (20) ‖
 *             public key i (64, x ‖ y)
 *
 * A file is trusted only if all of that checks out and a sample of records re-derives to the
 * same bytes (which also catches a file written by a different derivation rule).
 */
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { keccak } from '@monsoon/keccak';
import { ACCOUNT_RECORD_BYTES, deriveAccount } from './deriveAccount.js';
import { WorkloadError, WorkloadErrorCode } from './workloadError.js';

export { ACCOUNT_RECORD_BYTES };
/** Bytes before the first record. */
export const ACCOUNT_CACHE_HEADER_BYTES = 80;
const MAGIC = new TextEncoder().encode('MNSACCT2');
/** Records re-derived when a cache is loaded (first, last and evenly spaced between). */
const SAMPLE = 8;

/** The cache file for `count` accounts under `seed` in `cacheDir`: the name keys both. */
export function accountCacheFile(cacheDir: string, seed: Uint8Array, count: number): string {
  const tag = Buffer.from(keccak.keccak256(seed).subarray(0, 8)).toString('hex');
  return join(cacheDir, `accounts-${tag}-${count}.bin`);
}

function corrupt(file: string, what: string, meta: Record<string, unknown> = {}): never {
  throw new WorkloadError(WorkloadErrorCode.BadCache, `account cache ${file}: ${what}`, { file, ...meta });
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/**
 * The records (count × 116 bytes) stored in `file`, or `undefined` when there is no such file.
 * Throws BadCache when the file exists but fails any check.
 */
export async function readAccountCache(
  file: string,
  seed: Uint8Array,
  count: number,
): Promise<Uint8Array | undefined> {
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const expected = ACCOUNT_CACHE_HEADER_BYTES + count * ACCOUNT_RECORD_BYTES;
  if (data.length !== expected)
    corrupt(file, `expected ${expected} bytes, found ${data.length}`, { expected, found: data.length });
  if (!sameBytes(data.subarray(0, 8), MAGIC))
    corrupt(file, `bad magic ${data.subarray(0, 8).toString('hex')}`);
  const stored = data.readBigUInt64BE(8);
  if (stored !== BigInt(count))
    corrupt(file, `expected ${count} accounts, found ${stored}`, { expected: count, found: stored });
  if (!sameBytes(data.subarray(16, 48), keccak.keccak256(seed))) corrupt(file, 'written for another seed');
  const body = new Uint8Array(
    data.buffer,
    data.byteOffset + ACCOUNT_CACHE_HEADER_BYTES,
    count * ACCOUNT_RECORD_BYTES,
  );
  if (!sameBytes(data.subarray(48, 80), keccak.keccak256(body))) corrupt(file, 'body checksum mismatch');
  for (let k = 0; k < Math.min(SAMPLE, count); k++) {
    const i = count === 1 ? 0 : Math.round((k * (count - 1)) / (Math.min(SAMPLE, count) - 1));
    const { privateKey, address, publicKey } = deriveAccount(seed, i);
    const at = i * ACCOUNT_RECORD_BYTES;
    const expected = new Uint8Array(ACCOUNT_RECORD_BYTES);
    expected.set(privateKey);
    expected.set(address, privateKey.length);
    expected.set(publicKey, privateKey.length + address.length);
    if (!sameBytes(body.subarray(at, at + ACCOUNT_RECORD_BYTES), expected)) {
      corrupt(file, `account ${i} does not re-derive to the stored keys and address`, { index: i });
    }
  }
  return body;
}

/**
 * Writes `records` (count × 116 bytes) for `seed` to `file`, atomically: a temporary file in the
 * same directory, fsynced, then renamed over `file`, so a crash leaves the old file or none.
 */
export async function writeAccountCache(
  file: string,
  seed: Uint8Array,
  count: number,
  records: Uint8Array,
): Promise<void> {
  if (records.length !== count * ACCOUNT_RECORD_BYTES) {
    throw new WorkloadError(
      WorkloadErrorCode.BadOptions,
      `expected ${count * ACCOUNT_RECORD_BYTES} bytes of records for ${count} accounts, found ${records.length}`,
      { count, found: records.length },
    );
  }
  const header = new Uint8Array(ACCOUNT_CACHE_HEADER_BYTES);
  header.set(MAGIC, 0);
  new DataView(header.buffer).setBigUint64(8, BigInt(count));
  header.set(keccak.keccak256(seed), 16);
  header.set(keccak.keccak256(records), 48);
  await mkdir(join(file, '..'), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(header);
    await fh.writeFile(records);
    await fh.sync();
  } catch (e) {
    await fh.close();
    await rm(tmp, { force: true });
    throw e;
  }
  await fh.close();
  await rename(tmp, file);
}
