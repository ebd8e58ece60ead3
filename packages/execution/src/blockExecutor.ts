/**
 * Executes one block's transactions over a StateTree (a miner's top layer filled from bags, or
 * a full state) and gives what the block commits to: the state root, the receipts, and the
 * logical updates the storage nodes apply. Plain value transfers take a fast path that writes
 * the same state without the EVM, since they are 85% of the traffic; everything else runs in an
 * EVM (revm or @ethereumjs/evm, below) through a TreeStateManager. Differential tests hold both
 * to @ethereumjs/vm's runTx: same receipts, gas and state root.
 *
 * The EVM path does what runTx does for our forks (London–Osaka, see chain.ts) but not through it: runTx
 * re-validates the transaction object, recovers or fetches its sender, checks the hardfork,
 * builds a Bloom object and emits events per transaction, ~70 µs of a 120 µs EVM transfer here.
 * The checks are checkTransaction's (the same, in runTx's order); then the sender pays
 * gasLimit × price and its nonce moves, the EIP-2929/3651/2930 warm sets are set up, the call
 * runs (evm.runCall), the EIP-3529-capped refund and the unused gas go back to the sender (but
 * never below the EIP-7623 calldata floor), the miner gets the priority fee, self-destructed
 * accounts go (from Cancun only those the transaction created, EIP-6780), and touched empty
 * accounts are removed (EIP-161, the journal's cleanup). Transient storage (EIP-1153) lives in
 * the EVM, not in the TreeStateManager's journal: it is emptied after every transaction, however
 * the transaction ended, and the fast path never touches it.
 *
 * Contract calls and creations run in one of two engines (`opts.engine`): `revm` (Rust, through
 * the native/evm addon, see revmEngine.ts), the default where the addon is built, or
 * `@ethereumjs/evm`, the reference, and the fallback where it is not (said once in the log).
 * Both stage their writes in the same TreeStateManager journal, so everything after execution
 * (flush, updates, roots) is shared; differential tests run every suite with both.
 *
 * A transaction that fails before or during execution for want of a node (MISSING_NODE) or a
 * check (nonce, funds, gas) leaves no trace in the block; one that reverts in the EVM is
 * included with status 0, as in Ethereum.
 */
import { type Block, createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { type EVMInterface, getActivePrecompiles } from '@ethereumjs/evm';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, Address, hexToBytes } from '@ethereumjs/util';
import { createVM } from '@ethereumjs/vm';
import { bytesEqual, EMPTY_CODE_HASH, type NodeListener, StateTree, toHex } from '@monsoon/dsm-tree';
import type { AccountUpdate } from '@monsoon/protocol';
import { assertSupportedFork, type ChainRules, makeCommon } from './chain.js';
import { ExecutionError, ExecutionErrorCode, isExecutionError } from './executionError.js';
import { EncodedReceipts, type Log, type Receipt } from './receipt.js';
import {
  type BatchItem,
  type EngineName,
  RevmEngine,
  type RevmOutcome,
  revmAvailable,
} from './revmEngine.js';
import { type ExecutableTx, executableTx } from './signedTx.js';
import { accountWith, bytesKey, keyBytes, TreeStateManager, WriteSet } from './treeStateManager.js';
import { checkTransaction, type TxFees } from './txChecks.js';

/** The block a transaction runs in, as the EVM sees it. */
export interface BlockEnv {
  readonly number: bigint;
  readonly timestamp: bigint;
  /** 20 bytes: the miner paid the priority fees and the reward. */
  readonly coinbase: Uint8Array;
  readonly gasLimit: bigint;
}

/** A transaction's receipt, with what a node reports besides what the block commits to. */
export interface ExecutedReceipt extends Receipt {
  readonly gasUsed: bigint;
  /** Address of the contract a creation made. */
  readonly contractAddress?: Uint8Array;
}

export type TxOutcome =
  | { readonly status: 'included'; readonly receipt: ExecutedReceipt }
  /** Refused by a check or by the EVM before it ran: will never be valid in this state. */
  | { readonly status: 'invalid'; readonly error: ExecutionError }
  /** A node or code was missing: the witness did not cover what the transaction touched. */
  | { readonly status: 'missing'; readonly error: ExecutionError };

