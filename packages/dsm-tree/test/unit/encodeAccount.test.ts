/**
 * encodeAccount's outputs are views carved from shared slabs: each one must be its own bytes,
 * whole, whatever was encoded before or after it (stale bytes of an earlier encoding in a
 * reused slab, or two views over the same bytes, would show here).
 */
import { RLP } from '@ethereumjs/rlp';
import { describe, expect, it } from '@jest/globals';
import { type Account, decodeAccount, encodeAccount } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';

function minimal(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0);
  const h = n.toString(16);
  return Buffer.from(h.length % 2 ? `0${h}` : h, 'hex');
}

describe('encodeAccount', () => {
  it('keeps every encoding intact while thousands more are made (across many slabs), each what @ethereumjs/rlp writes', () => {
    const r = new Prng(77);
    const made: { a: Account; enc: Uint8Array }[] = [];
    for (let i = 0; i < 3000; i++) {
      // Lengths vary (0-8 byte nonces, 0-32 byte balances), so slabs fill at odd offsets.
      const a: Account = {
        nonce: BigInt(`0x${Buffer.from(r.bytes(r.int(9))).toString('hex') || '0'}`),
        balance: BigInt(`0x${Buffer.from(r.bytes(r.int(33))).toString('hex') || '0'}`),
        storageRoot: r.bytes(32),
        codeHash: r.bytes(32),
      };
      made.push({ a, enc: encodeAccount(a) });
    }
    for (const { a, enc } of made) {
      const want = RLP.encode([minimal(a.nonce), minimal(a.balance), a.storageRoot, a.codeHash]);
      expect(Buffer.from(enc).toString('hex')).toBe(Buffer.from(want).toString('hex'));
      expect(decodeAccount(enc)).toEqual(a);
    }
  });
});
