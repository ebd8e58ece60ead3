/**
 * The sealing cadence (cadence.ts): the slot arithmetic, the ticker on a fake clock (slots on the
 * interval's grid, k changed only at an interval's start, a late tick not moving the grid, missed
 * slots skipped), and a real Miner sealed by it on a fake clock: blocks on the grid, never over
 * the gas limit, every transaction in submission order in the first block sealed after it was
 * accepted (nothing dropped, reordered or held back), each interval the same count.
 */

import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { defaultChainRules, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { Miner, type SealedBlock } from '@monsoon/miner';
import { TxStatus } from '@monsoon/protocol';
import { fundedGenesis } from '@monsoon/test-utils';
import type { TickerClock } from '@monsoon/util';
import {
  blockFill,
  type CadenceOptions,
  cadenceTicker,
  maxSlots,
  nextSlots,
  SealCadence,
  type SlotTick,
  slotTime,
} from '../../src/cadence.js';
import { signedTransfer } from '../helpers/transfer.js';

/** Timers run in time order as `advance` moves the clock; each tick's promises settle before the next. */
class FakeClock implements TickerClock {
  t = 1_000;
  private timers: { at: number; f: () => void; id: number }[] = [];
  private id = 0;
  readonly pending: Promise<unknown>[] = [];
  now(): number {
    return this.t;
  }
  setTimeout(f: () => void, ms: number): unknown {
    const id = ++this.id;
    this.timers.push({ at: this.t + Math.max(0, ms), f, id });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== h);
  }
  /** Runs every timer due up to `to` (ms), in order, settling what each started. */
  async advanceTo(to: number): Promise<void> {
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (next === undefined || next.at > to) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.at);
      next.f();
      while (this.pending.length > 0) await this.pending.shift();
    }
    this.t = to;
  }
  /** Moves the clock without running timers (a loop busy past them). */
  jump(to: number): void {
    this.t = to;
  }
}

const auto: CadenceOptions = { intervalMs: 1000, slots: 'auto', minSlotMs: 100, fill: 0.9 };

describe('cadence arithmetic', () => {
  it('caps slots at interval / minSlotMs, at least 1', () => {
    expect(maxSlots({ intervalMs: 1000, minSlotMs: 100 })).toBe(10);
    expect(maxSlots({ intervalMs: 1000, minSlotMs: 300 })).toBe(3);
    expect(maxSlots({ intervalMs: 50, minSlotMs: 100 })).toBe(1);
    expect(maxSlots({ intervalMs: 3_600_000, minSlotMs: 100 })).toBe(36_000);
  });

  it('sizes an interval by the blocks sealed in the last one at the fill fraction', () => {
    // 2.86 blocks' worth (the e2e at ~4K tx/s, 30M gas) / 0.9 = 3.2: 4 slots.
    expect(nextSlots(2.86, auto)).toBe(4);
    expect(nextSlots(2.7, auto)).toBe(3);
    expect(nextSlots(2.71, auto)).toBe(4);
    expect(nextSlots(0, auto)).toBe(1);
    expect(nextSlots(0.84, auto)).toBe(1); // ~1,000 tx/s of the e2e's mix: one block a second
    expect(nextSlots(0.91, auto)).toBe(2);
    expect(nextSlots(100, auto)).toBe(10);
    expect(nextSlots(2, { ...auto, fill: 0.5 })).toBe(4);
    // A fixed count, clamped by the shortest slot.
    expect(nextSlots(100, { ...auto, slots: 1 })).toBe(1);
    expect(nextSlots(0, { ...auto, slots: 3 })).toBe(3);
    expect(nextSlots(0, { ...auto, slots: 50 })).toBe(10);
  });

  it('slot j of k in interval n is due at origin + n·interval + j·interval/k', () => {
    expect(slotTime(1000, 1000, 3, 0, 4)).toBe(4000);
    expect(slotTime(1000, 1000, 3, 1, 4)).toBe(4250);
    expect(slotTime(1000, 1000, 3, 3, 4)).toBe(4750);
  });

  it("a block's fill is its fullest share of gas, transactions and bytes", () => {
    const raws = [new Uint8Array(100), new Uint8Array(300)];
    const b = { gasUsed: 15_000_000n, gasLimit: 30_000_000n, transactions: raws };
    expect(blockFill(b, { maxBlockTransactions: 4000, maxBlockBytes: 8 << 20 })).toBe(0.5);
    expect(blockFill(b, { maxBlockTransactions: 2, maxBlockBytes: 8 << 20 })).toBe(1);
    expect(blockFill(b, { maxBlockTransactions: 4000, maxBlockBytes: 500 })).toBe(0.8);
  });
});

