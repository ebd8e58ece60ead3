/**
 * Sender recovery runs on worker threads by default where the machine has cores for them: none
 * on two cores (the roles beside the miner need them), then one per core beyond two, up to four.
 */
import { describe, expect, it } from '@jest/globals';
import { defaultRecoveryThreads } from '@monsoon/miner';

describe('defaultRecoveryThreads', () => {
  it('leaves two cores to the rest and takes at most four', () => {
    expect([1, 2, 3, 4, 6, 8, 64].map((cores) => defaultRecoveryThreads(cores))).toEqual([
      0, 0, 1, 2, 4, 4, 4,
    ]);
  });
});
