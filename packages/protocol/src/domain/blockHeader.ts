/**
 * Monsoon's block header: Ethereum's fields that this chain uses, RLP-encoded in Ethereum's
 * order (no ommers, bloom or mix hash):
 *
 *   rlp([parentHash, miner, stateRoot, transactionsRoot, receiptsRoot, difficulty, number,
 *        gasLimit, gasUsed, timestamp, extraData, nonce])
 *
 * A block is named by keccak256 of that encoding. Proof of work is keccak-based:
 * keccak256(sealHash ‖ nonce) read as a 256-bit number must be at most 2^256 / difficulty,
 * where sealHash is keccak256 of the header's RLP without the nonce; difficulty 0 needs no work.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { bigintToBytes, bytesToBigint, type RlpValue, rlpDecode, rlpEncode } from '@monsoon/util';
import { ProtocolError, ProtocolErrorCode } from '../protocolError.js';

export interface BlockHeader {
  /** 32 bytes; zeros for the genesis block. */
  readonly parentHash: Uint8Array;
  /** 20 bytes: who gets the block reward. */
  readonly miner: Uint8Array;
  /** 32 bytes: the state trie's root after the block. */
  readonly stateRoot: Uint8Array;
  /** 32 bytes: root of the trie of the block's transactions (key rlp(index)). */
  readonly transactionsRoot: Uint8Array;
  /** 32 bytes: root of the trie of its receipts. */
  readonly receiptsRoot: Uint8Array;
  readonly difficulty: bigint;
  readonly number: bigint;
  readonly gasLimit: bigint;
  readonly gasUsed: bigint;
  /** Seconds since the epoch. */
  readonly timestamp: bigint;
  /** At most 32 bytes. */
  readonly extraData: Uint8Array;
  /** 8 bytes: the proof-of-work nonce. */
  readonly nonce: Uint8Array;
}

function bad(code: ProtocolErrorCode, field: string, expected: string, found: string): never {
  throw new ProtocolError(code, `header.${field}: expected ${expected}, found ${found}`, {
    field: `header.${field}`,
    expected,
    found,
  });
}

function toQuantity(n: bigint, field: string, bits: number): Uint8Array {
  if (n < 0n || n >= 1n << BigInt(bits))
    bad(ProtocolErrorCode.BadQuantity, field, `0 ≤ n < 2^${bits}`, `${n}`);
  return bigintToBytes(n);
}

function fromQuantity(b: Uint8Array, field: string, bits: number): bigint {
  if (b.length > bits / 8)
    bad(ProtocolErrorCode.BadQuantity, field, `at most ${bits / 8} bytes`, `${b.length}`);
  if (b.length > 0 && b[0] === 0) bad(ProtocolErrorCode.BadQuantity, field, 'no leading zero byte', 'one');
  return bytesToBigint(b);
}

function fixed(b: Uint8Array, field: string, n: number): Uint8Array {
  if (b.length !== n) bad(ProtocolErrorCode.BadLength, field, `${n} bytes`, `${b.length}`);
  return b;
}

function fields(h: BlockHeader, withNonce: boolean): RlpValue[] {
  const f: RlpValue[] = [
    fixed(h.parentHash, 'parentHash', 32),
    fixed(h.miner, 'miner', 20),
    fixed(h.stateRoot, 'stateRoot', 32),
    fixed(h.transactionsRoot, 'transactionsRoot', 32),
    fixed(h.receiptsRoot, 'receiptsRoot', 32),
    toQuantity(h.difficulty, 'difficulty', 256),
    toQuantity(h.number, 'number', 64),
    toQuantity(h.gasLimit, 'gasLimit', 64),
    toQuantity(h.gasUsed, 'gasUsed', 64),
    toQuantity(h.timestamp, 'timestamp', 64),
    h.extraData,
  ];
  if (h.extraData.length > 32)
    bad(ProtocolErrorCode.BadLength, 'extraData', 'at most 32 bytes', `${h.extraData.length}`);
  if (withNonce) f.push(fixed(h.nonce, 'nonce', 8));
  return f;
}

