/**
 * codeHashOf (a BatchGet's `code: true` query reads the code hash off the account's encoding)
 * against decoding the account: nonces and balances of every length an RLP scalar takes, empty
 * and set code hashes and storage roots, and encodings that are not a canonical account.
 */
import { describe, expect, it } from '@jest/globals';
import { decodeAccount, EMPTY_CODE_HASH, encodeAccount, makeAccount } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { codeHashOf } from '../../src/storageNode.js';

describe('codeHashOf', () => {
  it('gives the decoded code hash for accounts of every field size', () => {
    const rng = new Prng(17);
    for (let i = 0; i < 2_000; i++) {
      const bits = (n: number): bigint =>
        n === 0 ? 0n : BigInt(`0x${Buffer.from(rng.bytes(n)).toString('hex')}`);
      const account = makeAccount({
        nonce: bits(rng.int(9)),
        balance: bits(rng.int(33)),
        codeHash: rng.int(2) === 0 ? EMPTY_CODE_HASH : rng.bytes(32),
        ...(rng.int(2) === 0 ? {} : { storageRoot: rng.bytes(32) }),
      });
      const rlp = encodeAccount(account);
      const got = codeHashOf(rlp);
      expect(Buffer.from(got).toString('hex')).toBe(Buffer.from(decodeAccount(rlp).codeHash).toString('hex'));
      expect(Buffer.from(got).toString('hex')).toBe(Buffer.from(account.codeHash).toString('hex'));
    }
  });

  it('decodes what does not end like a canonical account, refusing what is no account', () => {
    expect(() => codeHashOf(new Uint8Array([0xc1, 0x80]))).toThrow();
    expect(() => codeHashOf(new Uint8Array(40).fill(0xa0))).toThrow();
    // A list whose last item is 0xa0 and 32 bytes but whose header does not cover it all.
    const valid = encodeAccount(
      makeAccount({ nonce: 1n, balance: 5n, codeHash: new Uint8Array(32).fill(7) }),
    );
    const longer = new Uint8Array(valid.length + 1);
    longer.set(valid);
    longer[longer.length - 33] = 0xa0;
    expect(() => codeHashOf(longer)).toThrow();
  });
});
