/**
 * RLP against @ethereumjs/rlp: the encoder on every length class and nesting, a typed
 * transaction's prefix byte, the span reader; the decoder refuses every non-canonical form
 * (BAD_RLP) and accepts only what re-encodes to the same bytes.
 */
import { RLP } from '@ethereumjs/rlp';
import { describe, expect, it } from '@jest/globals';
import { Prng, thrown } from '@monsoon/test-utils';
import {
  BytesError,
  BytesErrorCode,
  isBytesError,
  listItems,
  type RlpInput,
  readSpan,
  readWhole,
  rlpDecode,
  rlpEncode,
  toHex,
} from '@monsoon/util';

const hex = toHex;

describe('rlpEncode', () => {
  it('matches @ethereumjs/rlp on strings and nested lists of every length class', () => {
    const r = new Prng(7);
    const items: RlpInput[] = [
      new Uint8Array(0),
      Uint8Array.of(0),
      Uint8Array.of(0x7f),
      Uint8Array.of(0x80),
      r.bytes(55),
      r.bytes(56),
      r.bytes(255),
      r.bytes(256),
      r.bytes(70_000),
      [],
      [r.bytes(3), [r.bytes(1), []], r.bytes(60)],
      Array.from({ length: 30 }, () => r.bytes(3)),
      Array.from({ length: 300 }, () => [r.bytes(r.int(70)), []]),
    ];
    for (const item of items) expect(hex(rlpEncode(item))).toBe(hex(RLP.encode(item as Uint8Array)));
  });

  it('leaves `prefix` zero bytes in front (where a typed transaction puts its type)', () => {
    const item = [Uint8Array.of(1), Uint8Array.of(2, 3)];
    const out = rlpEncode(item, 1);
    expect(out[0]).toBe(0);
    expect(hex(out.subarray(1))).toBe(hex(RLP.encode(item)));
  });
});

describe('span reader', () => {
  it('finds items in place without copying, and refuses trailing bytes', () => {
    const b = RLP.encode([Uint8Array.of(1, 2, 3), [Uint8Array.of(0x7f)], new Uint8Array(60)]);
    const whole = readWhole(b);
    expect(whole).toEqual({ list: true, start: 0, dataStart: 2, end: b.length });
    const items = listItems(b, whole);
    expect(items.map((s) => [s.list, s.end - s.dataStart])).toEqual([
      [false, 3],
      [true, 1],
      [false, 60],
    ]);
    expect(readSpan(b, items[1]!.dataStart, items[1]!.end)).toEqual({
      list: false,
      start: items[1]!.dataStart,
      dataStart: items[1]!.dataStart,
      end: items[1]!.end,
    });
    const e = thrown(() => readWhole(Uint8Array.of(0x80, 0x80))) as BytesError;
    expect(e).toBeInstanceOf(BytesError);
    expect(e.message).toBe('BAD_RLP: 1 trailing bytes after the item');
    expect(e.meta).toEqual({ trailing: 1 });
    expect(() => listItems(b, items[0]!)).toThrow('BAD_RLP: expected a list, found a byte string');
  });
});

describe('rlpDecode', () => {
  const cases: [string, number[]][] = [
    ['0x8100: a single byte below 0x80 with a prefix', [0x81, 0x00]],
    ['0x817f', [0x81, 0x7f]],
    ['0xb800…: long-form string of length 0', [0xb8, 0x00]],
    ['0xb801 00: long-form string of length 1', [0xb8, 0x01, 0x00]],
    ['0xb837 + 55 bytes: long form below 56', [0xb8, 0x37, ...new Array(55).fill(1)]],
    ['0xb90038 + 56 bytes: a length with a leading zero', [0xb9, 0x00, 0x38, ...new Array(56).fill(1)]],
    ['0xf800: long-form list of length 0', [0xf8, 0x00]],
    ['0xf837 + 55 items: long-form list below 56', [0xf8, 0x37, ...new Array(55).fill(1)]],
    ['0xf90038 + 56 items: a list length with a leading zero', [0xf9, 0x00, 0x38, ...new Array(56).fill(1)]],
    ['truncated string', [0x83, 0x01, 0x02]],
    ['truncated long length', [0xb8]],
    ['truncated long string', [0xb8, 0x38, 1, 2, 3]],
    ['truncated list', [0xc3, 0x80, 0x80]],
    ['an item overrunning its list', [0xc2, 0x82, 0x01, 0x02]],
    ['two items at top level', [0x80, 0x80]],
    ['nothing at all', []],
  ];
  it.each(cases)('%s is refused (BadRlp)', (_name, bytes) => {
    const e = thrown(() => rlpDecode(Uint8Array.from(bytes)));
    expect(isBytesError(e, BytesErrorCode.BadRlp)).toBe(true);
  });

  it('the canonical forms decode, and re-encode to the same bytes', () => {
    const ok: Uint8Array[] = [
      Uint8Array.of(0x00),
      Uint8Array.of(0x7f),
      Uint8Array.of(0x80),
      Uint8Array.of(0x81, 0x80),
      Uint8Array.of(0xb7, ...new Array(55).fill(1)),
      Uint8Array.of(0xb8, 0x38, ...new Array(56).fill(1)),
      Uint8Array.of(0xc0),
      Uint8Array.of(0xf7, ...new Array(55).fill(1)),
      Uint8Array.of(0xf8, 0x38, ...new Array(56).fill(1)),
      RLP.encode([new Uint8Array(300).fill(2), [[], Uint8Array.of(1)], new Uint8Array(0)]),
    ];
    for (const b of ok) {
      const v = rlpDecode(b);
      expect(hex(rlpEncode(v))).toBe(hex(b));
      expect(hex(RLP.encode(v as Uint8Array))).toBe(hex(b));
    }
  });

  it('random bytes: what decodes is canonical (re-encodes to the same bytes), the rest is BadRlp', () => {
    const r = new Prng(1100);
    let decoded = 0;
    for (let i = 0; i < 3000; i++) {
      const b = r.bytes(r.range(1, 12));
      if (r.chance(0.5)) b[0] = 0xc0 + r.int(8);
      const e = thrown(() => {
        const v = rlpDecode(b);
        // What we accept is canonical: it re-encodes to the very same bytes.
        expect(hex(rlpEncode(v))).toBe(hex(b));
        decoded++;
      });
      if (e !== undefined) expect(isBytesError(e, BytesErrorCode.BadRlp)).toBe(true);
    }
    expect(decoded).toBeGreaterThan(50);
  });
});
