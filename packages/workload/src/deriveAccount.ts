/**
 * How the workload's accounts are made: private key i is keccak256(seed ‖ uint64be(i)),
 * re-hashed until it is a valid secp256k1 scalar (in [1, n), so a re-hash happens with
 * probability ~2^-128), and its address is the last 20 bytes of keccak256 of the 64-byte
 * uncompressed public key (x ‖ y), as Ethereum defines it. The public key is kept too: a load
 * driver sends it with each transaction so a client checks signatures instead of recovering them.
 */
import { keccak } from '@monsoon/keccak';
import secp256k1 from 'secp256k1';
import { WorkloadError, WorkloadErrorCode } from './workloadError.js';

/** A private key, its address and its public key. */
export interface DerivedAccount {
  /** 32 bytes. */
  readonly privateKey: Uint8Array;
  /** 20 bytes. */
  readonly address: Uint8Array;
  /** 64 bytes: x ‖ y. */
  readonly publicKey: Uint8Array;
}

/** Bytes of a private key. */
export const PRIVATE_KEY_BYTES = 32;
/** Bytes of an address. */
export const ADDRESS_BYTES = 20;
/** Bytes of an uncompressed public key without its 0x04 prefix (x ‖ y). */
export const PUBLIC_KEY_BYTES = 64;
/** Bytes of one account record: private key ‖ address ‖ public key. */
export const ACCOUNT_RECORD_BYTES = PRIVATE_KEY_BYTES + ADDRESS_BYTES + PUBLIC_KEY_BYTES;

/** The largest index {@link deriveAccount} accepts (indices are encoded as uint64). */
export const MAX_ACCOUNT_INDEX = Number.MAX_SAFE_INTEGER;

/** The private key of account `index` under `seed`. */
export function derivePrivateKey(seed: Uint8Array, index: number): Uint8Array {
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new WorkloadError(
      WorkloadErrorCode.BadIndex,
      `expected an integer index in [0, 2^53), found ${index}`,
      { index },
    );
  }
  const input = new Uint8Array(seed.length + 8);
  input.set(seed);
  new DataView(input.buffer).setBigUint64(seed.length, BigInt(index));
  let key = keccak.keccak256(input);
  while (!secp256k1.privateKeyVerify(key)) key = keccak.keccak256(key);
  return key;
}

/** The public key (x ‖ y, 64 bytes) of a private key. */
export function privateKeyToPublicKey(privateKey: Uint8Array): Uint8Array {
  return secp256k1.publicKeyCreate(privateKey, false).subarray(1); // drops the 0x04
}

/** The Ethereum address of a private key (20 bytes). */
export function privateKeyToAddress(privateKey: Uint8Array): Uint8Array {
  return keccak.keccak256(privateKeyToPublicKey(privateKey)).subarray(12);
}

/** Account `index` under `seed`. */
export function deriveAccount(seed: Uint8Array, index: number): DerivedAccount {
  const privateKey = derivePrivateKey(seed, index);
  const publicKey = privateKeyToPublicKey(privateKey);
  return { privateKey, address: keccak.keccak256(publicKey).subarray(12), publicKey };
}

/**
 * Derives accounts [from, to) into `records` as {@link ACCOUNT_RECORD_BYTES}-byte records
 * (private key ‖ address ‖ public key), record i at byte 116·i. The bulk path of {@link deriveAccount}: same result, but the address hashes of
 * the whole range go to native keccak in one call and buffers are reused.
 */
export function deriveAccountRecords(seed: Uint8Array, from: number, to: number, records: Uint8Array): void {
  const n = to - from;
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || n < 0) {
    throw new WorkloadError(WorkloadErrorCode.BadIndex, `expected 0 <= from <= to, found [${from}, ${to})`, {
      from,
      to,
    });
  }
  const stride = ACCOUNT_RECORD_BYTES;
  if (records.length < to * stride) {
    throw new WorkloadError(
      WorkloadErrorCode.BadOptions,
      `records hold ${Math.floor(records.length / stride)} accounts, need ${to}`,
      {
        found: records.length,
        expected: to * stride,
      },
    );
  }
  const input = new Uint8Array(seed.length + 8);
  input.set(seed);
  const view = new DataView(input.buffer);
  const pubs = new Uint8Array(64 * n);
  const offsets = new Uint32Array(n + 1);
  const pub = new Uint8Array(65);
  for (let k = 0; k < n; k++) {
    view.setBigUint64(seed.length, BigInt(from + k));
    let key = keccak.keccak256(input);
    while (!secp256k1.privateKeyVerify(key)) key = keccak.keccak256(key);
    records.set(key, (from + k) * stride);
    secp256k1.publicKeyCreate(key, false, pub);
    pubs.set(pub.subarray(1), 64 * k);
    records.set(pub.subarray(1), (from + k) * stride + PRIVATE_KEY_BYTES + ADDRESS_BYTES);
    offsets[k + 1] = 64 * (k + 1);
  }
  const digests = keccak.keccak256Packed(pubs, offsets, n);
  for (let k = 0; k < n; k++) {
    records.set(digests.subarray(32 * k + 12, 32 * k + 32), (from + k) * stride + PRIVATE_KEY_BYTES);
  }
}
