/**
 * The client's per-sender pool (geth's txpool rules): future nonces wait and go out in nonce
 * order as gaps fill, whatever order they came in; replacement needs geth's 10 % bump on both
 * fee caps; limits and lifetime as geth's defaults name them; refusals in geth's words.
 */
import { describe, expect, it } from '@jest/globals';
import {
  defaultTxPoolOptions,
  isReplacement,
  type PoolTx,
  TxPool,
  type TxPoolOptions,
} from '@monsoon/client';
import { Prng } from '@monsoon/test-utils';

const GWEI = 1_000_000_000n;
const RICH = { nonce: 0n, balance: 10n ** 24n };

/** A fake transaction: the pool only reads these fields. */
function tx(
  sender: number,
  nonce: bigint,
  fees: { fee?: bigint; tip?: bigint; cost?: bigint; salt?: number } = {},
): PoolTx {
  const hash = new Uint8Array(32);
  hash[0] = sender;
  new DataView(hash.buffer).setBigUint64(1, nonce);
  hash[9] = fees.salt ?? 0;
  new DataView(hash.buffer).setBigUint64(10, fees.tip ?? GWEI);
  new DataView(hash.buffer).setBigUint64(18, fees.fee ?? 2n * GWEI);
  return {
    hash,
    sender: new Uint8Array(20).fill(sender),
    nonce,
    maxFeePerGas: fees.fee ?? 2n * GWEI,
    maxPriorityFeePerGas: fees.tip ?? GWEI,
    cost: fees.cost ?? 21_000n * (fees.fee ?? 2n * GWEI),
  };
}

/** A pool whose clock the test moves. */
function poolWith(opts: Partial<TxPoolOptions> = {}) {
  const clock = { now: 0 };
  const pool = new TxPool({ ...defaultTxPoolOptions, ...opts }, { now: () => clock.now });
  return { pool, clock };
}

/** Plays a miner that accepts everything: every transaction the pool lets out, in the order it lets them out. */
function drain(pool: TxPool, senders: readonly number[]): PoolTx[] {
  const out: PoolTx[] = [];
  for (let progress = true; progress; ) {
    progress = false;
    for (const s of senders) {
      const e = pool.promote(new Uint8Array(20).fill(s));
      if (e === undefined) continue;
      pool.accepted(e.tx.hash);
      out.push(e.tx);
      progress = true;
    }
  }
  return out;
}

