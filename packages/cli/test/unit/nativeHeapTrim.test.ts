import { describe, expect, it, jest } from '@jest/globals';
import {
  ClusterErrorCode,
  DEFAULT_MALLOC_TRIM_SECONDS,
  MALLOC_TRIM_ENV,
  mallocTrimIntervalMs,
  startNativeHeapTrim,
} from '@monsoon/cli';
import { thrown } from '@monsoon/test-utils';

describe('mallocTrimIntervalMs', () => {
  it(`is ${DEFAULT_MALLOC_TRIM_SECONDS} s unless ${MALLOC_TRIM_ENV} says otherwise; 0 is off`, () => {
    expect(mallocTrimIntervalMs({})).toBe(DEFAULT_MALLOC_TRIM_SECONDS * 1000);
    expect(mallocTrimIntervalMs({ [MALLOC_TRIM_ENV]: '' })).toBe(DEFAULT_MALLOC_TRIM_SECONDS * 1000);
    expect(mallocTrimIntervalMs({ [MALLOC_TRIM_ENV]: '0' })).toBe(0);
    expect(mallocTrimIntervalMs({ [MALLOC_TRIM_ENV]: '2.5' })).toBe(2500);
  });

  it('refuses a value that is not seconds ≥ 0', () => {
    for (const bad of ['-1', 'often', 'Infinity']) {
      const e = thrown(() => mallocTrimIntervalMs({ [MALLOC_TRIM_ENV]: bad })) as {
        code: string;
        message: string;
      };
      expect(e.code).toBe(ClusterErrorCode.BadOptions);
      expect(e.message).toContain(`found "${bad}"`);
    }
  });
});

describe('startNativeHeapTrim', () => {
  it('trims at once and on every tick, one trim at a time', async () => {
    jest.useFakeTimers();
    try {
      const pending: (() => void)[] = [];
      const trim = jest.fn(() => new Promise<boolean>((resolve) => pending.push(() => resolve(true))));
      const timer = startNativeHeapTrim({ [MALLOC_TRIM_ENV]: '1' }, trim);
      expect(timer).toBeDefined();
      expect(trim).toHaveBeenCalledTimes(1);
      jest.advanceTimersByTime(3000);
      expect(trim).toHaveBeenCalledTimes(1); // the first has not finished
      pending.shift()!();
      await Promise.resolve();
      await Promise.resolve();
      jest.advanceTimersByTime(1000);
      expect(trim).toHaveBeenCalledTimes(2);
      clearInterval(timer);
    } finally {
      jest.useRealTimers();
    }
  });

  it('does nothing when off or without the addon', () => {
    const trim = jest.fn(() => Promise.resolve(true));
    expect(startNativeHeapTrim({ [MALLOC_TRIM_ENV]: '0' }, trim)).toBeUndefined();
    expect(trim).not.toHaveBeenCalled();
    const none = jest.fn(() => undefined);
    expect(startNativeHeapTrim({}, none)).toBeUndefined();
    expect(none).toHaveBeenCalledTimes(1);
  });
});
