/**
 * Speculative pre-execution (RainBlock §4, DESIGN §6): a transaction is run in the EVM against
 * the head's state, read from the storage shards on demand and proven against the head's
 * root, and every node the run used becomes its witness. The block it will land in is guessed
 * from the head (next number, now as timestamp, the head's miner as coinbase); a wrong guess
 * that changes what the transaction reads is caught by the miner as stale.
 *
 * The transaction runs as if it were the sender's next: the client may hold earlier ones of
 * the same sender not yet in a block, so the nonce the head's state has is moved up to the
 * transaction's before it runs (only in this throwaway tree). What it read is the same.
 */

import type { Common } from '@ethereumjs/common';
import {
  type Account,
  byteKey,
  bytesEqual,
  DsmErrorCode,
  EMPTY_CODE_HASH,
  isDsmError,
  makeAccount,
  type StateTree,
  toHex,
} from '@monsoon/dsm-tree';
import {
  type BlockEnv,
  BlockExecutor,
  type ChainRules,
  checkTransaction,
  type EngineName,
  type EvmPool,
  ExecutionError,
  ExecutionErrorCode,
  isExecutionError,
  type SignedTx,
  type TxFees,
  type TxOutcome,
} from '@monsoon/execution';
import type { AccountQuery } from '@monsoon/protocol';
import {
  type AccountRead,
  PathWitness,
  type PriorRead,
  type RemoteState,
  type StateRef,
  type Witness,
} from './remoteState.js';
import type { SlotPredictor } from './slotPredictor.js';

export interface Speculation {
  /** What the transaction did on the head's state ('included' also for a revert: it pays gas). */
  readonly outcome: Exclude<TxOutcome, { status: 'missing' }>;
  /** Every node and code blob the run used. */
  readonly served: Witness;
  /** BatchGet rounds it took (0: everything was cached). */
  readonly rounds: number;
}

/**
 * What a pre-execution of `tx` in a block paid to `coinbase` reads first: its sender's account,
 * its callee's (with the code, unless `tx` can only be a plain transfer), and the coinbase's
 * (every transaction pays it a fee: left out, each pre-execution at a new state would stop there
 * and fetch it in a round of its own).
 */
export function firstReads(
  tx: SignedTx,
  sender: Uint8Array,
  coinbase: Uint8Array,
  /** Slots of the callee it will read (a SlotPredictor's guess). */
  calleeSlots: Uint8Array[] = [],
  /**
   * Whether to ask for the callee's code. Not by default for what can only be a plain transfer:
   * its recipient's code is read only where it has some (then the run on a tree asks for it), and
   * a storage node decodes the account of every query that asks for code, to find its code hash
   * (every transfer's recipient, most of a BatchGet).
   */
  calleeCode: boolean = !plainShaped(tx),
): AccountQuery[] {
  const first: AccountQuery[] = [
    { address: sender, slots: [], code: false },
    { address: coinbase, slots: [], code: false },
  ];
  if (tx.to !== undefined) first.push({ address: tx.to, slots: calleeSlots, code: calleeCode });
  return first;
}

/**
 * The engine a pre-execution of `tx` needs: none for what can only be a plain transfer (no data,
 * no access list: BlockExecutor moves the value itself, and a revm engine built for it, one per
 * pre-execution, was a tenth of the client's CPU), else revm (the default). Should it call code
 * after all (a contract's receive), @ethereumjs/evm, borrowed from the pool, runs it: the same
 * outcome, slower.
 */
export function engineOf(tx: SignedTx): EngineName | undefined {
  return tx.to !== undefined && tx.data.length === 0 && tx.accessList.length === 0 ? 'ethereumjs' : undefined;
}

export async function speculate(
  remote: RemoteState,
  at: StateRef,
  env: BlockEnv,
  rules: ChainRules,
  common: Common,
  tx: SignedTx,
  sender: Uint8Array,
  evms: EvmPool,
  /**
   * What read at `at` before: a tree left unchanged, to run on (see RemoteState.withState), or
   * accounts' walked paths, taken for a plain transfer's reads where they are its three.
   */
  from?: PriorRead,
  /** Guesses the callee's slots with the first reads, and learns from this run. */
  slots?: SlotPredictor,
): Promise<Speculation> {
  if (plainShaped(tx)) {
    // What can only be a plain transfer reads three accounts: walked over cached paths (shared
    // by every transaction at the state), no tree. Anything else goes the tree's way below.
    const reads =
      priorReads(from, at, sender, tx.to!, env.coinbase) ??
      (await remote.readAccounts(at, [
        { address: sender, slots: [], code: false },
        { address: tx.to!, slots: [], code: false },
        { address: env.coinbase, slots: [], code: false },
      ]));
    if (reads !== undefined) {
      let account = reads[0]!.account;
      if (account !== undefined && account.nonce < tx.nonce)
        account = makeAccount({ ...account, nonce: tx.nonce });
      const read = (a: Uint8Array) => reads.find((r) => bytesEqual(r.address, a))!.account;
      const outcome = plainOutcome(read, tx, account, env, rules);
      if (outcome !== undefined) return { outcome, served: new PathWitness(reads), rounds: 0 };
    }
  }
  let runs = 0;
  let calleeSlots: Iterable<string> = [];
  const guess = slots?.predict(tx, sender) ?? [];
  const { value, served, rounds } = await remote.withState(
    at,
    // Here the callee may run code (a plain transfer's recipient had some): its code comes first.
    firstReads(tx, sender, env.coinbase, guess, true),
    async (tree) => {
      runs++;
      let account = tree.getAccount(sender);
      if (account !== undefined && account.nonce < tx.nonce)
        account = makeAccount({ ...account, nonce: tx.nonce });
      const plain = plainTransfer(tree, tx, account, env, rules);
      if (plain !== undefined) return plain;
      if (account !== undefined) tree.putAccount(sender, account);
      const executor = await BlockExecutor.create(tree, env, rules, {
        common,
        evms,
        engine: engineOf(tx),
        // The tree is thrown away (or handed on unchanged): code it reads stays in the cache.
        keepCode: false,
      });
      try {
        const outcome = await executor.execute(tx, sender, guess);
        if (outcome.status === 'missing') throw outcome.error;
        if (tx.to !== undefined) calleeSlots = executor.accesses.slots.get(byteKey(tx.to)) ?? [];
        return outcome;
      } finally {
        executor.release();
      }
    },
    { from: from !== undefined && 'tree' in from ? from : undefined },
  );
  // A run stopped at a slot it lacked: the next call like it fetches what this one read up front.
  slots?.learn(tx, sender, calleeSlots, runs > 1, guess.length > 0);
  return { outcome: value, served, rounds };
}