export interface BlockExecutorOptions {
  /** Plain value transfers without the EVM (default true). */
  fastTransfers?: boolean;
  /** Record what each transaction read, for `accesses` (default true; a miner needs none). */
  recordAccesses?: boolean;
  /** Put code read from outside the tree into it (see TreeStateManagerOptions.keepCode; default true). */
  keepCode?: boolean;
  /** An ethereumjs Common for the chain, at `rules.fork` (default: makeCommon(rules)). */
  common?: Common;
  /**
   * The EVM that runs contract calls and creations: `revm` (default where the addon is built)
   * or `ethereumjs` (the reference; the fallback, with a warning once, where revm is not built).
   */
  engine?: EngineName;
  /**
   * Let `executeBatch` run a batch of transactions in one revm call over state the engine keeps
   * across them, applied to the tree once (default: true, unless the environment sets
   * `MONSOON_EVM_BATCH=0`). Only with revm and without `recordAccesses`; otherwise, and when
   * false, `executeBatch` executes its transactions one by one.
   */
  batch?: boolean;
  /** Where the once-per-process fallback warning goes (default: console.warn). */
  warn?: (message: string) => void;
  /**
   * Keep each included transaction's receipt encoded (what the block commits to), not the
   * receipt: `finish` gives `encodedReceipts` and no `receipts` (default false). A miner, which
   * holds a block's receipts only to encode them at the seal (see EncodedReceipts).
   */
  encodeReceipts?: boolean;
  /**
   * An EVM to reuse (from an {@link EvmPool}, made with the same Common) instead of building
   * one: building costs ~1.4 ms, more than most transactions. The executor owns it until the
   * caller gives it back; no two executors may use one EVM at once.
   */
  evm?: EVMInterface;
  /**
   * Where to borrow the EVM from (made with the same Common), instead of `evm`: one is taken the
   * first time a transaction needs it — a plain transfer never does — and held until
   * {@link BlockExecutor.release}. A client pre-executing many transfers at once then holds no
   * EVMs for them (and builds none when the pool runs dry).
   */
  evms?: EvmPool;
}

/**
 * EVMs kept for reuse by short-lived executors (a client pre-executes each transaction in an
 * executor of its own). `take` hands one out for exclusive use, `give` returns it.
 */
export class EvmPool {
  private readonly free: EVMInterface[] = [];

  constructor(
    readonly common: Common,
    /** EVMs kept when given back; more are dropped. */
    private readonly keep = 64,
  ) {}

  async take(): Promise<EVMInterface> {
    const evm = this.free.pop();
    if (evm !== undefined) return evm;
    // Built over a throwaway state manager; create() rebinds it to the executor's.
    return (await createVM({ common: this.common, stateManager: new TreeStateManager(new StateTree()) })).evm;
  }

  give(evm: EVMInterface): void {
    if (this.free.length < this.keep) this.free.push(evm);
  }

  /** EVMs waiting to be taken. */
  get idle(): number {
    return this.free.length;
  }
}

/** Blocks by environment: building one costs ~0.2 ms (its Common copied), and clients make an executor per transaction. */
const blocks = new Map<string, { common: Common; block: Block }>();

/** The ethereumjs Block an executor runs in: number, timestamp, coinbase, gas limit, base fee. */
export function blockOf(env: BlockEnv, rules: ChainRules, common: Common): Block {
  const k = `${env.number}/${env.timestamp}/${toHex(env.coinbase)}/${env.gasLimit}/${rules.baseFeePerGas}`;
  const held = blocks.get(k);
  if (held !== undefined && held.common === common) return held.block;
  const block = createBlock(
    {
      header: {
        number: env.number,
        timestamp: env.timestamp,
        coinbase: env.coinbase,
        gasLimit: env.gasLimit,
        baseFeePerGas: rules.baseFeePerGas,
        difficulty: 0n,
      },
    },
    { common, skipConsensusFormatValidation: true },
  );
  if (blocks.size >= 16) blocks.delete(blocks.keys().next().value!);
  blocks.set(k, { common, block });
  return block;
}

