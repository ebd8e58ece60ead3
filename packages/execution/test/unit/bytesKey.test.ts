/**
 * bytesKey names 20- and 32-byte keys byte by byte (see its comment): the same latin1 string as
 * any other length gets, i.e. one char per byte, for every byte value, and keyBytes gives the
 * bytes back.
 */
import { describe, expect, it } from '@jest/globals';
import { Prng } from '@monsoon/test-utils';
import { bytesKey, keyBytes } from '../../src/treeStateManager.js';

describe('bytesKey', () => {
  it('is the latin1 string of the bytes at every length, for every byte value', () => {
    const r = new Prng(5);
    for (let len = 0; len <= 40; len++) {
      for (let i = 0; i < 20; i++) {
        const b = r.bytes(len);
        // Every byte value somewhere at the lengths the keys have.
        if (len === 20 || len === 32) for (let j = 0; j < len; j++) b[j] = (i * len + j * 13) & 255;
        const k = bytesKey(b);
        expect(k).toBe(Buffer.from(b).toString('latin1'));
        expect(k.length).toBe(len);
        expect(keyBytes(k)).toEqual(b);
      }
    }
  });

  it('keys views at an offset by their own bytes', () => {
    const whole = new Uint8Array(64).map((_, i) => 255 - i);
    expect(bytesKey(whole.subarray(7, 27))).toBe(Buffer.from(whole.subarray(7, 27)).toString('latin1'));
    expect(bytesKey(whole.subarray(30, 62))).toBe(Buffer.from(whole.subarray(30, 62)).toString('latin1'));
  });
});
