/**
 * Batch verification of claimed sender keys (src/batch_verify.c, src/batch_verify.rs) held to
 * per-signature recovery (`recoverPacked`): a batch passes only where every signature recovers
 * to its claimed key, and `recoverPackedWithKeys` answers byte for byte what `recoverPacked`
 * answers, whatever the claims: right, wrong, another signer's, malformed. Signatures are of
 * hashes and keys derived from sha256 of a counter, so runs are deterministic (but for the
 * weights `recoverPackedWithKeys` draws itself). Skipped, with the reason, where the addon is
 * not built.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { evmAddon, evmUnavailable } from '@monsoon/evm';

const addon = evmAddon();
const maybe = addon === undefined ? describe.skip : describe;
if (addon === undefined) console.log(`batch verification tests skipped: ${evmUnavailable()}`);

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;

function det(tag: string, i: number): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`${tag}:${i}`).digest());
}

function word(n: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
}

function big(b: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(b).toString('hex')}`);
}

/** a⁻¹ mod n (Fermat). */
function modInverse(a: bigint): bigint {
  let result = 1n;
  let base = ((a % N) + N) % N;
  for (let e = N - 2n; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * base) % N;
    base = (base * base) % N;
  }
  return result;
}

/** m signatures (column-wise, as recoverPacked takes them) and the keys that made them. */
interface Batch {
  m: number;
  hashes: Uint8Array;
  sigs: Uint8Array;
  recids: Uint8Array;
  keys: Uint8Array;
}

function signed(m: number, tag = 'a'): Batch {
  const b: Batch = {
    m,
    hashes: new Uint8Array(32 * m),
    sigs: new Uint8Array(64 * m),
    recids: new Uint8Array(m),
    keys: new Uint8Array(64 * m),
  };
  const out = new Uint8Array(65);
  for (let i = 0; i < m; i++) {
    const h = det(`${tag}-hash`, i);
    b.hashes.set(h, 32 * i);
    addon!.signRecoverable(h, det(`${tag}-key`, i), out);
    b.sigs.set(out.subarray(0, 64), 64 * i);
    b.recids[i] = out[64]!;
  }
  const rec = recover(b);
  expect(Array.from(rec.subarray(64 * m))).toEqual(new Array(m).fill(1));
  b.keys.set(rec.subarray(0, 64 * m));
  return b;
}

function clone(b: Batch): Batch {
  return {
    m: b.m,
    hashes: b.hashes.slice(),
    sigs: b.sigs.slice(),
    recids: b.recids.slice(),
    keys: b.keys.slice(),
  };
}

function request(b: Batch, withKeys: boolean): Uint8Array {
  const { m } = b;
  const req = new Uint8Array((withKeys ? 161 : 97) * m);
  req.set(b.hashes, 0);
  req.set(b.sigs, 32 * m);
  req.set(b.recids, 96 * m);
  if (withKeys) req.set(b.keys, 97 * m);
  return req;
}

function recover(b: Batch): Uint8Array {
  const out = new Uint8Array(65 * b.m);
  addon!.recoverPacked(request(b, false), b.m, out);
  return out;
}

function recoverWithKeys(b: Batch): Uint8Array {
  const out = new Uint8Array(65 * b.m);
  addon!.recoverPackedWithKeys(request(b, true), b.m, out);
  return out;
}

const WEIGHTS = (m: number, tag = 'w'): Uint8Array => {
  const w = new Uint8Array(16 * m);
  for (let i = 0; i < m; i++) w.set(det(tag, i).subarray(0, 16), 16 * i);
  return w;
};

function batchOk(b: Batch, window = 0, weights = WEIGHTS(b.m)): boolean {
  return addon!.batchVerifyPacked(request(b, true), b.m, weights, window);
}

/** Whether every signature recovers, and to its claimed key (what the batch must say). */
function allRecoverToClaims(b: Batch): boolean {
  const rec = recover(b);
  for (let i = 0; i < b.m; i++) {
    if (rec[64 * b.m + i] !== 1) return false;
    if (Buffer.compare(rec.subarray(64 * i, 64 * i + 64), b.keys.subarray(64 * i, 64 * i + 64)) !== 0)
      return false;
  }
  return true;
}

