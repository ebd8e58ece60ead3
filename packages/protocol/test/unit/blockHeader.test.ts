import { describe, expect, it } from '@jest/globals';
import { rlpDecode, rlpEncode } from '@monsoon/dsm-tree';
import {
  type BlockHeader,
  checkPow,
  decodeHeader,
  encodeHeader,
  headerHash,
  isProtocolError,
  ProtocolErrorCode,
  powTarget,
  sealPow,
} from '@monsoon/protocol';
import { keccak_256 } from '@noble/hashes/sha3.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function header(over: Partial<BlockHeader> = {}): BlockHeader {
  return {
    parentHash: new Uint8Array(32).fill(1),
    miner: new Uint8Array(20).fill(2),
    stateRoot: new Uint8Array(32).fill(3),
    transactionsRoot: new Uint8Array(32).fill(4),
    receiptsRoot: new Uint8Array(32).fill(5),
    difficulty: 0n,
    number: 7n,
    gasLimit: 30_000_000n,
    gasUsed: 21_000n,
    timestamp: 1_700_000_000n,
    extraData: new Uint8Array([0x6d]),
    nonce: new Uint8Array(8),
    ...over,
  };
}

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (isProtocolError(e)) return e.code;
    throw e;
  }
  return undefined;
}

describe('block header', () => {
  it('round-trips through RLP and is named by keccak256 of it', () => {
    const h = header({ difficulty: 123456789n, number: 2n ** 63n });
    const rlp = encodeHeader(h);
    const back = decodeHeader(rlp);
    expect(hex(encodeHeader(back))).toBe(hex(rlp));
    expect(back.number).toBe(2n ** 63n);
    expect(back.difficulty).toBe(123456789n);
    expect(hex(headerHash(h))).toBe(hex(keccak_256(rlp)));
    // Ethereum's field order for what it shares: 12 items, parent first, nonce last.
    const items = rlpDecode(rlp) as Uint8Array[];
    expect(items).toHaveLength(12);
    expect(hex(items[0]!)).toBe(hex(h.parentHash));
    expect(hex(items[11]!)).toBe(hex(h.nonce));
  });

  it('refuses malformed headers, naming the field', () => {
    expect(errorCode(() => encodeHeader(header({ miner: new Uint8Array(19) })))).toBe(
      ProtocolErrorCode.BadLength,
    );
    expect(errorCode(() => encodeHeader(header({ number: -1n })))).toBe(ProtocolErrorCode.BadQuantity);
    expect(errorCode(() => encodeHeader(header({ gasLimit: 2n ** 64n })))).toBe(
      ProtocolErrorCode.BadQuantity,
    );
    expect(errorCode(() => encodeHeader(header({ extraData: new Uint8Array(33) })))).toBe(
      ProtocolErrorCode.BadLength,
    );
    expect(errorCode(() => decodeHeader(Uint8Array.of(0xc0)))).toBe(ProtocolErrorCode.MissingField);
    expect(errorCode(() => decodeHeader(Uint8Array.of(0xff, 1)))).toBe(ProtocolErrorCode.MissingField);
    const items = rlpDecode(encodeHeader(header())) as Uint8Array[];
    const leadingZero = items.slice();
    leadingZero[6] = Uint8Array.of(0, 7);
    expect(errorCode(() => decodeHeader(rlpEncode(leadingZero)))).toBe(ProtocolErrorCode.BadQuantity);
    const shortNonce = items.slice();
    shortNonce[11] = new Uint8Array(7);
    expect(errorCode(() => decodeHeader(rlpEncode(shortNonce)))).toBe(ProtocolErrorCode.BadLength);
  });

  it('proof of work: difficulty 0 needs none; a sealed nonce meets its target and others mostly do not', () => {
    expect(checkPow(header())).toBe(true);
    const h = header({ difficulty: 1000n });
    const sealed = sealPow(h, { maxTries: 100_000 })!;
    expect(sealed).toBeDefined();
    expect(checkPow(sealed)).toBe(true);
    // Of 200 other nonces, about 0.1% meet a difficulty of 1000: most must fail.
    let passed = 0;
    for (let i = 0; i < 200; i++) {
      const nonce = new Uint8Array(8);
      new DataView(nonce.buffer).setUint32(4, 0xabc000 + i);
      if (checkPow({ ...h, nonce })) passed++;
    }
    expect(passed).toBeLessThan(10);
    // Changing any sealed field invalidates the work (with overwhelming probability; fixed data).
    expect(checkPow({ ...sealed, stateRoot: new Uint8Array(32).fill(9), difficulty: 2n ** 64n })).toBe(false);
    expect(powTarget(1n)).toBe(2n ** 256n - 1n);
  });
});
