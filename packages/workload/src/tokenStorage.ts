/**
 * Where MonsoonToken keeps its state (contracts/MonsoonToken.sol documents the same layout):
 * `balances` at slot 0, `allowances` at slot 1, `totalSupply` at slot 2. The genesis writes
 * these slots directly, so they must match what solc assigned.
 */
import { keccak } from '@monsoon/keccak';
import { bigintToBytes, hexToBytes } from '@monsoon/util';
import { tokenArtifact } from './tokenArtifact.js';
import { WorkloadError, WorkloadErrorCode } from './workloadError.js';

/**
 * Where the genesis puts the token: a fixed, easy-to-spot address ("E20C0" for ERC-20 coin)
 * far below any key-derived address.
 */
export const DEFAULT_TOKEN_ADDRESS: Uint8Array = hexToBytes('0x00000000000000000000000000000000000e20c0', 20);

/** Slot of the `balances` mapping. */
export const TOKEN_BALANCES_SLOT = 0n;
/** Slot of the `allowances` mapping. */
export const TOKEN_ALLOWANCES_SLOT = 1n;
/** Slot of `totalSupply`. */
export const TOKEN_TOTAL_SUPPLY_SLOT = 2n;

function checkAddress(address: Uint8Array, field: string): void {
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
}

/** keccak256(pad32(key) ‖ pad32(slot)): Solidity's slot for `mapping[key]` when the mapping is at `slot`. */
function mappingSlot(key: Uint8Array, slot: Uint8Array): Uint8Array {
  const buf = new Uint8Array(64);
  buf.set(key, 32 - key.length);
  buf.set(slot, 32);
  return keccak.keccak256(buf);
}

/** The 32-byte storage slot of `balances[holder]`. */
export function tokenBalanceSlot(holder: Uint8Array): Uint8Array {
  checkAddress(holder, 'holder');
  return mappingSlot(holder, bigintToBytes(TOKEN_BALANCES_SLOT, 32));
}

/** The 32-byte storage slot of `allowances[owner][spender]`. */
export function tokenAllowanceSlot(owner: Uint8Array, spender: Uint8Array): Uint8Array {
  checkAddress(owner, 'owner');
  checkAddress(spender, 'spender');
  return mappingSlot(spender, mappingSlot(owner, bigintToBytes(TOKEN_ALLOWANCES_SLOT, 32)));
}

/**
 * The balance slots of many holders in one native keccak call: slot i is bytes [32i, 32i+32)
 * of the result. `addresses` holds the 20-byte addresses back to back.
 */
export function tokenBalanceSlots(addresses: Uint8Array): Uint8Array {
  if (addresses.length % 20 !== 0) {
    throw new WorkloadError(
      WorkloadErrorCode.BadOptions,
      `addresses: expected a multiple of 20 bytes, found ${addresses.length}`,
      {
        found: addresses.length,
      },
    );
  }
  const n = addresses.length / 20;
  const data = new Uint8Array(64 * n);
  const offsets = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) {
    data.set(addresses.subarray(20 * i, 20 * i + 20), 64 * i + 12);
    // pad32(TOKEN_BALANCES_SLOT) is all zeros, already there.
    offsets[i + 1] = 64 * (i + 1);
  }
  return keccak.keccak256Packed(data, offsets, n);
}

/** The token contract's runtime code as bytes: what the genesis puts at the token address. */
export function tokenRuntimeCode(): Uint8Array {
  return hexToBytes(tokenArtifact.runtimeBytecode);
}