describe('cadenceTicker on a fake clock', () => {
  it('ticks on the grid, with the slots asked for at each interval start', async () => {
    const clock = new FakeClock();
    const origin = clock.now();
    const plan = [2, 4, 1, 3];
    let asked = 0;
    const ticks: (SlotTick & { at: number })[] = [];
    const t = cadenceTicker(
      1000,
      () => plan[asked++] ?? 1,
      (s) => ticks.push({ ...s, at: clock.now() }),
      clock,
    );
    await clock.advanceTo(origin + 4999);
    t.stop();
    // Interval 1: 2 slots, 2: 4, 3: 1, 4: 3.
    expect(ticks.map((x) => [x.interval, x.slot, x.slots, x.at - origin])).toEqual([
      [1, 0, 2, 1000],
      [1, 1, 2, 1500],
      [2, 0, 4, 2000],
      [2, 1, 4, 2250],
      [2, 2, 4, 2500],
      [2, 3, 4, 2750],
      [3, 0, 1, 3000],
      [4, 0, 3, 4000],
      [4, 1, 3, 4000 + 1000 / 3],
      [4, 2, 3, 4000 + 2000 / 3],
    ]);
    expect(asked).toBe(5); // interval 5's count, asked when its first slot was armed
  });

  it('a late tick does not move the grid; slots missed entirely are skipped', async () => {
    const clock = new FakeClock();
    const origin = clock.now();
    const ticks: number[] = [];
    const t = cadenceTicker(
      1000,
      () => 4,
      (s) => ticks.push(clock.now() - origin + s.slot / 100),
      clock,
    );
    await clock.advanceTo(origin + 1000); // slot 0 of interval 1, on time
    clock.jump(origin + 1260); // the loop was busy past slot 1 (1250)
    await clock.advanceTo(origin + 1260); // slot 1 runs late, at 1260
    clock.jump(origin + 2600); // busy past 1500, 1750, 2000, 2250 and 2500
    await clock.advanceTo(origin + 2999);
    t.stop();
    await clock.advanceTo(origin + 5000); // stopped: no more ticks
    // late 1250 at 1260; then the first slot still ahead was 1500, run at 2600 (late); then 2750.
    expect(ticks).toEqual([1000, 1260.01, 2600.02, 2750.03]);
  });
});

