/** Ethereum accounts: rlp([nonce, balance, storageRoot, codeHash]). */
import { KECCAK256_EMPTY } from '@monsoon/keccak';
import { bytesToBigint, type RlpValue, rlpDecode } from '@monsoon/util';
import { DsmError, DsmErrorCode } from './dsmError.js';
import { EMPTY_ROOT } from './dsmTree.js';

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
  // rlp([nonce, balance, storageRoot, codeHash]) written directly: the payload is 68–107 bytes,
  // so the list header is always 0xf8 and one length byte. The scalars go straight into it, with
  // no array of their minimal bytes in between (nor, for a balance over 2^53, a hex buffer and its
  // copy): the miner encodes every account a block writes.
  const nonce = scalarDigits(a.nonce);
  const balance = scalarDigits(a.balance);
  const payload = scalarSize(a.nonce, nonce) + scalarSize(a.balance, balance) + 66;
  const out = carve(2 + payload);
  out[0] = 0xf8;
  out[1] = payload;
  let pos = writeScalar(out, 2, a.nonce, nonce);
  pos = writeScalar(out, pos, a.balance, balance);
  out[pos] = 0xa0;
  out.set(a.storageRoot, pos + 1);
  out[pos + 33] = 0xa0;
  out.set(a.codeHash, pos + 34);
  return out;
}

/**
 * Encodings are views carved from shared 8 KiB slabs: a typed array of more than 64 bytes gets
 * memory of its own outside the V8 heap, ~0.7 µs to allocate and account for (most of an encode,
 * measured), and that external memory brings scavenges on sooner. Every byte of a view is written.
 * A view kept keeps its slab, as a Buffer from Node's pool does; the state trees keep the bytes
 * as strings, not the views.
 */
const SLAB_BYTES = 8192;
let slab = new ArrayBuffer(SLAB_BYTES);
let slabAt = 0;

function carve(n: number): Uint8Array {
  if (slabAt + n > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    slabAt = 0;
  }
  const out = new Uint8Array(slab, slabAt, n);
  slabAt += n;
  return out;
}

/** Below this a scalar is written with number arithmetic; at or above it, from its hex digits. */
const SAFE = 0x20000000000000n;

/** `n`'s hex digits when it is 2^53 or more (written from them), else undefined (written as a number). */
function scalarDigits(n: bigint): string | undefined {
  return n < SAFE ? undefined : n.toString(16);
}

/** Bytes of `n`'s minimal big-endian form. */
function byteLength(n: bigint, hex: string | undefined): number {
  if (hex !== undefined) return (hex.length + 1) >> 1;
  let len = 0;
  for (let x = Number(n); x > 0; x = Math.floor(x / 256)) len++;
  return len;
}

/** Bytes the RLP scalar `n` (minimal big-endian bytes) takes. */
function scalarSize(n: bigint, hex: string | undefined): number {
  return hex === undefined && n < 0x80n && n !== 0n ? 1 : 1 + byteLength(n, hex);
}

function writeScalar(out: Uint8Array, pos: number, n: bigint, hex: string | undefined): number {
  if (hex === undefined && n < 0x80n && n !== 0n) {
    out[pos] = Number(n);
    return pos + 1;
  }
  const len = byteLength(n, hex);
  out[pos] = 0x80 + len;
  const end = pos + 1 + len;
  if (hex === undefined) {
    let v = Number(n);
    for (let i = end - 1; i > pos; i--) {
      out[i] = v % 256;
      v = Math.floor(v / 256);
    }
    return end;
  }
  // Two digits a byte from the last; an odd count leaves the first byte one digit.
  let d = hex.length;
  for (let i = end - 1; i > pos; i--) {
    const lo = hexDigit(hex.charCodeAt(--d));
    out[i] = d > 0 ? (hexDigit(hex.charCodeAt(--d)) << 4) | lo : lo;
  }
  return end;
}

/** The value of a lowercase hex digit's char code (what bigint's toString(16) writes). */
function hexDigit(c: number): number {
  return c < 0x3a ? c - 0x30 : c - 0x57;
}

/**
 * Reads the RLP scalar at `pos` of an account encoding the way decodeAccount accepts it
 * (canonical, no leading zero, at most 32 bytes): [value, next position], or undefined for
 * anything else (the general decoder then says what is wrong).
 */
function readScalar(b: Uint8Array, pos: number): [bigint, number] | undefined {
  const x = b[pos]!;
  if (x < 0x80) return x === 0 ? undefined : [BigInt(x), pos + 1];
  const n = x - 0x80;
  if (n > 32) return undefined;
  if (n === 0) return [0n, pos + 1];
  const first = b[pos + 1]!;
  if (first === 0 || (n === 1 && first < 0x80)) return undefined;
  if (n <= 6) {
    let v = 0;
    for (let i = pos + 1; i <= pos + n; i++) v = v * 256 + b[i]!;
    return [BigInt(v), pos + 1 + n];
  }
  return [bytesToBigint(b, pos + 1, pos + 1 + n), pos + 1 + n];
}

/** The usual account encoding read in one pass; undefined for anything unusual. */
function decodeAccountFast(b: Uint8Array): Account | undefined {
  const len = b.length;
  if (len < 68 || b[0] !== 0xf8 || b[1] !== len - 2) return undefined;
  const nonce = readScalar(b, 2);
  if (nonce === undefined) return undefined;
  const balance = readScalar(b, nonce[1]);
  if (balance === undefined || balance[1] !== len - 66 || b[len - 66] !== 0xa0 || b[len - 33] !== 0xa0) {
    return undefined;
  }
  // An account without storage or code (most: every externally owned one) shares the empty
  // root and code hash (callers never write into an account's fields): a miner's block held a
  // copy and two views of them per account it read until its seal.
  if (holdsAt(b, len - 65, EMPTY_ROOT) && holdsAt(b, len - 32, EMPTY_CODE_HASH))
    return { nonce: nonce[0], balance: balance[0], storageRoot: EMPTY_ROOT, codeHash: EMPTY_CODE_HASH };
  const roots = b.slice(len - 65, len);
  return {
    nonce: nonce[0],
    balance: balance[0],
    storageRoot: roots.subarray(0, 32),
    codeHash: roots.subarray(33, 65),
  };
}

/** Whether `b` holds the 32 bytes of `word` at `at`. */
function holdsAt(b: Uint8Array, at: number, word: Uint8Array): boolean {
  for (let i = 0; i < 32; i++) if (b[at + i] !== word[i]) return false;
  return true;
}

/** Decodes an account's RLP; throws DsmError(BadAccount) for anything else. */
export function decodeAccount(bytes: Uint8Array): Account {
  const fast = decodeAccountFast(bytes);
  if (fast !== undefined) return fast;
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
  return {
    nonce: canonicalScalar(nonce!, 'nonce'),
    balance: canonicalScalar(balance!, 'balance'),
    storageRoot: storageRoot!,
    codeHash: codeHash!,
  };
}

/** An RLP scalar as Ethereum requires it: minimal (no leading zero byte), at most 32 bytes. */
function canonicalScalar(b: Uint8Array, what: 'nonce' | 'balance'): bigint {
  if (b.length > 0 && b[0] === 0)
    throw new DsmError(DsmErrorCode.BadAccount, `${what} has a leading zero byte`);
  if (b.length > 32)
    throw new DsmError(DsmErrorCode.BadAccount, `${what} is ${b.length} bytes, more than 32`);
  return bytesToBigint(b);
}
