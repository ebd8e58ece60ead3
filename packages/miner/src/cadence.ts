/**
 * The miner's sealing cadence: each block interval cut into k equal slots on a grid phase-locked
 * to the interval's (slot j of interval n is due at `origin + n·interval + j·interval/k`), k
 * chosen at each interval's start from the blocks' worth this miner sealed over the one before.
 *
 * Why: at 30M gas and ~4K tx/s the pending block fills ~3 times a second and a full block is
 * sealed at once, at whatever moment it fills, besides the interval's own block: a second then
 * held 2, 3 or 4 blocks of ~1,300 transactions (committed per second 2.8K / 4.2K / 5.6K, session
 * 17's "quantisation"). With k slots a second, each sealing whatever is pending, every second
 * holds k blocks at the same phases, each about rate / k: a second's count follows the arrival
 * rate, not how many fill-ups fell inside it. k is picked with headroom so a block seldom fills
 * before its slot (one that does is still sealed at once: never over the gas limit, nothing
 * waits). At 0.9 the blocks are no more than the old way's (full ones plus the interval's) at
 * most rates: a rate of 0.84 blocks' worth a second (~1,000 tx/s of the e2e's mix) gets one
 * slot, not two (at 0.8 it got two: p50 to inclusion 448-537 vs 842-954 ms but 11% more CPU a
 * transaction, clients following twice the blocks; loaded pairs, 15:43-15:49).
 */
import type { TickerClock } from '@monsoon/util';

export interface CadenceOptions {
  /** The block interval users set (ms): slot 0 of every interval falls on its grid. */
  intervalMs: number;
  /** 'auto': k from the gas sealed over the last interval; a number: always that many slots. */
  slots: 'auto' | number;
  /** The shortest slot (ms): k is at most `floor(intervalMs / minSlotMs)` (and at least 1). */
  minSlotMs: number;
  /**
   * Fraction of a block a slot is planned to hold at most: the blocks' worth sealed over the
   * last interval over `fill` slots, rounded up. Below 1 so a rate a little above the last
   * interval's still fits its slots.
   */
  fill: number;
}

/**
 * One slot (a block an interval, full ones as they fill: as before) by default: 'auto' measured
 * no better in loaded 60-s e2e pairs (load 8-16, 15:17-16:15, steady seconds 0.40-0.58 vs main's
 * 0.42-0.75): the clients' closed loop sends a block's worth at once when a block commits, so a
 * slot often fills early whatever k is. `--block-slots auto` runs it, for an A/B on a quiet box.
 */
export const defaultCadenceOptions: CadenceOptions = {
  intervalMs: 1000,
  slots: 1,
  minSlotMs: 100,
  fill: 0.9,
};

/** The most slots an interval may have: at least 1, each at least `minSlotMs` long. */
export function maxSlots(o: Pick<CadenceOptions, 'intervalMs' | 'minSlotMs'>): number {
  return Math.max(1, Math.floor(o.intervalMs / Math.max(1, o.minSlotMs)));
}

/**
 * Slots for the next interval, given what this miner sealed over the last one in blocks' worth
 * (`sealed`: each block's fullest share of its limits — gas, transactions, bytes — summed):
 * ceil(sealed / fill), clamped to [1, maxSlots]. No hysteresis: a count that moves between two
 * values from one interval to the next only changes the blocks' size, not a second's total.
 */
export function nextSlots(
  sealed: number,
  o: Pick<CadenceOptions, 'intervalMs' | 'minSlotMs' | 'slots' | 'fill'>,
): number {
  const most = maxSlots(o);
  if (o.slots !== 'auto') return Math.min(most, Math.max(1, Math.floor(o.slots)));
  return Math.min(most, Math.max(1, Math.ceil(Math.max(0, sealed) / o.fill)));
}

/** A block's fullest share of the limits it was built under: gas used, transactions, bytes (0..1). */
export function blockFill(
  b: { gasUsed: bigint; gasLimit: bigint; transactions: readonly Uint8Array[] },
  limits: { maxBlockTransactions: number; maxBlockBytes: number },
): number {
  let bytes = 0;
  for (const raw of b.transactions) bytes += raw.length;
  return Math.max(
    b.gasLimit > 0n ? Number(b.gasUsed) / Number(b.gasLimit) : 0,
    b.transactions.length / limits.maxBlockTransactions,
    bytes / limits.maxBlockBytes,
  );
}

/** A due slot: `slot` of `slots` in interval `interval` (slot 0 starts the interval). */
export interface SlotTick {
  interval: number;
  slot: number;
  slots: number;
}

