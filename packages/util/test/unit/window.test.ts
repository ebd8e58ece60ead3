/** windowLength: the rule the miner's blocks, a storage node's versions and a client's chain view share. */
import { describe, expect, it } from '@jest/globals';
import { Prng } from '@monsoon/test-utils';
import { windowLength } from '@monsoon/util';

/** The rule as the roles wrote it before: keep `most`, then drop the oldest while over the cap, down to `floor`. */
function fromTheOldest(weights: readonly number[], most: number, cap: number, floor: number): number {
  let kept = Math.min(weights.length, most);
  let held = 0;
  for (let i = 0; i < kept; i++) held += weights[i]!;
  while (held > cap && kept > floor) held -= weights[--kept]!;
  return kept;
}

describe('windowLength', () => {
  it('keeps `most` while the weights stay within the cap', () => {
    expect(windowLength([1, 1, 1, 1, 1], { most: 3, cap: 10, floor: 1 })).toBe(3);
    expect(windowLength([5, 5], { most: 2, cap: 10, floor: 0 })).toBe(2);
  });

  it('drops the entry whose weight passes the cap, and everything older', () => {
    // 4 + 4 = 8 fits 9; the third passes it.
    expect(windowLength([4, 4, 4, 4], { most: 10, cap: 9, floor: 1 })).toBe(2);
    // The newest alone passes the cap: the floor still keeps one.
    expect(windowLength([20, 1, 1], { most: 10, cap: 9, floor: 1 })).toBe(1);
    expect(windowLength([20, 1, 1], { most: 10, cap: 9, floor: 0 })).toBe(0);
  });

  it('never keeps fewer than the floor, nor more than `most` when the floor is above it', () => {
    expect(windowLength([100, 100, 100, 100], { most: 10, cap: 1, floor: 3 })).toBe(3);
    expect(windowLength([100, 100, 100, 100], { most: 2, cap: 1, floor: 3 })).toBe(2);
  });

  it('answers `most` when the weights end first (a chain shorter than the window, or cut off below)', () => {
    expect(windowLength([1, 1], { most: 5, cap: 10, floor: 1 })).toBe(5);
    expect(windowLength([], { most: 5, cap: 0, floor: 0 })).toBe(5);
  });

  it('reads only as far as the answer needs (parent links walked lazily)', () => {
    let read = 0;
    function* weights() {
      for (;;) {
        read++;
        yield 3;
      }
    }
    expect(windowLength(weights(), { most: 1_000, cap: 30, floor: 2 })).toBe(10);
    expect(read).toBe(11);
    read = 0;
    expect(windowLength(weights(), { most: 4, cap: 1_000, floor: 2 })).toBe(4);
    expect(read).toBe(5);
  });

  it('keeps what the oldest-first rule kept, over random weights and bounds', () => {
    const rand = new Prng(15);
    for (let run = 0; run < 2_000; run++) {
      const n = Math.floor(rand.next() * 40);
      const weights = Array.from({ length: n }, () => Math.floor(rand.next() * 10));
      const most = 1 + Math.floor(rand.next() * 45);
      const cap = Math.floor(rand.next() * 120);
      const floor = Math.floor(rand.next() * 20);
      const expected = fromTheOldest(weights, most, cap, floor);
      // Past the end of the weights the answer is `most`, which a caller clamps to what it holds.
      expect(Math.min(n, windowLength(weights, { most, cap, floor }))).toBe(expected);
    }
  });
});
