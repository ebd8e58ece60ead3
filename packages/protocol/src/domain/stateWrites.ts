/**
 * Where protocol data meets a state tree: a genesis allocation and a block's logical updates
 * written into a StateTree. Every role that keeps state (miners, storage nodes, clients in
 * tests, benchmarks) writes them this one way, so their roots agree by construction.
 */
import { EMPTY_CODE_HASH, makeAccount, StateTree, type StateTreeOptions } from '@monsoon/dsm-tree';
import type { AccountUpdate } from './applyBlock.js';
import type { Genesis, GenesisAccount } from './genesis.js';

/** Writes one genesis account (its code and storage too). */
export function insertGenesisAccount(state: StateTree, a: GenesisAccount): void {
  const codeHash = a.code.length > 0 ? state.putCode(a.code) : EMPTY_CODE_HASH;
  state.putAccount(a.address, makeAccount({ nonce: a.nonce, balance: a.balance, codeHash }));
  for (const [slot, value] of a.storage) state.putStorage(a.address, slot, value);
}

/** The whole genesis state. */
export function genesisState(genesis: Genesis, opts: StateTreeOptions = {}): StateTree {
  const state = new StateTree(opts);
  for (const a of genesis.alloc) insertGenesisAccount(state, a);
  return state;
}

/**
 * Applies one account's update from a block: deleted, or new fields, code and slot writes.
 * `key` is keccak256 of its address, for a caller that hashed the block's addresses already (a
 * storage node hashes them in one batch to check their shards); the slots' keys are hashed in
 * one batch here. One walk writes the account, keeping its code hash and storage root.
 */
export function applyAccountUpdate(
  state: StateTree,
  a: AccountUpdate,
  key: Uint8Array = state.hashKey(a.address),
): void {
  if (a.deleted) {
    state.deleteAccountAtKey(key);
    return;
  }
  if (a.clearStorage) {
    // Destroyed earlier in the block: its old code went with it (a re-creation carries its new
    // code in `code`), and its storage starts empty.
    const codeHash = a.code !== undefined ? state.putCode(a.code) : EMPTY_CODE_HASH;
    state.putAccountAtKey(key, makeAccount({ nonce: a.nonce, balance: a.balance, codeHash }));
    state.clearStorageAtKey(key);
  } else {
    // One walk: the tree keeps the account's code hash (unless the block created code) and its
    // storage root as they are.
    state.putAccountFieldsAtKey(
      key,
      a.nonce,
      a.balance,
      a.code !== undefined ? state.putCode(a.code) : undefined,
    );
  }
  if (a.storage.length === 0) return;
  const slotKeys = state.keccak.keccak256Batch(a.storage.map((w) => w.slot));
  for (let i = 0; i < a.storage.length; i++)
    state.putStorageAtKey(key, slotKeys.subarray(32 * i, 32 * i + 32), a.storage[i]!.value);
}