/** Points a reused EVM (and its journal) at another state manager, journal and transient storage cleared. */
function rebind(evm: EVMInterface, sm: TreeStateManager): void {
  (evm as { stateManager: unknown }).stateManager = sm;
  const journal = evm.journal as unknown as { stateManager: unknown; cleanJournal(): void };
  journal.stateManager = sm;
  journal.cleanJournal();
  clearTransientStorage(evm);
}

/**
 * Empties the EVM's transient storage (EIP-1153) and its checkpoints. The EVM empties it at the
 * end of a top-level call, but not when the call throws (a missing node), which would leave
 * values and open checkpoints for the next transaction.
 */
function clearTransientStorage(evm: EVMInterface): void {
  const ts = (evm as unknown as { transientStorage?: { clear(): void; _indices: number[] } })
    .transientStorage;
  if (ts === undefined) return;
  ts.clear();
  ts._indices = [0];
}

/** Hex (no 0x) of the precompile addresses in a precompile map. */
function precompilesOf(active: ReadonlyMap<string, unknown>): string[] {
  return [...active.keys()].map((h) => h.replace(/^0x/, ''));
}

/** Precompiles by Common and fork: executors without an EVM of their own are made per transaction. */
const precompilesByCommon = new WeakMap<
  Common,
  { fork: string; hex: string[]; latin1: ReadonlySet<string> }
>();

/** Hex (no 0x) of the precompiles active in `common`'s fork, and the same as latin1 keys. */
function activePrecompiles(common: Common): { hex: string[]; latin1: ReadonlySet<string> } {
  const held = precompilesByCommon.get(common);
  if (held !== undefined && held.fork === common.hardfork()) return held;
  const hex = precompilesOf(getActivePrecompiles(common));
  const made = { fork: common.hardfork(), hex, latin1: latin1Keys(hex) };
  precompilesByCommon.set(common, made);
  return made;
}

/** Hex addresses as latin1 keys. */
function latin1Keys(hex: readonly string[]): ReadonlySet<string> {
  return new Set(hex.map((h) => Buffer.from(h, 'hex').toString('latin1')));
}

/** Whether the fallback from revm to @ethereumjs/evm was reported (once per process). */
let fallbackReported = false;

/**
 * The engine used when none is asked for: revm, unless the environment sets
 * `MONSOON_EVM=ethereumjs` (engineFor falls back to @ethereumjs/evm where revm is not built).
 * Role processes were once killed by SIGSEGV with the addon loaded; reproduced since only by
 * rewriting the library file in place under a running process (the build now renames a new one
 * over it), and the addon no longer installs napi-rs's threadsafe-function GC at load.
 */
export function defaultEngine(): EngineName {
  return process.env.MONSOON_EVM === 'ethereumjs' ? 'ethereumjs' : 'revm';
}

/** The engine `requested` (else the default) resolves to here: revm only where the addon is built. */
export function engineFor(requested: EngineName | undefined, warn: (message: string) => void): EngineName {
  if ((requested ?? defaultEngine()) === 'ethereumjs') return 'ethereumjs';
  if (revmAvailable()) return 'revm';
  if (!fallbackReported) {
    fallbackReported = true;
    warn(
      'execution engine: revm is not built (npm run build:native needs cargo); running @ethereumjs/evm, slower',
    );
  }
  return 'ethereumjs';
}

/** The state after a block, and what it did. */
export interface ExecutedBlock {
  readonly stateRoot: Uint8Array;
  readonly gasUsed: bigint;
  /** Empty where the executor encoded them instead (BlockExecutorOptions.encodeReceipts). */
  readonly receipts: readonly ExecutedReceipt[];
  /** The receipts encoded, where the executor encoded them as it went (else undefined). */
  readonly encodedReceipts: readonly Uint8Array[] | undefined;
  /** Every account the block changed or deleted, with its slots written (storage nodes' input). */
  readonly updates: readonly AccountUpdate[];
  /** keccak256 of each update's address (its trie key, which picks its shard), in the same order. */
  readonly updateKeys: readonly Uint8Array[];
}