/** When slot `slot` of `slots` in interval `interval` is due, from `origin`. */
export function slotTime(
  origin: number,
  intervalMs: number,
  interval: number,
  slot: number,
  slots: number,
): number {
  return origin + interval * intervalMs + (slot * intervalMs) / slots;
}

/**
 * The first slot due strictly after `now` (a late tick does not move the grid; slots the loop
 * missed entirely are skipped, not run late), from the slot after (`interval`, `slot`) on. At an
 * interval's start `slotsFor(interval)` is asked how many slots that interval has.
 */
function slotAfter(
  origin: number,
  intervalMs: number,
  from: SlotTick,
  now: number,
  slotsFor: () => number,
): SlotTick {
  let { interval, slot, slots } = from;
  // Past the whole interval of `from` already: jump to the interval `now` is in.
  const at = Math.floor((now - origin) / intervalMs);
  if (at > interval) {
    interval = at;
    slots = slotsFor();
    slot = Math.floor(((now - origin - interval * intervalMs) * slots) / intervalMs);
  }
  for (;;) {
    slot++;
    if (slot >= slots) {
      interval++;
      slot = 0;
      slots = slotsFor();
    }
    if (slotTime(origin, intervalMs, interval, slot, slots) > now) return { interval, slot, slots };
  }
}

const realClock: TickerClock = {
  now: () => performance.now(),
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface CadenceTicker {
  stop(): void;
  /** The slots of the interval now running. */
  readonly slots: number;
}

/**
 * Calls `tick` at every slot on the grid from now (the first slot an interval from now is slot 0
 * of interval 1), asking `slotsFor()` at each interval's start how many slots it has, until
 * stopped.
 */
export function cadenceTicker(
  intervalMs: number,
  slotsFor: () => number,
  tick: (t: SlotTick) => void,
  clock: TickerClock = realClock,
): CadenceTicker {
  if (!(intervalMs > 0)) throw new RangeError(`cadenceTicker: interval must be > 0 ms, found ${intervalMs}`);
  const origin = clock.now();
  // Interval 0 is the one starting now, as one slot: the first tick is slot 0 of interval 1.
  let due: SlotTick = { interval: 0, slot: 0, slots: 1 };
  let stopped = false;
  let handle: unknown;
  const arm = () => {
    due = slotAfter(origin, intervalMs, due, clock.now(), slotsFor);
    const at = slotTime(origin, intervalMs, due.interval, due.slot, due.slots);
    handle = clock.setTimeout(run, Math.max(0, at - clock.now()));
  };
  const run = () => {
    if (stopped) return;
    const t = due;
    arm();
    tick(t);
  };
  arm();
  return {
    stop: () => {
      stopped = true;
      clock.clearTimeout(handle);
    },
    get slots() {
      return due.slots;
    },
  };
}

/** What the cadence seals with: the Miner's sealAtNextTurn (the block cut at the next queue turn). */
export interface Sealer {
  /** `empty`: seal even an empty block (each interval's first slot); else only one holding a transaction. */
  sealAtNextTurn(empty: boolean): Promise<unknown>;
}

/**
 * A miner's sealing on the cadence's grid: each interval's first slot seals even an empty block,
 * its other slots whatever is pending; `sealed(fill)` is told every block this miner seals (the
 * slots' and the full ones'), and sizes the next interval by them.
 */
export class SealCadence {
  private readonly ticker: CadenceTicker;
  /** Blocks' worth sealed since the last interval was sized ({@link blockFill}s summed), and when. */
  private fillSealed = 0;
  private fillSince: number;

  constructor(
    sealer: Sealer,
    readonly o: CadenceOptions,
    onError: (e: unknown) => void,
    clock: TickerClock = realClock,
  ) {
    this.fillSince = clock.now();
    this.ticker = cadenceTicker(
      o.intervalMs,
      () => {
        // Blocks' worth sealed per interval since the last call (about one interval ago: each
        // interval's first slot is armed at its predecessor's last; at least half an interval).
        const now = clock.now();
        const per = (this.fillSealed * o.intervalMs) / Math.max(o.intervalMs / 2, now - this.fillSince);
        this.fillSealed = 0;
        this.fillSince = now;
        return nextSlots(per, o);
      },
      (t) => void sealer.sealAtNextTurn(t.slot === 0).catch(onError),
      clock,
    );
  }

  /** A block this miner sealed, as its {@link blockFill}. */
  sealed(fill: number): void {
    this.fillSealed += fill;
  }

  /** The slots of the interval now running. */
  get slots(): number {
    return this.ticker.slots;
  }

  stop(): void {
    this.ticker.stop();
  }
}
