/** What the witness-gap and batch tests share: their block, and slots as words. */
import type { BlockEnv } from '@monsoon/execution';

/** The block those tests run in. */
export const gapBlockEnv: BlockEnv = {
  number: 5n,
  timestamp: 1_700_000_500n,
  coinbase: new Uint8Array(20).fill(0xcb),
  gasLimit: 30_000_000n,
};

/** `n` as a 32-byte big-endian word (a slot number). */
export const word = (n: number): Uint8Array => {
  const w = new Uint8Array(32);
  w[31] = n;
  return w;
};