/** 2^256 − 1: no balance may exceed it. */
const MAX_BALANCE = (1n << 256n) - 1n;

export class BlockExecutor {
  private gasUsed = 0n;
  private readonly receipts: ExecutedReceipt[] = [];
  /** The receipts, encoded as they come, instead of `receipts` (BlockExecutorOptions.encodeReceipts). */
  private encoded: EncodedReceipts | undefined;
  /** Everything the block wrote so far, folded per transaction. */
  private readonly written = new WriteSet();
  private finished = false;
  /** The ethereumjs engine's EVM (undefined when revm runs the block, or until one is borrowed). */
  private evm: EVMInterface | undefined;
  /** Where `evm` is borrowed from when a transaction first needs it (see BlockExecutorOptions.evms). */
  private readonly evms: EvmPool | undefined;
  private readonly revm: RevmEngine | undefined;
  private readonly coinbase: Address;
  private readonly coinbaseKey: string;
  /** Hex (no 0x) of every address warm from the start of each transaction: precompiles, coinbase. */
  private readonly warmHex: readonly string[];
  /** Precompile addresses (latin1): a value transfer to one runs it, so it is not plain. */
  private readonly precompiles: ReadonlySet<string>;
  private maxRefundQuotient: bigint;
  /** EIP-6780 (Cancun): SELFDESTRUCT deletes only an account created in the same transaction. */
  private readonly eip6780: boolean;

  private constructor(
    readonly state: StateTree,
    readonly env: BlockEnv,
    readonly rules: ChainRules,
    private readonly sm: TreeStateManager,
    common: Common,
    engine: { evm: EVMInterface; block: Block } | RevmEngine | EvmPool,
    private readonly fast: boolean,
    /** executeBatch runs revm batches (see BlockExecutorOptions.batch). */
    private readonly batches = false,
  ) {
    const js = engine instanceof RevmEngine || engine instanceof EvmPool ? undefined : engine;
    this.evm = js?.evm;
    this.block = js?.block;
    this.evms = engine instanceof EvmPool ? engine : undefined;
    this.common = common;
    this.revm = engine instanceof RevmEngine ? engine : undefined;
    this.coinbase = new Address(env.coinbase);
    this.coinbaseKey = bytesKey(env.coinbase);
    // Per Common, not per executor, where no EVM came with it (a client's, per transaction).
    let precompiles: string[];
    if (js !== undefined) {
      precompiles = precompilesOf(js.evm.precompiles);
      this.precompiles = latin1Keys(precompiles);
    } else ({ hex: precompiles, latin1: this.precompiles } = activePrecompiles(common));
    // EIP-2929: precompiles are warm; EIP-3651 (Shanghai): so is the coinbase.
    this.warmHex = common.isActivatedEIP(3651) ? [...precompiles, toHex(env.coinbase)] : precompiles;
    // The EVM's parameters are in the EVM's Common (revm applies the refund cap itself; a
    // borrowed EVM's is read when it is borrowed).
    this.maxRefundQuotient = js?.evm.common.param('maxRefundQuotient') ?? 5n;
    this.eip6780 = common.isActivatedEIP(6780);
  }

  private block: Block | undefined;
  private readonly common: Common;

  /** The engine that runs this block's contract calls and creations. */
  get engine(): EngineName {
    return this.revm !== undefined ? 'revm' : 'ethereumjs';
  }

  /** Calls into the revm addon so far (0 with the ethereumjs engine): for benchmarks. */
  get engineCrossings(): number {
    return this.revm?.crossings ?? 0;
  }

  /** Transactions executeBatch ran inside revm batches so far (the rest went one by one). */
  get batchedTransactions(): number {
    return this.revm?.batched ?? 0;
  }

  /** Of those, the ones whose run ahead revm took instead of running them again (until finish). */
  get reusedRuns(): number {
    return this.revm?.reused ?? 0;
  }