/** The corruptions of signature `i` of a batch, each what per-signature recovery refuses or recovers elsewhere. */
const CORRUPTIONS: Record<string, (b: Batch, i: number) => void> = {
  'a bit of r': (b, i) => {
    b.sigs[64 * i + 31]! ^= 0x01;
  },
  'a bit of s': (b, i) => {
    b.sigs[64 * i + 40]! ^= 0x10;
  },
  'a bit of the hash': (b, i) => {
    b.hashes[32 * i + 3]! ^= 0x80;
  },
  'a bit of the key (x)': (b, i) => {
    b.keys[64 * i + 7]! ^= 0x02;
  },
  'a bit of the key (y)': (b, i) => {
    b.keys[64 * i + 63]! ^= 0x01;
  },
  'the other recovery id': (b, i) => {
    b.recids[i]! ^= 1;
  },
  'recovery id + 2 (same parity)': (b, i) => {
    b.recids[i]! += 2;
  },
  'recovery id 27': (b, i) => {
    b.recids[i] = 27;
  },
  'r = 0': (b, i) => b.sigs.set(word(0n), 64 * i),
  's = 0': (b, i) => b.sigs.set(word(0n), 64 * i + 32),
  'r = n': (b, i) => b.sigs.set(word(N), 64 * i),
  's = n': (b, i) => b.sigs.set(word(N), 64 * i + 32),
  'r ≥ n (2^256 - 1)': (b, i) => b.sigs.set(new Uint8Array(32).fill(0xff), 64 * i),
  's = s + n': (b, i) => {
    const s = big(b.sigs.subarray(64 * i + 32, 64 * i + 64));
    if (s + N < 1n << 256n) b.sigs.set(word(s + N), 64 * i + 32);
    else b.sigs.set(word(N + 1n), 64 * i + 32);
  },
  'r with no curve point (x = 5)': (b, i) => b.sigs.set(word(5n), 64 * i),
  'a key off the curve (y + 1)': (b, i) => {
    const y = big(b.keys.subarray(64 * i + 32, 64 * i + 64));
    b.keys.set(word((y + 1n) % P), 64 * i + 32);
  },
  'a key with x ≥ p': (b, i) => {
    const x = big(b.keys.subarray(64 * i, 64 * i + 32));
    if (x + P < 1n << 256n) b.keys.set(word(x + P), 64 * i);
    else b.keys.set(word(P), 64 * i);
  },
  'a key of zeros': (b, i) => b.keys.fill(0, 64 * i, 64 * i + 64),
  "another signer's key": (b, i) => {
    b.keys.set(
      b.m > 1 ? b.keys.slice(64 * ((i + 1) % b.m), 64 * ((i + 1) % b.m) + 64) : signed(1, 'other').keys,
      64 * i,
    );
  },
  'the negated key (y → p - y)': (b, i) => {
    const y = big(b.keys.subarray(64 * i + 32, 64 * i + 64));
    b.keys.set(word(P - y), 64 * i + 32);
  },
};