/**
 * The reads of `sender`, `to` and `coinbase`, in that order, from `from` (an admission's reads of
 * them at the same state root, walked over the same cache: the same accounts and paths a walk now
 * gives); undefined where `from` is no such reads or lacks one of them.
 */
function priorReads(
  from: PriorRead | undefined,
  at: StateRef,
  sender: Uint8Array,
  to: Uint8Array,
  coinbase: Uint8Array,
): AccountRead[] | undefined {
  if (from === undefined || !('reads' in from) || !bytesEqual(from.stateRoot, at.stateRoot)) return undefined;
  const s = readOf(from.reads, sender);
  const t = readOf(from.reads, to);
  const c = readOf(from.reads, coinbase);
  return s === undefined || t === undefined || c === undefined ? undefined : [s, t, c];
}

function readOf(reads: readonly AccountRead[], address: Uint8Array): AccountRead | undefined {
  for (const r of reads) if (bytesEqual(r.address, address)) return r;
  return undefined;
}

/** The largest balance an account can hold. */
const MAX_BALANCE = (1n << 256n) - 1n;

/**
 * The outcome of what can only be a plain value transfer — no data, no access list, to an
 * account without code that is not a precompile (nor any address below 2^16, where precompiles
 * live), whose balance cannot overflow — found without an executor: the checks every transaction
 * passes, then 21,000 gas and no logs, as BlockExecutor's own transfer path gives it. Reads the
 * recipient and the coinbase as that path does (the coinbase is paid the tip), so the witness is
 * the same: the three accounts' paths. Undefined for anything else, and where the recipient or
 * the coinbase would be left empty and deleted (BlockExecutor runs those); a
 * missing node is reported as the executor reports it (MISSING_NODE naming the account).
 */
export function plainTransfer(
  tree: StateTree,
  tx: SignedTx,
  account: Account | undefined,
  env: BlockEnv,
  rules: ChainRules,
): Exclude<TxOutcome, { status: 'missing' }> | undefined {
  return plainOutcome((a) => readAccount(tree, a), tx, account, env, rules);
}

/** Whether `tx` can only be a plain transfer, by its shape (its recipient's code aside). */
function plainShaped(tx: SignedTx): boolean {
  const to = tx.to;
  return (
    to !== undefined &&
    tx.data.length === 0 &&
    tx.type <= 2 &&
    tx.accessList.length === 0 &&
    !isLowAddress(to)
  );
}

/** plainTransfer over accounts read by `read`. */
function plainOutcome(
  read: (address: Uint8Array) => Account | undefined,
  tx: SignedTx,
  account: Account | undefined,
  env: BlockEnv,
  rules: ChainRules,
): Exclude<TxOutcome, { status: 'missing' }> | undefined {
  if (!plainShaped(tx)) return undefined;
  const to = tx.to!;
  const recipient = read(to);
  if (
    recipient !== undefined &&
    (!bytesEqual(recipient.codeHash, EMPTY_CODE_HASH) || recipient.balance + tx.value > MAX_BALANCE)
  )
    return undefined;
  const coinbase = read(env.coinbase);
  let fees: TxFees;
  try {
    fees = checkTransaction(tx, account, rules, env.gasLimit);
  } catch (e) {
    if (isExecutionError(e)) return { status: 'invalid', error: e };
    throw e;
  }
  const gasUsed = tx.intrinsicGas;
  // An existing account left empty is deleted (EIP-161), which can need a sibling node more
  // than the reads did: the executor's flush fetches it.
  if (leftEmpty(recipient, tx.value) || leftEmpty(coinbase, gasUsed * fees.priorityFee)) return undefined;
  return {
    status: 'included',
    receipt: { type: tx.type, status: 1, gasUsed, cumulativeGasUsed: gasUsed, logs: [] },
  };
}

function leftEmpty(a: Account | undefined, credit: bigint): boolean {
  return (
    a !== undefined && a.nonce === 0n && a.balance + credit === 0n && bytesEqual(a.codeHash, EMPTY_CODE_HASH)
  );
}

/** Whether the first 18 of an address's 20 bytes are zero (precompiles, present and future). */
function isLowAddress(a: Uint8Array): boolean {
  for (let i = 0; i < 18; i++) if (a[i] !== 0) return false;
  return true;
}

/** An account from the tree; a node the tree lacks is MISSING_NODE naming the account (what withState fetches). */
function readAccount(tree: StateTree, address: Uint8Array): Account | undefined {
  try {
    return tree.getAccount(address);
  } catch (e) {
    if (isDsmError(e, DsmErrorCode.MissingNode) || isDsmError(e, DsmErrorCode.HashMismatch))
      throw new ExecutionError(
        ExecutionErrorCode.MissingNode,
        `account ${toHex(address)} needs a node that was not fetched (${e.message})`,
        { address },
        e,
      );
    throw e;
  }
}