  static async create(
    state: StateTree,
    env: BlockEnv,
    rules: ChainRules,
    opts: BlockExecutorOptions = {},
  ): Promise<BlockExecutor> {
    const common = opts.common ?? makeCommon(rules);
    assertSupportedFork(common);
    if (common.hardfork() !== rules.fork) {
      throw new ExecutionError(
        ExecutionErrorCode.UnsupportedFork,
        `the Common runs ${common.hardfork()}, the chain rules ${rules.fork}: make it with makeCommon(rules)`,
        { common: common.hardfork(), rules: rules.fork },
      );
    }
    const recordAccesses = opts.recordAccesses ?? true;
    const sm = new TreeStateManager(state, { recordAccesses, keepCode: opts.keepCode });
    const fast = opts.fastTransfers ?? true;
    let executor: BlockExecutor;
    if (engineFor(opts.engine, opts.warn ?? console.warn) === 'revm') {
      const revm = new RevmEngine(sm, env, rules, recordAccesses);
      const batches = !recordAccesses && (opts.batch ?? process.env.MONSOON_EVM_BATCH !== '0');
      executor = new BlockExecutor(state, env, rules, sm, common, revm, fast, batches);
    } else if (opts.evm === undefined && opts.evms !== undefined)
      executor = new BlockExecutor(state, env, rules, sm, common, opts.evms, fast);
    else {
      let evm = opts.evm;
      if (evm === undefined) evm = (await createVM({ common, stateManager: sm })).evm;
      else rebind(evm, sm);
      const block = blockOf(env, rules, common);
      executor = new BlockExecutor(state, env, rules, sm, common, { evm, block }, fast);
    }
    if (opts.encodeReceipts === true) executor.encoded = new EncodedReceipts();
    return executor;
  }

  get blockGasUsed(): bigint {
    return this.gasUsed;
  }

  /** The keys the last execute() read (a client's access set). */
  get accesses(): TreeStateManager['accesses'] {
    return this.sm.accesses;
  }

  /**
   * Runs `tx` from `sender` (recovered beforehand, 20 bytes) on top of the block so far. Only
   * an included transaction changes the state. `calleeSlots`: slots of `tx.to` the caller
   * expects it to read (a client's guess, read already): revm gets them with its first call, so
   * a right guess costs one crossing; accesses stay what the transaction read either way.
   */
  async execute(
    transaction: TypedTransaction | ExecutableTx,
    sender: Uint8Array,
    calleeSlots?: readonly Uint8Array[],
  ): Promise<TxOutcome> {
    if (this.finished) throw new Error('the block is finished');
    const tx = executableTx(transaction);
    const sm = this.sm;
    sm.resetAccesses();
    try {
      if (sender.length !== 20) throw new RangeError(`a sender is 20 bytes, found ${sender.length}`);
      const senderKey = bytesKey(sender);
      const account = sm.readAccount(sender, senderKey);
      const fees = checkTransaction(tx, account, this.rules, this.env.gasLimit - this.gasUsed);
      let receipt: ExecutedReceipt;
      if (this.fast && this.isPlainTransfer(tx)) {
        receipt = this.transfer(tx, senderKey, account!, fees);
        this.revm?.wrote(sender);
        this.revm?.wrote(tx.to!);
        this.revm?.wrote(this.env.coinbase);
      } else if (this.revm !== undefined) receipt = await this.runRevm(this.revm, tx, sender, calleeSlots);
      else {
        const from = new Address(sender);
        const evm = this.evm ?? (await this.borrowEvm());
        receipt = await this.runEvm(evm, tx, from, await sm.getAccount(from), fees);
      }
      this.written.absorb(this.sm.flush());
      this.revm?.commit();
      this.gasUsed = receipt.cumulativeGasUsed;
      this.keep(receipt);
      return { status: 'included', receipt };
    } catch (e) {
      this.sm.discard();
      this.revm?.discard();
      if (isExecutionError(e, ExecutionErrorCode.MissingNode)) return { status: 'missing', error: e };
      if (isExecutionError(e)) return { status: 'invalid', error: e };
      throw e;
    }
  }