describe('a Miner sealed by the cadence on a fake clock', () => {
  const rules = { ...defaultChainRules, chainId: 4242n, gasLimit: 21_000n * 10n };
  const common = makeCommon(rules.chainId);
  const N = 40;
  const keys = Array.from({ length: N }, (_, i) => keccak.keccak256(Uint8Array.of(9, i)));
  const addrs = keys.map((k) => privateToAddress(k));
  const genesis = fundedGenesis(addrs, rules.chainId, rules.gasLimit);
  const coinbase = new Uint8Array(20).fill(0xc0);

  /**
   * `perTick` transfers submitted every 100 ms for `seconds` (10 fit a block); returns each
   * transaction's submit time and hash, and every sealed block with the clock when it was sealed.
   */
  async function run(perTick: (tick: number) => number, seconds: number, o: CadenceOptions = auto) {
    const m = await Miner.create(genesis, { rules, coinbase, retention: 64 });
    const clock = new FakeClock();
    const origin = clock.now();
    const blocks: { at: number; sealed: SealedBlock }[] = [];
    const errors: unknown[] = [];
    let cadence: SealCadence | undefined;
    m.onSealed = (sealed) => {
      blocks.push({ at: clock.now(), sealed });
      const b = sealed.block;
      cadence?.sealed(blockFill({ ...b.header, transactions: b.transactions }, m.opts));
    };
    const track = <T>(p: Promise<T>): Promise<T> => {
      clock.pending.push(p);
      return p;
    };
    cadence = new SealCadence(
      { sealAtNextTurn: (empty) => track(m.sealAtNextTurn(empty)) },
      o,
      (e) => errors.push(e),
      clock,
    );
    const nonces = new Array<bigint>(N).fill(0n);
    const submitted: { at: number; hash: string }[] = [];
    let from = 0;
    for (let tick = 1; tick <= seconds * 10; tick++) {
      // Submissions at 70 ms past each 100 ms: between slots (of 1,000 / k ms for k ≤ 5), never at one.
      await clock.advanceTo(origin + tick * 100 - 30);
      const txs: Uint8Array[] = [];
      for (let i = 0; i < perTick(tick); i++) {
        const f = from++ % N;
        txs.push(signedTransfer(common, keys[f]!, nonces[f]!++, addrs[(f + 1) % N]!, 1n));
      }
      const res = await m.submit({ transactions: txs, bag: [], prefetchedRoot: m.head.header.stateRoot });
      for (const r of res.results) {
        expect(r.status).toBe(TxStatus.Accepted);
        submitted.push({ at: clock.now(), hash: Buffer.from(r.txHash).toString('hex') });
      }
    }
    await clock.advanceTo(origin + seconds * 1000 + 1000);
    cadence.stop();
    expect(errors).toEqual([]);
    return { origin, blocks, submitted, m };
  }

  const hashes = (b: SealedBlock) =>
    b.block.transactions.map((raw) => Buffer.from(keccak.keccak256(raw)).toString('hex'));

  it('seals on the grid, k from the fill, every transaction in order in the first block after it', async () => {
    // 3 a tick = 30 a second = 3 blocks' worth: 30 / (10 × 0.8) = 3.75, so 4 slots of ~7-8.
    const { origin, blocks, submitted } = await run(() => 3, 8);
    const withTxs = blocks.filter((b) => b.sealed.block.transactions.length > 0);
    // Nothing dropped or reordered: the blocks' transactions are the submissions, in order.
    expect(withTxs.flatMap((b) => hashes(b.sealed))).toEqual(submitted.map((s) => s.hash));
    // Never over the gas limit.
    for (const b of blocks) expect(b.sealed.block.header.gasUsed).toBeLessThanOrEqual(rules.gasLimit);
    // Each transaction is in the first block sealed after it was accepted (none held back).
    const blockOf = new Map<string, number>();
    for (const [i, b] of blocks.entries()) for (const h of hashes(b.sealed)) blockOf.set(h, i);
    for (const s of submitted) {
      // The first block sealed from its submission on, or the next if that one was sealed full
      // during the submission (a full seal makes room: the rest of the submission goes after it).
      const first = blocks.findIndex((b) => b.at >= s.at);
      const inFirst = blockOf.get(s.hash) === first;
      const afterFull = blocks[first]!.at === s.at && blockOf.get(s.hash) === first + 1;
      expect([s.hash, inFirst || afterFull]).toEqual([s.hash, true]);
    }
    // Interval 1 was sized with nothing sealed yet (one slot: full blocks sealed as they fill),
    // 2 by the partial interval before it (3 slots); from 3 on 4 slots of 250 ms (3 blocks'
    // worth a second / 0.9 = 3.3), each block sealed at one (none filled first), 6 or 9 in each
    // (two or three submissions fall in a slot), each interval the same 30 transactions.
    const late = blocks.filter((b) => b.at >= origin + 4000 && b.at < origin + 8000);
    expect(late.map((b) => b.at - origin)).toEqual(Array.from({ length: 16 }, (_, i) => 4000 + 250 * i));
    expect(late.map((b) => b.sealed.block.transactions.length)).toEqual(
      late.map((_, i) => (i % 2 === 0 ? 9 : 6)),
    );
    const perInterval = new Map<number, number>();
    for (const b of late) {
      const n = Math.floor((b.at - origin) / 1000);
      perInterval.set(n, (perInterval.get(n) ?? 0) + b.sealed.block.transactions.length);
    }
    // After the last submission (7,970 ms): the slot at 8,000 takes it; the other slots find
    // nothing pending and seal nothing; interval 9's first slot seals an empty block.
    expect(
      blocks
        .filter((b) => b.at > origin + 8000)
        .map((b) => [b.at - origin, b.sealed.block.transactions.length]),
    ).toEqual([[9000, 0]]);
    expect([...perInterval.values()]).toEqual([30, 30, 30, 30]);
  });

  it('a block that fills before its slot is sealed at once; the rest go in the next block', async () => {
    // 3 a tick, but 14 at tick 45 (4,470 ms, 4 slots of 250 ms by then): its slot takes 6 + 14 > 10.
    const { origin, blocks, submitted } = await run((t) => (t === 45 ? 14 : 3), 6);
    const withTxs = blocks.filter((b) => b.sealed.block.transactions.length > 0);
    expect(withTxs.flatMap((b) => hashes(b.sealed))).toEqual(submitted.map((s) => s.hash));
    for (const b of blocks) {
      expect(b.sealed.block.header.gasUsed).toBeLessThanOrEqual(rules.gasLimit);
      expect(b.sealed.block.transactions.length).toBeLessThanOrEqual(10);
    }
    // The full block was sealed off the grid, at 4,470 ms, with 10; the slot at 4,500 took the other
    // 10; the grid went on.
    const at = blocks.map((b) => [b.at - origin, b.sealed.block.transactions.length]);
    const i = at.findIndex(([t]) => t === 4470);
    expect(at.slice(i - 1, i + 3)).toEqual([
      [4250, 6],
      [4470, 10],
      [4500, 10],
      [4750, 6],
    ]);
  });

  it("a slot's seal is cut at the next queue turn: a submission waiting then goes in the next block", async () => {
    const m = await Miner.create(genesis, { rules, coinbase, retention: 64 });
    const sealed: SealedBlock[] = [];
    m.onSealed = (b) => sealed.push(b);
    const nonces = new Array<bigint>(N).fill(0n);
    const req = (...from: number[]) => ({
      transactions: from.map((f) => signedTransfer(common, keys[f]!, nonces[f]!++, addrs[(f + 1) % N]!, 1n)),
      bag: [],
      prefetchedRoot: m.head.header.stateRoot,
    });
    const x = req(1, 2);
    await m.submit(x);
    // B queued before the slot, not yet run; the slot asks; B's turn cuts the block first.
    const b = m.submitPrepared(await m.prepare(req(3, 4)));
    const slot = m.sealAtNextTurn(false);
    expect((await b).results.map((r) => r.status)).toEqual([TxStatus.Accepted, TxStatus.Accepted]);
    expect(await slot).toBeUndefined(); // its own turn found the block cut already
    expect(sealed.map((s) => s.block.transactions)).toEqual([x.transactions]);
    expect(m.pendingCount).toBe(2);
    // Two asks before a turn: one block. Nothing pending and not the interval's first: none.
    const [one, two] = await Promise.all([m.sealAtNextTurn(false), m.sealAtNextTurn(false)]);
    expect([one?.block.transactions.length, two]).toEqual([2, undefined]);
    expect(await m.sealAtNextTurn(false)).toBeUndefined();
    // An interval's first slot seals even an empty block; a sub-slot's ask after it keeps that.
    const [three, four] = await Promise.all([m.sealAtNextTurn(true), m.sealAtNextTurn(false)]);
    expect([three?.block.transactions.length, four]).toEqual([0, undefined]);
    expect(sealed).toHaveLength(3);
  });

  it("a block sealed full after a slot asked is that slot's block: no second one for the rest", async () => {
    // The slot asks just after the submission's turn began (from the miner's queue-wait clock,
    // read then): the submission is running, not waiting, so it executes first.
    let askAtTurn: (() => void) | undefined;
    let slot: Promise<SealedBlock | undefined> | undefined;
    const now = () => {
      const f = askAtTurn;
      askAtTurn = undefined;
      f?.();
      return 0;
    };
    const m = await Miner.create(genesis, { rules, coinbase, retention: 64, now });
    const sealed: SealedBlock[] = [];
    m.onSealed = (b) => sealed.push(b);
    const nonces = new Array<bigint>(N).fill(0n);
    const txs = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        signedTransfer(common, keys[i]!, nonces[i]!++, addrs[(i + 1) % N]!, 1n),
      );
    const at = () => m.head.header.stateRoot;
    await m.submit({ transactions: txs(8), bag: [], prefetchedRoot: at() });
    // 8 pending; a submission of 5 fills the block (10) and seals it itself; the ask's own turn
    // then seals nothing, and the other 3 wait for the next slot.
    const p = await m.prepare({ transactions: txs(5), bag: [], prefetchedRoot: at() });
    const running = m.submitPrepared(p); // reads the clock when queued...
    askAtTurn = () => {
      slot = m.sealAtNextTurn(false); // ...and again when its turn begins: the slot asks then
    };
    expect((await running).results.every((r) => r.status === TxStatus.Accepted)).toBe(true);
    expect(slot).toBeDefined();
    expect(await slot).toBeUndefined();
    expect(sealed.map((s) => s.block.transactions.length)).toEqual([10]);
    expect(m.pendingCount).toBe(3);
  });

  it('with slots fixed at 1, one block an interval besides full ones (the old behaviour)', async () => {
    const { origin, blocks, submitted } = await run(() => 3, 4, { ...auto, slots: 1 });
    const withTxs = blocks.filter((b) => b.sealed.block.transactions.length > 0);
    expect(withTxs.flatMap((b) => hashes(b.sealed))).toEqual(submitted.map((s) => s.hash));
    const onGrid = blocks.filter((b) => (b.at - origin) % 1000 === 0);
    const early = blocks.filter((b) => (b.at - origin) % 1000 !== 0);
    expect(onGrid.length).toBe(5);
    // 30 a second into blocks of 10: full blocks sealed as they fill, off the grid.
    expect(early.length).toBeGreaterThan(4);
  });
});
