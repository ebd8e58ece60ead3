/** Ids of filters and subscriptions, as geth makes them (rpc.NewID). */
import { randomBytes } from 'node:crypto';

/** 16 random bytes as a QUANTITY: `0x` and hex digits without leading zeros. */
export function newRpcId(): string {
  const digits = randomBytes(16).toString('hex').replace(/^0+/, '');
  return `0x${digits === '' ? '0' : digits}`;
}