  /**
   * Runs `items` in order, as many `execute` calls would, with the same outcomes, receipts and
   * state (a differential test holds the two to each other). With revm batches (see
   * BlockExecutorOptions.batch) the transactions run in one engine call over state the engine
   * keeps across them, and what they changed reaches the tree in one flush; a transaction the
   * batch cannot settle alone (refused, a node missing, a deletion, out of block gas) goes
   * through `execute` after the ones before it were applied, and the batch goes on after it.
   */
  async executeBatch(
    items: readonly { tx: TypedTransaction | ExecutableTx; sender: Uint8Array }[],
  ): Promise<TxOutcome[]> {
    if (this.finished) throw new Error('the block is finished');
    const revm = this.revm;
    const out: TxOutcome[] = [];
    if (revm === undefined || !this.batches) {
      for (const { tx, sender } of items) out.push(await this.execute(tx, sender));
      return out;
    }
    let i = 0;
    while (i < items.length) {
      // A run of well-formed items (a bad sender is execute()'s to refuse).
      const run: BatchItem[] = [];
      for (let j = i; j < items.length && items[j]!.sender.length === 20; j++)
        run.push({ tx: executableTx(items[j]!.tx), sender: items[j]!.sender });
      if (run.length > 0) {
        let done: Awaited<ReturnType<RevmEngine['runBatch']>>;
        try {
          done = await revm.runBatch(run, this.env.gasLimit - this.gasUsed);
          this.written.absorb(this.sm.flush());
        } catch (e) {
          this.sm.discard();
          revm.lost();
          throw e;
        }
        for (const [k, r] of done.outcomes.entries()) {
          const receipt = this.revmReceipt(run[k]!.tx, r);
          this.gasUsed = receipt.cumulativeGasUsed;
          this.keep(receipt);
          out.push({ status: 'included', receipt });
        }
        i += done.outcomes.length;
        if (done.deferred === undefined) continue;
      }
      out.push(await this.execute(items[i]!.tx, items[i]!.sender));
      i++;
    }
    return out;
  }

  /** Keeps an included transaction's receipt (encoded, see BlockExecutorOptions.encodeReceipts). */
  private keep(receipt: ExecutedReceipt): void {
    if (this.encoded !== undefined) this.encoded.add(receipt);
    else this.receipts.push(receipt);
  }

  /**
   * Gives a borrowed EVM back to its pool, and revm's engine back to its spare ones (a no-op
   * when none was taken); a later transaction takes one again.
   */
  release(): void {
    this.revm?.release();
    if (this.evms === undefined || this.evm === undefined) return;
    this.evms.give(this.evm);
    this.evm = undefined;
  }

  private async borrowEvm(): Promise<EVMInterface> {
    const evm = await this.evms!.take();
    rebind(evm, this.sm);
    this.block ??= blockOf(this.env, this.rules, this.common);
    this.maxRefundQuotient = evm.common.param('maxRefundQuotient');
    this.evm = evm;
    return evm;
  }

  /**
   * A call with no data and no access list to an account without code that is not a
   * precompile, whose balance cannot overflow: no EVM needed.
   */
  private isPlainTransfer(tx: ExecutableTx): boolean {
    const to = tx.to;
    if (to === undefined || tx.data.length > 0 || tx.type > 2 || tx.accessList.length > 0) return false;
    const k = bytesKey(to);
    if (this.precompiles.has(k)) return false;
    const a = this.sm.readAccount(to, k);
    if (a === undefined) return true;
    return bytesEqual(a.codeHash, EMPTY_CODE_HASH) && a.balance + tx.value <= MAX_BALANCE;
  }

  /**
   * What runTx does for a plain transfer, written directly: 21,000 gas (the intrinsic gas, which
   * is also the EIP-7623 floor of a transaction without data), no refund, no logs; the recipient and the coinbase are touched, so either is removed if it
   * ends up empty (EIP-161). Staged in the journal like the EVM's writes, then flushed.
   */
  private transfer(tx: ExecutableTx, senderKey: string, sender: Account, fees: TxFees): ExecutedReceipt {
    const gasUsed = tx.intrinsicGas;
    this.sm.stageAccount(
      senderKey,
      accountWith(sender, sender.nonce + 1n, sender.balance - (gasUsed * fees.gasPrice + tx.value)),
    );
    const to = tx.to!;
    this.credit(to, bytesKey(to), tx.value);
    this.credit(this.env.coinbase, this.coinbaseKey, gasUsed * fees.priorityFee);
    return { type: tx.type, status: 1, gasUsed, cumulativeGasUsed: this.gasUsed + gasUsed, logs: [] };
  }

