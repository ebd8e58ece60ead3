/** The shared test helpers: the PRNG's sequence is fixed by its seed; until() waits and names what it waited for. */
import { describe, expect, it } from '@jest/globals';
import { Prng, rejection, thrown, until } from '@monsoon/test-utils';

describe('Prng', () => {
  it('is mulberry32: the same seed gives the same sequence, draws stay in range', () => {
    // mulberry32 as the copies it replaced wrote it, so seeded tests keep their data.
    let state = 99;
    const reference = () => {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (t ^ (t >>> 14)) >>> 0;
    };
    const p = new Prng(99);
    expect(Array.from({ length: 100 }, () => p.u32())).toEqual(Array.from({ length: 100 }, reference));
    expect(new Prng(1).u32()).toBe(2693262067);
    const a = new Prng(7);
    const b = new Prng(7);
    expect(a.bytes(64)).toEqual(b.bytes(64));
    for (let i = 0; i < 1000; i++) {
      const n = a.int(10);
      expect(Number.isInteger(n) && n >= 0 && n < 10).toBe(true);
      const x = a.range(3, 5);
      expect(x >= 3 && x <= 5).toBe(true);
      expect(a.bigint(12) < 4096n).toBe(true);
    }
    expect(a.shuffle([1, 2, 3, 4]).sort()).toEqual([1, 2, 3, 4]);
    expect(() => a.pick([])).toThrow('pick: expected at least one item, found none');
  });
});

describe('until, thrown, rejection', () => {
  it('resolves with the first value that is neither undefined nor false; a throw is "not yet"', async () => {
    let calls = 0;
    const v = await until(
      () => {
        calls++;
        if (calls === 1) throw new Error('not ready');
        return calls < 3 ? false : calls;
      },
      { what: 'the third call', timeoutMs: 10_000, intervalMs: 1 },
    );
    expect(v).toBe(3);
  });

  it('times out naming what it waited for, with the last error as the cause', async () => {
    const e = await rejection<Error>(
      until(
        () => {
          throw new Error('still down');
        },
        { what: 'a server that never comes up', timeoutMs: 20, intervalMs: 5 },
      ),
    );
    expect(e.message).toBe('timed out after 20 ms waiting for a server that never comes up');
    expect((e.cause as Error).message).toBe('still down');
  });

  it('thrown and rejection give the error, or say there was none', async () => {
    expect(thrown(() => 1)).toBeUndefined();
    expect(thrown(() => JSON.parse('{'))).toBeInstanceOf(SyntaxError);
    await expect(rejection(Promise.resolve(5))).rejects.toThrow('expected a rejection, found a value: 5');
  });
});
