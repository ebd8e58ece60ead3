/**
 * Witnesses: what a transaction read (its access set), and the nodes that prove it against a
 * state root — a client's bag. {@link witnessOf} proves an access set from a state held whole;
 * {@link preExecute} finds the access sets by running transactions on such a state. Tests and
 * benchmarks build bags this way; the client proves the same sets with the storage nodes' proofs.
 */
import type { TypedTransaction } from '@ethereumjs/tx';
import { EMPTY_CODE_HASH, type StateTree } from '@monsoon/dsm-tree';
import { byteKey, bytesEqual } from '@monsoon/util';
import { type BlockEnv, BlockExecutor, type BlockExecutorOptions, type TxOutcome } from './blockExecutor.js';
import type { ChainRules } from './chain.js';
import type { ExecutableTx } from './signedTx.js';
import { type AccessSet, keyBytes } from './treeStateManager.js';

/** An empty access set. */
export function emptyAccessSet(): AccessSet {
  return { accounts: new Set(), slots: new Map(), code: new Set() };
}

/** Adds every key of `from` to `into`. */
export function mergeAccessSet(into: AccessSet, from: AccessSet): void {
  for (const a of from.accounts) into.accounts.add(a);
  for (const a of from.code) into.code.add(a);
  for (const [a, slots] of from.slots) {
    const mine = into.slots.get(a);
    if (mine === undefined) into.slots.set(a, new Set(slots));
    else for (const s of slots) mine.add(s);
  }
}

/**
 * The nodes proving every key of `accesses` in `state`, each once, and the code of every
 * account whose code was read: a bag. Account proofs leave out the top `omitLevels` levels
 * (what the miner retains); storage proofs are whole, as miners keep no storage tries.
 */
export function witnessOf(state: StateTree, accesses: AccessSet, omitLevels = 0): Uint8Array[] {
  const out = state.proveAccounts([...accesses.accounts].map(keyBytes), omitLevels);
  for (const [a, slots] of accesses.slots) {
    out.push(...state.proveStorageMany(keyBytes(a), [...slots].map(keyBytes)));
  }
  for (const a of accesses.code) {
    const account = state.getAccount(keyBytes(a));
    if (account === undefined || bytesEqual(account.codeHash, EMPTY_CODE_HASH)) continue;
    const code = state.getCode(account.codeHash);
    if (code !== undefined) out.push(code);
  }
  return dedupe(out);
}

function dedupe(nodes: Uint8Array[]): Uint8Array[] {
  const seen = new Set<string>();
  return nodes.filter((n) => {
    const k = byteKey(n);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export interface PreExecuted {
  /** Each transaction's outcome, in order. */
  readonly outcomes: readonly TxOutcome[];
  /** Each transaction's access set, in order. */
  readonly accesses: readonly AccessSet[];
}

/**
 * Runs `txs` in order, as one block, on `state` (a whole state: it is changed, so pass a
 * snapshot to keep the original) and records what each read.
 */
export async function preExecute(
  state: StateTree,
  env: BlockEnv,
  rules: ChainRules,
  txs: readonly { readonly tx: TypedTransaction | ExecutableTx; readonly sender: Uint8Array }[],
  opts: BlockExecutorOptions = {},
): Promise<PreExecuted> {
  const executor = await BlockExecutor.create(state, env, rules, opts);
  const outcomes: TxOutcome[] = [];
  const accesses: AccessSet[] = [];
  for (const { tx, sender } of txs) {
    outcomes.push(await executor.execute(tx, sender));
    const a = emptyAccessSet();
    mergeAccessSet(a, executor.accesses);
    accesses.push(a);
  }
  return { outcomes, accesses };
}