  /** Adds `amount` to a touched account: an account left empty is removed (EIP-161). */
  private credit(address: Uint8Array, k: string, amount: bigint): void {
    const a = this.sm.readAccount(address, k);
    if (a === undefined) {
      if (amount > 0n) this.sm.stageAccount(k, accountWith(undefined, 0n, amount));
      return;
    }
    const balance = a.balance + amount;
    const empty = a.nonce === 0n && balance === 0n && bytesEqual(a.codeHash, EMPTY_CODE_HASH);
    this.sm.stageAccount(k, empty ? undefined : accountWith(a, a.nonce, balance));
  }

  /** The transaction in revm, its writes staged in the journal (fees, refunds, EIP-161 are revm's). */
  private async runRevm(
    revm: RevmEngine,
    tx: ExecutableTx,
    sender: Uint8Array,
    calleeSlots?: readonly Uint8Array[],
  ): Promise<ExecutedReceipt> {
    return this.revmReceipt(tx, await revm.run(tx, sender, calleeSlots));
  }

  /** The receipt of `tx` that revm executed, next in the block. */
  private revmReceipt(tx: ExecutableTx, r: RevmOutcome): ExecutedReceipt {
    return {
      type: tx.type,
      status: r.status,
      gasUsed: r.gasUsed,
      cumulativeGasUsed: this.gasUsed + r.gasUsed,
      logs: r.logs,
      ...(r.bloom !== undefined ? { bloom: r.bloom } : {}),
      ...(r.contractAddress !== undefined ? { contractAddress: r.contractAddress } : {}),
    };
  }

