/** CRC-32C against published vectors (RFC 3720 B.4, the "check" value) and a bitwise reference. */
import { describe, expect, it } from '@jest/globals';
import { crc32c } from '@monsoon/storage-node';
import { Prng } from '@monsoon/test-utils';

/** The textbook one-bit-at-a-time CRC-32C, independent of the table code under test. */
function reference(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of data) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return ~c >>> 0;
}

describe('crc32c', () => {
  it.each([
    ['"123456789"', new TextEncoder().encode('123456789'), 0xe3069283],
    ['32 zero bytes', new Uint8Array(32), 0x8a9136aa],
    ['32 0xff bytes', new Uint8Array(32).fill(0xff), 0x62a8ab43],
    ['32 ascending bytes', Uint8Array.from({ length: 32 }, (_, i) => i), 0x46dd794e],
    ['32 descending bytes', Uint8Array.from({ length: 32 }, (_, i) => 31 - i), 0x113fdb5c],
    ['no bytes', new Uint8Array(0), 0],
  ])('matches the known vector for %s', (_name, data, expected) => {
    expect(crc32c(data)).toBe(expected);
  });

  it('agrees with a bitwise reference on every length 0..200 and on unaligned ranges', () => {
    const r = new Prng(7);
    const buf = r.bytes(256);
    for (let len = 0; len <= 200; len++) {
      for (const start of [0, 1, 3, 5]) {
        const slice = buf.subarray(start, start + len);
        const want = reference(slice);
        expect(crc32c(slice)).toBe(want);
        expect(crc32c(buf, 0, start, start + len)).toBe(want);
      }
    }
  });

  it('continues a running CRC across any split', () => {
    const data = new Prng(11).bytes(1000);
    const whole = crc32c(data);
    for (let cut = 0; cut <= data.length; cut += 37) {
      expect(crc32c(data.subarray(cut), crc32c(data.subarray(0, cut)))).toBe(whole);
      expect(crc32c(data, crc32c(data, 0, 0, cut), cut)).toBe(whole);
    }
  });

  it('detects every single-bit flip in a record-sized buffer', () => {
    const data = new Prng(13).bytes(64);
    const base = crc32c(data);
    for (let bit = 0; bit < data.length * 8; bit++) {
      data[bit >> 3] ^= 1 << (bit & 7);
      expect(crc32c(data)).not.toBe(base);
      data[bit >> 3] ^= 1 << (bit & 7);
    }
  });
});
