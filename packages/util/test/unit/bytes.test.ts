/** Equality, concatenation, leading zeros, and unsigned integers as bytes. */
import { describe, expect, it } from '@jest/globals';
import { Prng, thrown } from '@monsoon/test-utils';
import {
  asBuffer,
  BytesErrorCode,
  bigintToBytes,
  byteKey,
  byteKeyAt,
  bytesEqual,
  bytesToBigint,
  concatBytes,
  isBytesError,
  stripLeadingZeros,
  toHex,
} from '@monsoon/util';

describe('bytesEqual, concatBytes, stripLeadingZeros, asBuffer', () => {
  it('compares by content and length', () => {
    expect(bytesEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2))).toBe(true);
    expect(bytesEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 3))).toBe(false);
    expect(bytesEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2, 0))).toBe(false);
    expect(bytesEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
  });

  it('concatenates into a fresh array', () => {
    const a = Uint8Array.of(1);
    const out = concatBytes(a, new Uint8Array(0), Uint8Array.of(2, 3));
    expect(out).toEqual(Uint8Array.of(1, 2, 3));
    out[0] = 9;
    expect(a[0]).toBe(1);
    expect(concatBytes()).toEqual(new Uint8Array(0));
  });

  it('keys byte strings one char per byte, short and long alike', () => {
    for (const n of [0, 1, 23, 24, 100]) {
      const b = Uint8Array.from({ length: n }, (_, i) => (i * 37) & 0xff);
      const k = byteKey(b.subarray(0));
      expect(k.length).toBe(n);
      expect(Buffer.from(k, 'latin1')).toEqual(Buffer.from(b));
    }
    expect(byteKey(Uint8Array.of(9, 1, 2).subarray(1))).toBe('\x01\x02');
    // A range of a view, with bytes ≥ 0x80, is the key of those bytes alone.
    const v = Uint8Array.of(7, 0x80, 0xff, 3, 4).subarray(1);
    expect(byteKeyAt(v, 1, 3)).toBe(byteKey(Uint8Array.of(0xff, 3)));
    expect(byteKeyAt(v, 0, 0)).toBe('');
  });

  it('strips leading zeros as a view, and views bytes as a Buffer without copying', () => {
    const b = Uint8Array.of(0, 0, 5, 0);
    expect(stripLeadingZeros(b)).toEqual(Uint8Array.of(5, 0));
    expect(stripLeadingZeros(new Uint8Array(3))).toEqual(new Uint8Array(0));
    const view = asBuffer(b.subarray(2));
    view[0] = 7;
    expect(b[2]).toBe(7);
  });
});

describe('bigintToBytes / bytesToBigint', () => {
  it('gives minimal big-endian bytes (zero is empty), or exactly `length` bytes', () => {
    expect(bigintToBytes(0n)).toEqual(new Uint8Array(0));
    expect(bigintToBytes(1n)).toEqual(Uint8Array.of(1));
    expect(bigintToBytes(0x0100n)).toEqual(Uint8Array.of(1, 0));
    expect(bigintToBytes(2n ** 64n)).toEqual(Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0, 0));
    expect(bigintToBytes(0x0102n, 4)).toEqual(Uint8Array.of(0, 0, 1, 2));
    expect(bigintToBytes(0n, 2)).toEqual(Uint8Array.of(0, 0));
    expect(bigintToBytes(2n ** 256n - 1n, 32)).toEqual(new Uint8Array(32).fill(0xff));
  });

  it('round-trips random integers of every size through both paths (below and above 2^53)', () => {
    const r = new Prng(53);
    for (let i = 0; i < 2000; i++) {
      const n = r.bigint(r.range(1, 256));
      const b = bigintToBytes(n);
      expect(b.length === 0 || b[0] !== 0).toBe(true);
      expect(toHex(b)).toBe(n === 0n ? '' : n.toString(16).padStart(b.length * 2, '0'));
      expect(bytesToBigint(b)).toBe(n);
      expect(bytesToBigint(bigintToBytes(n, 32))).toBe(n);
    }
  });

  it('refuses a negative integer, or one too wide for `length`, with BAD_INTEGER', () => {
    for (const f of [() => bigintToBytes(-1n), () => bigintToBytes(256n, 1)]) {
      expect(isBytesError(thrown(f), BytesErrorCode.BadInteger)).toBe(true);
    }
    expect(() => bigintToBytes(256n, 1)).toThrow(
      'BAD_INTEGER: expected an integer that fits 1 bytes, found 256',
    );
  });

  it('reads leading zeros and empty input', () => {
    expect(bytesToBigint(new Uint8Array(0))).toBe(0n);
    expect(bytesToBigint(Uint8Array.of(0, 0, 1))).toBe(1n);
    expect(bytesToBigint(Uint8Array.of(0, 1, 2, 3, 4, 5, 6, 7))).toBe(0x01020304050607n);
  });

  it('reads a range of a larger array, every length 0-40 at every offset, as the hex of those bytes', () => {
    const r = new Prng(48);
    const b = r.bytes(64);
    for (let from = 0; from < 24; from++) {
      for (let to = from; to <= from + 40; to++) {
        const hex = Buffer.from(b.subarray(from, to)).toString('hex');
        expect(bytesToBigint(b, from, to)).toBe(hex === '' ? 0n : BigInt(`0x${hex}`));
        expect(bytesToBigint(b.subarray(from, to))).toBe(bytesToBigint(b, from, to));
      }
    }
  });
});