describe('TxPool: nonce gaps', () => {
  it('keeps future nonces queued and lets each sender out in nonce order, whatever order they came in', () => {
    const prng = new Prng(13);
    const { pool } = poolWith();
    const senders = [1, 2, 3, 4, 5];
    const all = senders.flatMap((s) => Array.from({ length: 10 }, (_, n) => tx(s, BigInt(n))));
    prng.shuffle(all);
    const released: PoolTx[] = [];
    for (const t of all) {
      const { gapped } = pool.add(t, RICH);
      // Gapped exactly when a lower nonce of its sender has not arrived yet.
      const below = all.slice(0, all.indexOf(t)).filter((x) => x.sender[0] === t.sender[0]);
      const missing = Array.from({ length: Number(t.nonce) }, (_, n) => BigInt(n)).some(
        (n) => !below.some((x) => x.nonce === n),
      );
      expect(gapped).toBe(missing);
      released.push(...drain(pool, senders));
    }
    expect(released).toHaveLength(50);
    for (const s of senders) {
      expect(released.filter((t) => t.sender[0] === s).map((t) => t.nonce)).toEqual(
        Array.from({ length: 10 }, (_, n) => BigInt(n)),
      );
    }
  });

  it('lets one transaction per sender out at a time: the next waits for the miner to answer', () => {
    const { pool } = poolWith();
    pool.add(tx(1, 0n), RICH);
    pool.add(tx(1, 1n), RICH);
    const first = pool.promote(new Uint8Array(20).fill(1));
    expect(first?.tx.nonce).toBe(0n);
    expect(pool.promote(new Uint8Array(20).fill(1))).toBeUndefined();
    pool.accepted(first!.tx.hash);
    expect(pool.promote(new Uint8Array(20).fill(1))?.tx.nonce).toBe(1n);
  });

  it('a refused transaction reopens its gap: what its sender queued above it waits again', () => {
    const { pool } = poolWith();
    for (const n of [0n, 1n, 2n]) pool.add(tx(1, n), RICH);
    const first = pool.promote(new Uint8Array(20).fill(1))!;
    const behind = pool.failed(first.tx.hash);
    expect(behind.map((e) => e.tx.nonce)).toEqual([1n, 2n]);
    expect(behind.every((e) => pool.isGapped(e))).toBe(true);
    expect(pool.promote(new Uint8Array(20).fill(1))).toBeUndefined();
    // Sending nonce 0 again fills it.
    pool.add(tx(1, 0n, { salt: 1 }), RICH);
    expect(drain(pool, [1]).map((t) => t.nonce)).toEqual([0n, 1n, 2n]);
  });

  it("a block, or the state head, moving the sender's nonce unblocks and drops what it made obsolete", () => {
    const { pool } = poolWith();
    const s = new Uint8Array(20).fill(1);
    pool.add(tx(1, 2n), RICH);
    pool.add(tx(1, 3n), RICH);
    expect(pool.promote(s)).toBeUndefined();
    // Nonces 0 and 1 were mined from elsewhere: the state head says 2.
    expect(pool.stateMoved(s, { nonce: 2n, balance: RICH.balance })).toEqual([]);
    expect(drain(pool, [1]).map((t) => t.nonce)).toEqual([2n, 3n]);
    // A block holds 2 and 3: the sender's next nonce is 4 even before the state head shows it.
    pool.included(tx(1, 2n).hash, 7n);
    pool.included(tx(1, 3n).hash, 7n);
    expect(pool.pendingNonce(s, 2n)).toBe(4n);
    expect(() => pool.add(tx(1, 3n, { salt: 9 }), { nonce: 2n, balance: RICH.balance })).toThrow(
      'nonce too low: next nonce 4, tx nonce 3',
    );
    pool.add(tx(1, 4n), { nonce: 2n, balance: RICH.balance });
    expect(pool.promote(s)?.tx.nonce).toBe(4n);
    // A queued transaction whose nonce got used elsewhere is dropped.
    pool.add(tx(1, 6n), RICH);
    expect(pool.stateMoved(s, { nonce: 7n, balance: RICH.balance }).map((e) => e.tx.nonce)).toEqual([6n]);
  });

  it("'pending' nonce counts the queued transactions contiguous with the account's nonce", () => {
    const { pool } = poolWith();
    const s = new Uint8Array(20).fill(1);
    pool.add(tx(1, 5n), { nonce: 5n, balance: RICH.balance });
    pool.add(tx(1, 6n), { nonce: 5n, balance: RICH.balance });
    pool.add(tx(1, 8n), { nonce: 5n, balance: RICH.balance });
    expect(pool.pendingNonce(s, 5n)).toBe(7n);
    expect(pool.pendingNonce(new Uint8Array(20).fill(2), 3n)).toBe(3n);
  });
});

describe('TxPool: refusals in geth’s words', () => {
  it('already known, nonce too low, insufficient funds (alone and with what is queued)', () => {
    const { pool } = poolWith();
    pool.add(tx(1, 3n), { nonce: 3n, balance: RICH.balance });
    expect(() => pool.add(tx(1, 3n), RICH)).toThrow('already known');
    expect(() => pool.add(tx(2, 3n), { nonce: 5n, balance: RICH.balance })).toThrow(
      /^BAD_NONCE: nonce too low: next nonce 5, tx nonce 3$/,
    );
    expect(() => pool.add(tx(3, 0n, { cost: 101n }), { nonce: 0n, balance: 100n })).toThrow(
      'insufficient funds for gas * price + value: balance 100, tx cost 101, overshot 1',
    );
    pool.add(tx(4, 1n, { cost: 60n }), { nonce: 0n, balance: 100n });
    expect(() => pool.add(tx(4, 2n, { cost: 50n }), { nonce: 0n, balance: 100n })).toThrow(
      'insufficient funds for gas * price + value: balance 100, queued cost 60, tx cost 50, overshot 10',
    );
  });

  it('replaces a queued transaction only with both fee caps at least 10 % higher', () => {
    const { pool } = poolWith();
    const old = tx(1, 1n, { fee: 100n * GWEI, tip: 10n * GWEI });
    pool.add(old, RICH);
    const underpriced = [
      { fee: 110n * GWEI, tip: 10n * GWEI }, // tip not raised
      { fee: 100n * GWEI, tip: 20n * GWEI }, // fee cap not raised
      { fee: 109n * GWEI, tip: 11n * GWEI }, // fee cap raised 9 %
      { fee: 120n * GWEI, tip: 10_999_999_999n }, // tip just under 10 %
    ];
    for (const [i, f] of underpriced.entries()) {
      expect(() => pool.add(tx(1, 1n, { ...f, salt: i + 1 }), RICH)).toThrow(
        /^REPLACE_UNDERPRICED: replacement transaction underpriced$/,
      );
    }
    const better = tx(1, 1n, { fee: 110n * GWEI, tip: 11n * GWEI, salt: 9 });
    const a = pool.add(better, RICH);
    expect(a.replaced?.tx).toBe(old);
    expect(pool.get(old.hash)).toBeUndefined();
    expect(pool.get(better.hash)?.tx).toBe(better);
    expect(pool.counts().queued).toBe(1);
  });

  it('geth’s bump rule, with integer thresholds', () => {
    const old = tx(1, 0n, { fee: 15n, tip: 9n });
    expect(isReplacement(old, tx(1, 0n, { fee: 16n, tip: 10n }), 10n)).toBe(true); // 16.5 → 16, 9.9 → 9
    expect(isReplacement(old, tx(1, 0n, { fee: 16n, tip: 9n }), 10n)).toBe(false); // must be strictly higher
  });

  it('a transaction a miner already took is not replaced: its nonce is used', () => {
    const { pool } = poolWith();
    const s = new Uint8Array(20).fill(1);
    pool.add(tx(1, 0n, { fee: 10n * GWEI, tip: GWEI }), RICH);
    pool.accepted(pool.promote(s)!.tx.hash);
    expect(() => pool.add(tx(1, 0n, { fee: 20n * GWEI, tip: 2n * GWEI }), RICH)).toThrow(
      'nonce too low: next nonce 1, tx nonce 0',
    );
    expect(() => pool.add(tx(1, 0n, { fee: 10n * GWEI, tip: 2n * GWEI }), RICH)).toThrow(
      'replacement transaction underpriced',
    );
  });

  it('accepts the balance bump of a replacement only if it is covered', () => {
    const { pool } = poolWith();
    pool.add(tx(1, 1n, { fee: 10n, tip: 10n, cost: 50n }), { nonce: 0n, balance: 100n });
    pool.add(tx(1, 2n, { fee: 10n, tip: 10n, cost: 40n }), { nonce: 0n, balance: 100n });
    expect(() =>
      pool.add(tx(1, 2n, { fee: 20n, tip: 20n, cost: 55n }), { nonce: 0n, balance: 100n }),
    ).toThrow(
      'insufficient funds for gas * price + value: balance 100, queued cost 90, tx bumped 15, overshot 5',
    );
  });
});

