/**
 * What both transaction decoders share (transactions.ts builds @ethereumjs/tx objects,
 * signedTx.ts plain SignedTx values): the envelope (legacy RLP list, or type byte ‖ RLP list),
 * the shape of its fields, and the chain and signature checks, each refusal with the
 * ExecutionError code a caller acts on. Both decoders run these in the same order, so a
 * transaction is refused with the same code by either.
 */
import { TransactionType } from '@ethereumjs/tx';
import { listItems, type RlpSpan, readWhole, toHex } from '@monsoon/dsm-tree';
import { bytesToBigint } from '@monsoon/util';
import { ExecutionError, ExecutionErrorCode } from './executionError.js';

/** The order of the secp256k1 group. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** n / 2: signatures with a larger s are malleable, refused since Homestead (EIP-2). */
export const SECP256K1_HALF_N = SECP256K1_N >> 1n;

/** Why `r`, `s` cannot be a transaction's signature values, or undefined when they can. */
export function signatureValuesError(r: bigint, s: bigint): string | undefined {
  if (r <= 0n || r >= SECP256K1_N) return `r must be in [1, n-1], found 0x${r.toString(16)}`;
  if (s <= 0n) return 's must be in [1, n/2], found 0';
  if (s > SECP256K1_HALF_N) {
    return `s must be at most n/2 (EIP-2: no malleable signatures), found 0x${s.toString(16)}`;
  }
  return undefined;
}

/** n and n / 2 as 32 big-endian bytes, for checks on a signature's bytes. */
const N_BYTES = wordBytes(SECP256K1_N);
const HALF_N_BYTES = wordBytes(SECP256K1_HALF_N);

function wordBytes(n: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
}

/**
 * The big-endian integer in raw[from, to) against the 32-byte `word`: negative, 0 or positive
 * as it is below, equal to or above it. Leading zero bytes are allowed; nothing is allocated.
 */