  /** runTx, for our forks (see the file's comment); the journal is left clean either way. */
  private async runEvm(
    evm: EVMInterface,
    tx: ExecutableTx,
    caller: Address,
    account: Account | undefined,
    fees: TxFees,
  ): Promise<ExecutedReceipt> {
    const journal = evm.journal;
    const { gasPrice, priorityFee } = fees;
    // The journal is clean: each transaction ends with cleanJournal (runTx also cleans it first).
    try {
      await journal.checkpoint();
      for (const h of this.warmHex) journal.addAlwaysWarmAddress(h);
      journal.addAlwaysWarmAddress(toHex(caller.bytes));
      if (tx.to !== undefined) journal.addAlwaysWarmAddress(toHex(tx.to));
      for (const [address, keys] of tx.accessList) {
        const a = toHex(address);
        journal.addAlwaysWarmAddress(a, true);
        for (const k of keys) journal.addAlwaysWarmSlot(a, toHex(k), true);
      }
      // The sender pays for all the gas up front, and its nonce moves.
      const fromAccount = account ?? new Account();
      const txCost = tx.gasLimit * gasPrice;
      fromAccount.balance -= txCost;
      fromAccount.nonce += 1n;
      await journal.putAccount(caller, fromAccount);

      await journal.checkpoint();
      let result: Awaited<ReturnType<EVMInterface['runCall']>>;
      try {
        result = await evm.runCall({
          block: this.block!,
          gasPrice,
          caller,
          gasLimit: tx.gasLimit - tx.intrinsicGas,
          ...(tx.to !== undefined ? { to: new Address(tx.to) } : {}),
          value: tx.value,
          data: tx.data,
          skipNonceIncrement: true,
        });
      } catch (e) {
        await journal.revert();
        throw e;
      }
      await journal.commit();

      const exec = result.execResult;
      // EIP-3529: the refund is at most a fifth of the gas used.
      let gasUsed = exec.executionGasUsed + tx.intrinsicGas;
      const refund = exec.gasRefund ?? 0n;
      if (refund !== 0n) {
        const cap = gasUsed / this.maxRefundQuotient;
        gasUsed -= refund < cap ? refund : cap;
      }
      if (gasUsed < tx.floorGas) gasUsed = tx.floorGas; // EIP-7623 (0 before Prague)
      const sender = (await this.sm.getAccount(caller)) ?? new Account();
      sender.balance += txCost - gasUsed * gasPrice;
      await journal.putAccount(caller, sender);
      const miner = (await this.sm.getAccount(this.coinbase)) ?? new Account();
      miner.balance += gasUsed * priorityFee;
      await journal.putAccount(this.coinbase, miner);
      if (exec.selfdestruct !== undefined) {
        // Every account that self-destructed goes, in address order; from Cancun (EIP-6780) only
        // one created in this transaction (the others only gave their balance away).
        for (const hex of [...exec.selfdestruct.keys()].sort((a, b) => a.localeCompare(b))) {
          if (this.eip6780 && exec.createdAddresses?.has(hex as `0x${string}`) !== true) continue;
          await journal.deleteAccount(new Address(hexToBytes(hex as `0x${string}`)));
        }
      }
      await journal.cleanup(); // EIP-161: touched accounts left empty are removed
      await journal.commit();
      const logs: Log[] = (exec.logs ?? []).map(([address, topics, data]) => ({ address, topics, data }));
      return {
        type: tx.type,
        status: exec.exceptionError !== undefined ? 0 : 1,
        gasUsed,
        cumulativeGasUsed: this.gasUsed + gasUsed,
        logs,
        ...(result.createdAddress !== undefined ? { contractAddress: result.createdAddress.bytes } : {}),
      };
    } catch (e) {
      if (isExecutionError(e)) throw e;
      const cause = (e as { cause?: unknown }).cause;
      if (isExecutionError(cause)) throw cause;
      throw new ExecutionError(
        ExecutionErrorCode.BadTransaction,
        `the EVM refused it: ${String((e as Error).message ?? e)}`,
        {},
        e,
      );
    } finally {
      journal.cleanJournal();
      clearTransientStorage(evm);
    }
  }

  /**
   * Pays the block reward, then gives the state root, receipts and updates. The executor takes
   * no more transactions after this. `onHashed` is told of every node the state root's commit
   * hashes (see StateTree.root).
   */
  async finish(onHashed?: NodeListener): Promise<ExecutedBlock> {
    if (this.finished) throw new Error('the block is finished');
    if (this.rules.blockReward > 0n) {
      const miner = new Address(this.env.coinbase);
      const m = (await this.sm.getAccount(miner)) ?? new Account();
      m.balance += this.rules.blockReward;
      await this.sm.putAccount(miner, m);
      this.written.absorb(this.sm.flush());
    }
    this.finished = true;
    this.release();
    const { updates, keys } = this.updates();
    return {
      stateRoot: this.state.root(onHashed),
      gasUsed: this.gasUsed,
      receipts: this.receipts,
      encodedReceipts: this.encoded?.all(),
      updates,
      updateKeys: keys,
    };
  }

  /** The block's logical updates: final nonce/balance of every account it touched, code it created, slots it wrote. */
  private updates(): { updates: AccountUpdate[]; keys: Uint8Array[] } {
    const b = this.written;
    const addresses = new Set<string>([...b.accounts.keys(), ...b.storage.keys(), ...b.cleared]);
    const out: AccountUpdate[] = [];
    const keys: Uint8Array[] = [];
    for (const k of addresses) {
      const address = keyBytes(k);
      keys.push(this.sm.trieKey(address, k));
      const a = this.sm.committedAccount(k);
      if (a === undefined) {
        out.push({ deleted: true, address });
        continue;
      }
      const slots = b.storage.get(k);
      out.push({
        deleted: false,
        address,
        nonce: a.nonce,
        balance: a.balance,
        code: b.code.get(k),
        clearStorage: b.cleared.has(k),
        storage: slots === undefined ? [] : [...slots].map(([s, value]) => ({ slot: keyBytes(s), value })),
      });
    }
    return { updates: out, keys };
  }
}
