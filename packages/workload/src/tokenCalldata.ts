/**
 * ABI encoding of the MonsoonToken calls the workload makes, by hand: every argument is a
 * static 32-byte word, so a full ABI coder would only add cost on the signing hot path.
 */
import { keccak } from '@monsoon/keccak';
import { bigintToBytes } from '@monsoon/util';
import { WorkloadError, WorkloadErrorCode } from './workloadError.js';

/** The 4-byte selector of a function signature, e.g. `transfer(address,uint256)`. */
export function functionSelector(signature: string): Uint8Array {
  return keccak.keccak256(new TextEncoder().encode(signature)).subarray(0, 4);
}

/** keccak256("Transfer(address,address,uint256)"): topic 0 of the token's Transfer event. */
export const TRANSFER_EVENT_TOPIC: Uint8Array = keccak.keccak256(
  new TextEncoder().encode('Transfer(address,address,uint256)'),
);

const TRANSFER = functionSelector('transfer(address,uint256)');
const BALANCE_OF = functionSelector('balanceOf(address)');
const TOTAL_SUPPLY = functionSelector('totalSupply()');
const MAX_UINT256 = (1n << 256n) - 1n;

function addressWord(address: Uint8Array, field: string): Uint8Array {
  if (address.length !== 20) {
    throw new WorkloadError(
      WorkloadErrorCode.BadOptions,
      `${field}: expected a 20-byte address, found ${address.length} bytes`,
      {
        field,
        found: address.length,
      },
    );
  }
  const w = new Uint8Array(32);
  w.set(address, 12);
  return w;
}

/** Calldata of `transfer(to, amount)` (68 bytes). */
export function encodeTokenTransfer(to: Uint8Array, amount: bigint): Uint8Array {
  if (amount < 0n || amount > MAX_UINT256) {
    throw new WorkloadError(WorkloadErrorCode.BadOptions, `amount: expected a uint256, found ${amount}`, {
      amount,
    });
  }
  const out = new Uint8Array(68);
  out.set(TRANSFER, 0);
  out.set(addressWord(to, 'to'), 4);
  out.set(bigintToBytes(amount, 32), 36);
  return out;
}

/** Calldata of `balanceOf(holder)` (36 bytes). */
export function encodeBalanceOf(holder: Uint8Array): Uint8Array {
  const out = new Uint8Array(36);
  out.set(BALANCE_OF, 0);
  out.set(addressWord(holder, 'holder'), 4);
  return out;
}

/** Calldata of `totalSupply()` (4 bytes). */
export function encodeTotalSupply(): Uint8Array {
  return TOTAL_SUPPLY.slice();
}