function compareToWord(raw: Uint8Array, from: number, to: number, word: Uint8Array): number {
  while (from < to && raw[from] === 0) from++;
  const n = to - from;
  if (n !== 32) return n > 32 ? 1 : -1; // the word's top byte is not zero
  for (let i = 0; i < 32; i++) {
    const d = raw[from + i]! - word[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * {@link signatureValuesError} of the big-endian integers raw[r0, r1) and raw[s0, s1), read from
 * the bytes: a good signature (every one a client sends) makes no bigint; a bad one gets the same
 * message from the bigints.
 */
export function signatureSpansError(
  raw: Uint8Array,
  r0: number,
  r1: number,
  s0: number,
  s1: number,
): string | undefined {
  let rZero = true;
  for (let i = r0; i < r1 && rZero; i++) rZero = raw[i] === 0;
  let sZero = true;
  for (let i = s0; i < s1 && sZero; i++) sZero = raw[i] === 0;
  if (
    !rZero &&
    !sZero &&
    compareToWord(raw, r0, r1, N_BYTES) < 0 &&
    compareToWord(raw, s0, s1, HALF_N_BYTES) <= 0
  )
    return undefined;
  return signatureValuesError(bytesToBigint(raw, r0, r1), bytesToBigint(raw, s0, s1));
}

/** How each supported type lays out its RLP list. */
export interface Layout {
  readonly name: string;
  /** Fields of a signed transaction. */
  readonly fields: number;
  /** Index of the access list (the one field that is a list), or -1. */
  readonly accessList: number;
}

export const LAYOUTS: Readonly<Record<number, Layout>> = {
  [TransactionType.Legacy]: { name: 'legacy', fields: 9, accessList: -1 },
  [TransactionType.AccessListEIP2930]: { name: 'EIP-2930', fields: 11, accessList: 7 },
  [TransactionType.FeeMarketEIP1559]: { name: 'EIP-1559', fields: 12, accessList: 8 },
};

export function bad(
  code: ExecutionErrorCode,
  message: string,
  meta: Record<string, unknown> = {},
  cause?: unknown,
): never {
  throw new ExecutionError(code, message, meta, cause);
}

/** The transaction's type from its first byte: a type byte, or an RLP list for legacy. */
function typeOf(raw: Uint8Array): number {
  if (raw.length === 0) bad(ExecutionErrorCode.BadTransaction, 'expected a transaction, found 0 bytes');
  const first = raw[0]!;
  if (first >= 0xc0) return TransactionType.Legacy;
  if (first === TransactionType.AccessListEIP2930 || first === TransactionType.FeeMarketEIP1559) return first;
  if (first === TransactionType.BlobEIP4844 || first === TransactionType.EOACodeEIP7702) {
    // Types Ethereum has and Monsoon does not take (no blobs; no EIP-7702 yet): geth's pool's words.
    bad(
      ExecutionErrorCode.BadTransaction,
      `transaction type not supported: tx type ${first} not supported by this pool`,
      { type: first },
    );
  }
  if (first <= 0x7f) {
    bad(
      ExecutionErrorCode.BadTransaction,
      `unsupported transaction type 0x${first.toString(16).padStart(2, '0')}: expected 0x01 (EIP-2930), 0x02 (EIP-1559) or an RLP list (legacy)`,
      { type: first },
    );
  }
  return bad(
    ExecutionErrorCode.BadTransaction,
    `expected a type byte or an RLP list, found an RLP byte string (prefix 0x${first.toString(16)})`,
  );
}

/** A transaction's envelope, its fields located in `raw` (nothing copied). */
export interface Envelope {
  readonly raw: Uint8Array;
  readonly type: number;
  readonly layout: Layout;
  /** The top-level list. */
  readonly list: RlpSpan;
  /** Its items: byte strings, but the access list. */
  readonly fields: readonly RlpSpan[];
  /** For typed transactions, the access list's entries: [address, [storage keys…]]. */
  readonly accessList: readonly (readonly [RlpSpan, readonly RlpSpan[]])[];
}

const NO_ACCESS: Envelope['accessList'] = Object.freeze([]);

/**
 * Reads the envelope and checks its shape: strict RLP (what ethereumjs would re-encode the
 * same: no over-long lengths, no prefixed single bytes, no trailing bytes), the field count of
 * a signed transaction of its type, byte strings where byte strings belong, and an access list
 * of [byte string, [byte strings…]] pairs.
 */
export function readEnvelope(raw: Uint8Array): Envelope {
  const type = typeOf(raw);
  const layout = LAYOUTS[type]!;
  let list: RlpSpan;
  let fields: RlpSpan[];
  try {
    list = readWhole(raw, type === TransactionType.Legacy ? 0 : 1);
    fields = list.list ? listItems(raw, list) : [];
    // Every nested item too, so malformed RLP anywhere is refused as such before any shape check.
    for (const f of fields) if (f.list) checkNested(raw, f);
  } catch (e) {
    return bad(
      ExecutionErrorCode.BadTransaction,
      `${layout.name} transaction is not valid RLP: ${e instanceof Error ? e.message : String(e)}`,
      { type },
      e,
    );
  }
  if (!list.list) {
    bad(
      ExecutionErrorCode.BadTransaction,
      `${layout.name} transaction: expected an RLP list, found a byte string`,
      {
        type,
      },
    );
  }
  if (fields.length === layout.fields - 3) {
    bad(
      ExecutionErrorCode.BadSignature,
      `${layout.name} transaction is not signed: found ${fields.length} fields, expected ${layout.fields}`,
      { type },
    );
  }
  if (fields.length !== layout.fields) {
    bad(
      ExecutionErrorCode.BadTransaction,
      `${layout.name} transaction: expected ${layout.fields} fields, found ${fields.length}`,
      { type },
    );
  }
  for (let i = 0; i < fields.length; i++) {
    const isList = fields[i]!.list;
    if (isList !== (i === layout.accessList)) {
      bad(
        ExecutionErrorCode.BadTransaction,
        `${layout.name} transaction: field ${i} must be ${i === layout.accessList ? 'a list (the access list)' : 'a byte string'}, found ${isList ? 'a list' : 'a byte string'}`,
        { type, field: i },
      );
    }
  }
  const accessList =
    layout.accessList < 0 ? NO_ACCESS : readAccessList(raw, fields[layout.accessList]!, layout);
  return { raw, type, layout, list, fields, accessList };
}

/** Reads every item inside a list span (throws DsmError BadRlp for malformed RLP). */
function checkNested(raw: Uint8Array, span: RlpSpan): void {
  for (const item of listItems(raw, span)) if (item.list) checkNested(raw, item);
}

/** The access list's entries, each [address, [keys…]] with byte strings where they belong. */
function readAccessList(raw: Uint8Array, span: RlpSpan, layout: Layout): Envelope['accessList'] {
  const refuse = (what: string): never =>
    bad(ExecutionErrorCode.BadTransaction, `${layout.name} transaction: access list ${what}`);
  const out: [RlpSpan, RlpSpan[]][] = [];
  for (const item of listItems(raw, span)) {
    if (!item.list) refuse('entries must be lists [address, [storage keys]], found a byte string');
    const parts = listItems(raw, item);
    if (parts.length !== 2) refuse(`entries must have 2 items, found ${parts.length}`);
    const [address, keys] = parts as [RlpSpan, RlpSpan];
    if (address.list) refuse('address must be a byte string, found a list');
    if (!keys.list) refuse('storage keys must be a list, found a byte string');
    const keySpans = listItems(raw, keys);
    for (const k of keySpans) if (k.list) refuse('storage keys must be byte strings, found a list');
    out.push([address, keySpans]);
  }
  return out;
}

/** The bytes of a (byte string) span, as a view into the raw transaction. */
export function spanBytes(raw: Uint8Array, s: RlpSpan): Uint8Array {
  return raw.subarray(s.dataStart, s.end);
}

/** The chain and signature checks, done before any field check so each gets its own code. */
export function checkChainAndSignature(env: Envelope, chainId: bigint): void {
  const { raw, fields, type, layout } = env;
  const n = fields.length;
  const vSpan = fields[n - 3]!;
  const rSpan = fields[n - 2]!;
  const sSpan = fields[n - 1]!;
  if (rSpan.end === rSpan.dataStart && sSpan.end === sSpan.dataStart) {
    bad(ExecutionErrorCode.BadSignature, `${layout.name} transaction is not signed: r and s are empty`, {
      type,
    });
  }
  const v = bytesToBigint(raw, vSpan.dataStart, vSpan.end);
  if (type === TransactionType.Legacy) {
    if (vSpan.end === vSpan.dataStart) {
      bad(ExecutionErrorCode.BadSignature, 'legacy transaction is not signed: v is empty');
    }
    if (v >= 35n) {
      const signedFor = (v - 35n) / 2n;
      if (signedFor !== chainId) {
        bad(
          ExecutionErrorCode.WrongChain,
          `transaction is signed for chain ${signedFor} (v = ${v}), expected chain ${chainId}`,
          { signedFor, chainId },
        );
      }
    } else if (v !== 27n && v !== 28n) {
      bad(
        ExecutionErrorCode.BadSignature,
        `legacy v must be 27 or 28 (pre-EIP-155) or ${2n * chainId + 35n} or ${2n * chainId + 36n} (EIP-155, chain ${chainId}), found ${v}`,
        { v },
      );
    }
  } else {
    const c = fields[0]!;
    const signedFor = bytesToBigint(raw, c.dataStart, c.end);
    if (signedFor !== chainId) {
      bad(
        ExecutionErrorCode.WrongChain,
        `${layout.name} transaction is for chain ${signedFor}, expected chain ${chainId}`,
        { signedFor, chainId },
      );
    }
    if (v !== 0n && v !== 1n) {
      bad(ExecutionErrorCode.BadSignature, `${layout.name} y-parity must be 0 or 1, found ${v}`, { v });
    }
  }
  const why = signatureSpansError(raw, rSpan.dataStart, rSpan.end, sSpan.dataStart, sSpan.end);
  if (why !== undefined) bad(ExecutionErrorCode.BadSignature, `${layout.name} transaction: ${why}`, { type });
}

/** The envelope's fields as @ethereumjs/tx's FromBytesArray constructors take them (copies). */
export function fieldValues(env: Envelope): (Uint8Array | (Uint8Array | Uint8Array[])[][])[] {
  const { raw, fields, layout } = env;
  const copy = (s: RlpSpan) => raw.slice(s.dataStart, s.end);
  return fields.map((f, i) =>
    i === layout.accessList ? env.accessList.map(([a, keys]) => [copy(a), keys.map(copy)]) : copy(f),
  );
}

/** Hex of bytes, for messages. */
export function hexOf(b: Uint8Array): string {
  return toHex(b);
}
