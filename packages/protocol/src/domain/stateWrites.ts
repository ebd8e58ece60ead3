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

/** Applies one account's update from a block: deleted, or new fields, code and slot writes. */
export function applyAccountUpdate(state: StateTree, a: AccountUpdate): void {
  if (a.deleted) {
    state.deleteAccount(a.address);
    return;
  }
  // A cleared account was destroyed earlier in the block: its old code went with it (a
  // re-creation carries its new code in `code`).
  const kept = a.clearStorage ? undefined : state.getAccount(a.address)?.codeHash;
  const codeHash = a.code !== undefined ? state.putCode(a.code) : (kept ?? EMPTY_CODE_HASH);
  state.putAccount(a.address, makeAccount({ nonce: a.nonce, balance: a.balance, codeHash }));
  if (a.clearStorage) state.clearStorage(a.address);
  for (const w of a.storage) state.putStorage(a.address, w.slot, w.value);
}