describe('TxPool: limits and lifetime (geth’s defaults)', () => {
  it('defaults are geth’s: 10 % bump, 64 per account, 1024 in all, 3 hours', () => {
    expect(defaultTxPoolOptions).toEqual({
      priceBump: 10n,
      accountQueue: 64,
      globalQueue: 1024,
      lifetimeMs: 3 * 60 * 60 * 1000,
    });
  });

  it('a full account queue refuses a higher nonce and drops its highest for a lower one', () => {
    const { pool } = poolWith({ accountQueue: 3 });
    for (const n of [2n, 4n, 6n]) pool.add(tx(1, n), RICH);
    expect(() => pool.add(tx(1, 7n), RICH)).toThrow(/^ACCOUNT_LIMIT: account limit exceeded$/);
    const a = pool.add(tx(1, 3n), RICH);
    expect(a.dropped?.tx.nonce).toBe(6n);
    expect(pool.get(tx(1, 6n).hash)).toBeUndefined();
    expect(pool.queuedCount).toBe(3);
    // Another sender is not limited by this one's queue.
    pool.add(tx(2, 5n), RICH);
  });

  it('a full pool refuses with "txpool is full"; a submitted transaction makes room', () => {
    const { pool } = poolWith({ globalQueue: 4 });
    for (const s of [1, 2]) for (const n of [0n, 1n]) pool.add(tx(s, n), RICH);
    expect(() => pool.add(tx(3, 0n), RICH)).toThrow(/^TXPOOL_FULL: txpool is full$/);
    pool.accepted(pool.promote(new Uint8Array(20).fill(1))!.tx.hash);
    pool.add(tx(3, 0n), RICH);
    expect(pool.counts()).toEqual({ queued: 4, submitting: 0, sent: 1 });
  });

  it('evicts the queued transactions of a sender idle past the lifetime; activity keeps them', () => {
    const { pool, clock } = poolWith({ lifetimeMs: 1000 });
    pool.add(tx(1, 5n), RICH);
    pool.add(tx(2, 5n), RICH);
    clock.now = 900;
    pool.add(tx(2, 7n), RICH); // sender 2 was active
    clock.now = 1001;
    expect(pool.evictStale().map((e) => e.tx.sender[0])).toEqual([1]);
    expect(pool.get(tx(1, 5n).hash)).toBeUndefined();
    expect(pool.queuedCount).toBe(2);
    clock.now = 1901;
    expect(
      pool
        .evictStale()
        .map((e) => e.tx.nonce)
        .sort(),
    ).toEqual([5n, 7n]);
    expect(pool.counts()).toEqual({ queued: 0, submitting: 0, sent: 0 });
  });
});
