/** Hex both ways: bare and 0x-prefixed, and what each refuses. */
import { describe, expect, it } from '@jest/globals';
import { thrown } from '@monsoon/test-utils';
import {
  BytesError,
  BytesErrorCode,
  bytesToHex,
  fromHex,
  hexToBytes,
  isBytesError,
  quantityToHex,
  toHex,
} from '@monsoon/util';

describe('toHex / fromHex', () => {
  it('round-trips, lower-case, with or without 0x on the way in; views use only their own bytes', () => {
    const b = Uint8Array.of(0x00, 0xab, 0xff, 0x10);
    expect(toHex(b)).toBe('00abff10');
    expect(fromHex('00ABff10')).toEqual(b);
    expect(fromHex('0x00abff10')).toEqual(b);
    expect(fromHex('0X')).toEqual(new Uint8Array(0));
    expect(toHex(b.subarray(1, 3))).toBe('abff');
    expect(fromHex('ab')).toBeInstanceOf(Uint8Array);
  });

  it('refuses an odd digit count or a non-hex digit with BAD_HEX naming the input', () => {
    for (const bad of ['abc', '0xzz', 'g0', '0x0']) {
      const e = thrown(() => fromHex(bad));
      expect(isBytesError(e, BytesErrorCode.BadHex)).toBe(true);
      expect((e as BytesError).meta).toEqual({ found: bad });
      expect((e as Error).message).toBe(
        `BAD_HEX: expected hex digits, an even number of them, found ${JSON.stringify(bad)}`,
      );
    }
  });
});

describe('quantityToHex', () => {
  it('is the shortest 0x-hex of a number, 0x0 for zero', () => {
    expect(quantityToHex(0n)).toBe('0x0');
    expect(quantityToHex(255n)).toBe('0xff');
    expect(quantityToHex(4096)).toBe('0x1000');
    expect(quantityToHex(2n ** 64n)).toBe('0x10000000000000000');
  });
});

describe('bytesToHex / hexToBytes', () => {
  it('0x-prefixed both ways; a length is checked', () => {
    expect(bytesToHex(Uint8Array.of(1, 2))).toBe('0x0102');
    expect(bytesToHex(new Uint8Array(0))).toBe('0x');
    expect(hexToBytes('0x0102')).toEqual(Uint8Array.of(1, 2));
    expect(hexToBytes('0x0102', 2)).toEqual(Uint8Array.of(1, 2));
  });

  it('refuses a missing prefix, an odd digit count, a bad digit, or the wrong length', () => {
    for (const bad of ['0102', '0x123', '0xgg', '']) {
      expect(() => hexToBytes(bad)).toThrow(BytesError);
      expect(() => hexToBytes(bad)).toThrow(
        /^BAD_HEX: expected 0x-hex with an even number of digits, found /,
      );
    }
    const e = thrown(() => hexToBytes('0x0102', 20)) as BytesError;
    expect(e.message).toBe('BAD_HEX: expected 20 bytes, found 2');
    expect(e.meta).toEqual({ found: '0x0102', expectedBytes: 20 });
  });
});
