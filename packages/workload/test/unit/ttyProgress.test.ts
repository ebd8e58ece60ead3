/** ttyProgress: a status line on a terminal, nothing elsewhere. */

import { describe, expect, it } from '@jest/globals';
import { ttyProgress } from '@monsoon/workload';

function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; written: string[] } {
  const written: string[] = [];
  const stream = { isTTY, write: (s: string) => written.push(s) > 0 } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

describe('ttyProgress', () => {
  it('redraws one line on a TTY and ends it when done', () => {
    const { stream, written } = fakeStream(true);
    const progress = ttyProgress('accounts', stream)!;
    progress(10, 40);
    progress(20, 40);
    progress(40, 40);
    expect(written[0]).toBe('\raccounts: 10/40 (25%)');
    expect(written.at(-1)).toBe('\raccounts: 40/40 (100%)\n');
  });

  it('is undefined when the stream is not a terminal (CI, logs)', () => {
    expect(ttyProgress('accounts', fakeStream(false).stream)).toBeUndefined();
  });
});