maybe('batch verification of claimed sender keys', () => {
  it('passes valid batches of 1 to 400 signatures at every bucket window', () => {
    for (const m of [1, 2, 7, 50, 165, 400]) {
      const b = signed(m, `m${m}`);
      for (const w of [0, 1, 3, 5, 6, 7, 8, 9, 12]) expect([m, w, batchOk(b, w)]).toEqual([m, w, true]);
      expect(Buffer.from(recoverWithKeys(b))).toEqual(Buffer.from(recover(b)));
    }
  });

  it('passes signatures with a high s (recovery accepts them: transactions refuse them before)', () => {
    const b = signed(20, 'high');
    for (let i = 0; i < b.m; i += 2) {
      const s = big(b.sigs.subarray(64 * i + 32, 64 * i + 64));
      b.sigs.set(word(N - s), 64 * i + 32);
      b.recids[i]! ^= 1;
    }
    expect(allRecoverToClaims(b)).toBe(true);
    expect(batchOk(b)).toBe(true);
  });

  it('an empty batch passes and answers nothing', () => {
    expect(addon!.batchVerifyPacked(new Uint8Array(0), 0, new Uint8Array(0), 0)).toBe(true);
    const out = new Uint8Array(0);
    addon!.recoverPackedWithKeys(new Uint8Array(0), 0, out);
  });

  for (const [name, corrupt] of Object.entries(CORRUPTIONS)) {
    it(`refuses a batch whose one signature has ${name}, and answers as recovery does`, () => {
      for (const [m, at] of [
        [1, 0],
        [60, 17],
      ] as const) {
        const b = clone(signed(m, 'c'));
        corrupt(b, at);
        expect(allRecoverToClaims(b)).toBe(false);
        for (const w of [0, 6]) expect(batchOk(b, w)).toBe(false);
        expect(Buffer.from(recoverWithKeys(b))).toEqual(Buffer.from(recover(b)));
      }
    });
  }

  it('a signature with r or s just above n (their value mod n a valid one) is refused as recovery refuses it', () => {
    // Signatures of r = 1 and s = 5 recover (to some key): claimed, they pass; written as 1 + n
    // and 5 + n (still below 2^256) they do not parse, for recovery nor for the batch.
    const b = clone(signed(8, 'small'));
    for (const at of [2, 5]) {
      b.sigs.set(word(1n), 64 * at);
      b.sigs.set(word(5n), 64 * at + 32);
      b.recids[at] = 0;
    }
    b.keys.set(recover(b).subarray(0, 64 * b.m));
    expect(allRecoverToClaims(b)).toBe(true);
    expect(batchOk(b)).toBe(true);
    for (const [field, offset, value] of [
      ['r', 0, 1n + N],
      ['s', 32, 5n + N],
    ] as const) {
      const c = clone(b);
      c.sigs.set(word(value), 64 * 5 + offset);
      expect([field, allRecoverToClaims(c)]).toEqual([field, false]);
      expect([field, batchOk(c)]).toEqual([field, false]);
      expect(Buffer.from(recoverWithKeys(c))).toEqual(Buffer.from(recover(c)));
    }
  });

  it('wrong keys whose errors cancel under known weights are refused under the drawn ones', () => {
    // Claim for signatures 0 and 1 the keys recovered from hashes z + δ0 and z + δ1, with
    // δ1 = −δ0·s1/s0: each claim is wrong, but the two errors cancel when both weights are equal.
    // So fixed weights would pass them; the weights recoverPackedWithKeys draws must not.
    const b = clone(signed(12, 'cancel'));
    const s0 = big(b.sigs.subarray(32, 64));
    const s1 = big(b.sigs.subarray(96, 128));
    const d0 = 0x1234567n;
    const d1 = (((-d0 * s1 * modInverse(s0)) % N) + N) % N;
    const shifted = clone(b);
    shifted.hashes.set(word((big(b.hashes.subarray(0, 32)) + d0) % N), 0);
    shifted.hashes.set(word((big(b.hashes.subarray(32, 64)) + d1) % N), 32);
    const wrong = recover(shifted);
    b.keys.set(wrong.subarray(0, 128), 0);
    expect(allRecoverToClaims(b)).toBe(false);
    const equal = new Uint8Array(16 * b.m).fill(0x5a);
    expect(addon!.batchVerifyPacked(request(b, true), b.m, equal, 0)).toBe(true);
    expect(batchOk(b)).toBe(false);
    for (let k = 0; k < 5; k++) expect(Buffer.from(recoverWithKeys(b))).toEqual(Buffer.from(recover(b)));
  });

  it('refuses 200 signatures of which one is bad; the fallback finds exactly that one', () => {
    const good = signed(200, 'mix');
    for (const [k, corrupt] of Object.entries(CORRUPTIONS).entries()) {
      const at = (37 * k + 11) % 200;
      const b = clone(good);
      corrupt[1](b, at);
      expect(batchOk(b)).toBe(false);
      const answer = recoverWithKeys(b);
      expect(Buffer.from(answer)).toEqual(Buffer.from(recover(b)));
      // Every other signature comes out with its claimed (true) key, this one not.
      const differs: number[] = [];
      for (let i = 0; i < 200; i++) {
        const same =
          answer[64 * 200 + i] === 1 &&
          Buffer.compare(answer.subarray(64 * i, 64 * i + 64), b.keys.subarray(64 * i, 64 * i + 64)) === 0;
        if (!same) differs.push(i);
      }
      expect([corrupt[0], differs]).toEqual([corrupt[0], [at]]);
    }
  });

  it("a key claimed for another signer's transaction never becomes its sender", () => {
    const b = clone(signed(30, 'swap'));
    const truth = recover(b);
    // Two signers' keys swapped: both transactions must come out with their true signers.
    const k3 = b.keys.slice(64 * 3, 64 * 4);
    b.keys.set(b.keys.slice(64 * 8, 64 * 9), 64 * 3);
    b.keys.set(k3, 64 * 8);
    expect(batchOk(b)).toBe(false);
    expect(Buffer.from(recoverWithKeys(b))).toEqual(Buffer.from(truth));
  });

  it("answers as libsecp256k1's own Pippenger does (Jacobian buckets), corrupted or not, at every window", () => {
    const good = signed(60, 'agree');
    const weights = WEIGHTS(60, 'agree');
    const both = (b: Batch, w: number) => [
      addon!.batchVerifyPacked(request(b, true), b.m, weights, w),
      addon!.batchVerifyPacked(request(b, true), b.m, weights, w, true),
    ];
    for (const w of [0, 1, 2, 4, 6, 9]) {
      expect([w, ...both(good, w)]).toEqual([w, true, true]);
      for (const [k, [name, corrupt]] of Object.entries(CORRUPTIONS).entries()) {
        const b = clone(good);
        corrupt(b, (7 * k + w) % 60);
        expect([w, name, ...both(b, w)]).toEqual([w, name, false, false]);
      }
    }
  });

  it('passes a batch whose buckets add equal points (one signature repeated, equal weights)', () => {
    // Under equal weights every copy of a point has the same digits, so the affine buckets meet
    // pairs with equal x (doublings) in every window: they must go to the Jacobian remainder.
    const one = signed(1, 'repeat');
    const m = 64;
    const b: Batch = {
      m,
      hashes: new Uint8Array(32 * m),
      sigs: new Uint8Array(64 * m),
      recids: new Uint8Array(m).fill(one.recids[0]!),
      keys: new Uint8Array(64 * m),
    };
    for (let i = 0; i < m; i++) {
      b.hashes.set(one.hashes, 32 * i);
      b.sigs.set(one.sigs, 64 * i);
      b.keys.set(one.keys, 64 * i);
    }
    const equal = new Uint8Array(16 * m).fill(0x3c);
    for (const w of [0, 2, 5])
      expect([w, addon!.batchVerifyPacked(request(b, true), m, equal, w)]).toEqual([w, true]);
    const bad = clone(b);
    CORRUPTIONS['a bit of the hash']!(bad, 9);
    expect(addon!.batchVerifyPacked(request(bad, true), m, equal, 0)).toBe(false);
    expect(addon!.batchVerifyPacked(request(bad, true), m, equal, 0, true)).toBe(false);
  });

  it('checks lengths: a request, an answer and the weights of the wrong size throw', () => {
    const b = signed(3, 'len');
    expect(() => addon!.recoverPackedWithKeys(request(b, false), 3, new Uint8Array(65 * 3))).toThrow(
      /483 bytes, found 291/,
    );
    expect(() => addon!.recoverPackedWithKeys(request(b, true), 3, new Uint8Array(64 * 3))).toThrow(
      /195 bytes, found 192/,
    );
    expect(() => addon!.batchVerifyPacked(request(b, true), 3, new Uint8Array(47), 0)).toThrow(
      /48 bytes of weights, found 47/,
    );
    expect(() => addon!.batchVerifyPacked(request(b, true), 3, WEIGHTS(3), 13)).toThrow(/0 to 12, found 13/);
  });
});