/** RLP of a header (validates every field). */
export function encodeHeader(h: BlockHeader): Uint8Array {
  return rlpEncode(fields(h, true));
}

/** Decodes a header's RLP; throws ProtocolError naming the bad field. */
export function decodeHeader(rlp: Uint8Array): BlockHeader {
  let v: RlpValue;
  try {
    v = rlpDecode(rlp);
  } catch (e) {
    return bad(ProtocolErrorCode.MissingField, 'rlp', 'an RLP list', `invalid RLP (${(e as Error).message})`);
  }
  if (!Array.isArray(v) || v.length !== 12 || v.some((x) => !(x instanceof Uint8Array))) {
    bad(
      ProtocolErrorCode.MissingField,
      'rlp',
      'a list of 12 byte strings',
      Array.isArray(v) ? `${v.length} items` : 'a string',
    );
  }
  const b = v as Uint8Array[];
  const h: BlockHeader = {
    parentHash: fixed(b[0]!, 'parentHash', 32),
    miner: fixed(b[1]!, 'miner', 20),
    stateRoot: fixed(b[2]!, 'stateRoot', 32),
    transactionsRoot: fixed(b[3]!, 'transactionsRoot', 32),
    receiptsRoot: fixed(b[4]!, 'receiptsRoot', 32),
    difficulty: fromQuantity(b[5]!, 'difficulty', 256),
    number: fromQuantity(b[6]!, 'number', 64),
    gasLimit: fromQuantity(b[7]!, 'gasLimit', 64),
    gasUsed: fromQuantity(b[8]!, 'gasUsed', 64),
    timestamp: fromQuantity(b[9]!, 'timestamp', 64),
    extraData: b[10]!,
    nonce: fixed(b[11]!, 'nonce', 8),
  };
  if (h.extraData.length > 32)
    bad(ProtocolErrorCode.BadLength, 'extraData', 'at most 32 bytes', `${h.extraData.length}`);
  return h;
}

/** keccak256 of the header's RLP: the block hash. */
export function headerHash(h: BlockHeader, keccak: Keccak = defaultKeccak): Uint8Array {
  return keccak.keccak256(encodeHeader(h));
}

/** keccak256 of the header's RLP without the nonce: what the proof of work seals. */
export function sealHash(h: BlockHeader, keccak: Keccak = defaultKeccak): Uint8Array {
  return keccak.keccak256(rlpEncode(fields(h, false)));
}

const TWO_256 = 1n << 256n;

/** The largest proof-of-work hash (as a number) that meets `difficulty`. */
export function powTarget(difficulty: bigint): bigint {
  return difficulty <= 1n ? TWO_256 - 1n : TWO_256 / difficulty;
}

/** keccak256(seal ‖ nonce) as a number. */
function powValue(seal: Uint8Array, nonce: Uint8Array, keccak: Keccak): bigint {
  const input = new Uint8Array(40);
  input.set(seal, 0);
  input.set(nonce, 32);
  return bytesToBigint(keccak.keccak256(input));
}

/** True when the header's nonce meets its difficulty (always, for difficulty 0). */
export function checkPow(h: BlockHeader, keccak: Keccak = defaultKeccak): boolean {
  if (h.difficulty === 0n) return true;
  return powValue(sealHash(h, keccak), h.nonce, keccak) <= powTarget(h.difficulty);
}

/**
 * Finds a nonce that meets the header's difficulty, trying at most `maxTries` from `start`;
 * returns the sealed header, or undefined when none was found.
 */
export function sealPow(
  h: BlockHeader,
  opts: { start?: bigint; maxTries?: number; keccak?: Keccak } = {},
): BlockHeader | undefined {
  const keccak = opts.keccak ?? defaultKeccak;
  if (h.difficulty === 0n) return h;
  const seal = sealHash(h, keccak);
  const target = powTarget(h.difficulty);
  let n = opts.start ?? 0n;
  const max = opts.maxTries ?? 1_000_000;
  for (let i = 0; i < max; i++, n++) {
    const nonce = bigintToBytes(n & 0xffff_ffff_ffff_ffffn, 8);
    if (powValue(seal, nonce, keccak) <= target) return { ...h, nonce };
  }
  return undefined;
}
