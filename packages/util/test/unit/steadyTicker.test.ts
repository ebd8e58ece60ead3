/**
 * steadyTicker keeps its ticks on a fixed grid however late each one runs, where setInterval
 * would let every late tick push the rest back.
 */
import { describe, expect, it } from '@jest/globals';
import { steadyTicker, type TickerClock } from '@monsoon/util';

/** A fake clock: `advance` runs due timers in order, each `lateBy(k)` ms after it was due. */
class FakeClock implements TickerClock {
  t = 0;
  private timers: { at: number; f: () => void; id: number }[] = [];
  private next = 0;
  now(): number {
    return this.t;
  }
  setTimeout(f: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.push({ at: this.t + ms, f, id });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== handle);
  }
  /** Runs what falls due until `until`, each timer `late(n)` ms after it was due (n: timers run so far). */
  advance(until: number, late: (n: number) => number = () => 0): void {
    let n = 0;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const x = this.timers[0];
      if (x === undefined || x.at > until) break;
      this.timers.shift();
      this.t = Math.max(this.t, x.at + late(n++));
      x.f();
    }
    this.t = Math.max(this.t, until);
  }
}

describe('steadyTicker', () => {
  it('ticks on the grid however late each tick runs', () => {
    const clock = new FakeClock();
    const at: number[] = [];
    steadyTicker(1000, () => at.push(clock.now()), clock);
    // Every tick runs 40 ms late: setInterval would drift 40 ms a tick (1,040, 2,080, ...).
    clock.advance(10_500, () => 40);
    expect(at).toEqual([1040, 2040, 3040, 4040, 5040, 6040, 7040, 8040, 9040, 10040]);
  });

  it('skips a grid point missed entirely, without running twice to catch up', () => {
    const clock = new FakeClock();
    const at: number[] = [];
    steadyTicker(1000, () => at.push(clock.now()), clock);
    // The second tick runs 2.5 s late (a blocked loop): the grid points it passed are skipped.
    clock.advance(8_000, (n) => (n === 1 ? 2500 : 0));
    expect(at).toEqual([1000, 4500, 5000, 6000, 7000, 8000]);
  });

  it('stops', () => {
    const clock = new FakeClock();
    let ticks = 0;
    const t = steadyTicker(100, () => ticks++, clock);
    clock.advance(350);
    t.stop();
    clock.advance(1000);
    expect(ticks).toBe(3);
    expect(() => steadyTicker(0, () => {}, clock)).toThrow(RangeError);
  });
});
