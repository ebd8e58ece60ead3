/** Ethereum accounts: rlp([nonce, balance, storageRoot, codeHash]). */
import { KECCAK256_EMPTY } from '@monsoon/keccak';
import { DsmError, DsmErrorCode } from './dsmError.js';
import { EMPTY_ROOT } from './dsmTree.js';
import { bigintToBytes, bytesToBigint, type RlpValue, rlpDecode, rlpEncode } from './rlp.js';

export interface Account {
  nonce: bigint;
  balance: bigint;
  /** Root of the account's storage trie (EMPTY_ROOT when it has none). */
  storageRoot: Uint8Array;
  /** keccak256 of its code (keccak256("") for none). */
  codeHash: Uint8Array;
}

/** keccak256 of empty code. */
export const EMPTY_CODE_HASH: Uint8Array = KECCAK256_EMPTY;

/** An account with the given fields and empty storage and code where not given. */
export function makeAccount(fields: Partial<Account> = {}): Account {
  return {
    nonce: fields.nonce ?? 0n,
    balance: fields.balance ?? 0n,
    storageRoot: fields.storageRoot ?? EMPTY_ROOT,
    codeHash: fields.codeHash ?? EMPTY_CODE_HASH,
  };
}

/** RLP of an account, as stored in the state trie. */
export function encodeAccount(a: Account): Uint8Array {
  if (a.storageRoot.length !== 32 || a.codeHash.length !== 32) {
    throw new DsmError(DsmErrorCode.BadAccount, 'storageRoot and codeHash must be 32 bytes', {
      storageRoot: a.storageRoot.length,
      codeHash: a.codeHash.length,
    });
  }
  if (a.nonce < 0n || a.balance < 0n || a.nonce >= 1n << 64n || a.balance >= 1n << 256n) {
    throw new DsmError(DsmErrorCode.BadAccount, `nonce must fit 64 bits and balance 256 bits, unsigned`, {
      nonce: a.nonce.toString(),
      balance: a.balance.toString(),
    });
  }
  return rlpEncode([bigintToBytes(a.nonce), bigintToBytes(a.balance), a.storageRoot, a.codeHash]);
}

/** Decodes an account's RLP; throws DsmError(BadAccount) for anything else. */
export function decodeAccount(bytes: Uint8Array): Account {
  let v: RlpValue;
  try {
    v = rlpDecode(bytes);
  } catch (e) {
    throw new DsmError(DsmErrorCode.BadAccount, `account is not valid RLP: ${(e as Error).message}`);
  }
  if (!Array.isArray(v) || v.length !== 4 || v.some((x) => !(x instanceof Uint8Array))) {
    throw new DsmError(DsmErrorCode.BadAccount, 'account must be a list of 4 byte strings');
  }
  const [nonce, balance, storageRoot, codeHash] = v as Uint8Array[];
  if (storageRoot!.length !== 32 || codeHash!.length !== 32) {
    throw new DsmError(DsmErrorCode.BadAccount, 'storageRoot and codeHash must be 32 bytes');
  }
  try {
    return {
      nonce: bytesToBigint(nonce!, 'nonce'),
      balance: bytesToBigint(balance!, 'balance'),
      storageRoot: storageRoot!,
      codeHash: codeHash!,
    };
  } catch (e) {
    throw new DsmError(DsmErrorCode.BadAccount, (e as Error).message);
  }
}
