/**
 * The `revm` execution engine: a transaction runs in revm (Rust, native/evm) over state this
 * side hands it from a TreeStateManager, and its changes come back to be staged in that
 * manager's journal exactly as @ethereumjs/evm's writes are, then flushed by BlockExecutor.
 *
 * How state crosses (a re-run loop rather than a callback): the addon keeps what it was given,
 * the committed state of the block so far. A run that reads a key it lacks goes on with a
 * default and is thrown away; the answer lists every key it lacked, this side reads them
 * through the TreeStateManager (so the reads are recorded and a missing node is named as the
 * ethereumjs engine names it), and runs it again. A key whose node is nowhere is handed back
 * as unresolvable: the engine stops on it only when nothing it guessed came before it, so the
 * transaction aborts with the MISSING_NODE error of the first key real execution needs, the
 * one @ethereumjs/evm would have thrown, and nothing of it is applied. Chosen over a callback
 * into JS from inside revm because each call stays a plain synchronous function of bytes in,
 * bytes out: no re-entrancy into JS during execution, no JS exceptions unwinding through Rust,
 * and a key is fetched once per block (the engine keeps it), so an ERC-20 transfer after the
 * first needs one or two rounds.
 *
 * A transaction's changes become the engine's committed state with a record carried by the
 * next call, once the flush succeeded. What JS writes itself (the transfer fast path) it tells
 * the engine to forget. With access recording on (a client), the engine forgets everything before each
 * transaction so every key a transaction reads is read, and recorded, through the manager.
 */
import { Account, Address } from '@ethereumjs/util';
import { bytesEqual, EMPTY_CODE_HASH } from '@monsoon/dsm-tree';
import {
  type AccountChange,
  decodeBatchResult,
  decodeResult,
  type EngineBinding,
  type EngineFork,
  type EngineTx,
  encodeConfig,
  evmAddon,
  RecordWriter,
  ResultBuffer,
  type StateKey,
  setBatchGasLeft,
  TxWriter,
} from '@monsoon/evm';
import type { ChainRules } from './chain.js';
import { ExecutionError, ExecutionErrorCode, isExecutionError } from './executionError.js';
import type { Log } from './receipt.js';
import type { ExecutableTx } from './signedTx.js';
import { bytesKey, type TreeStateManager } from './treeStateManager.js';

/** The engines a BlockExecutor can run transactions in. */
export type EngineName = 'revm' | 'ethereumjs';

/** What one revm execution gave, for BlockExecutor's receipt. */
export interface RevmOutcome {
  readonly status: 0 | 1;
  readonly gasUsed: bigint;
  readonly logs: readonly Log[];
  /** The logs' bloom, undefined without logs. */
  readonly bloom: Uint8Array | undefined;
  readonly contractAddress: Uint8Array | undefined;
}

/** A transaction of a batch, with its recovered sender (20 bytes). */
export interface BatchItem {
  readonly tx: ExecutableTx;
  readonly sender: Uint8Array;
}

/** What one revm batch did: the outcomes of its first transactions, and where it stopped. */
export interface RevmBatchRun {
  /** The outcomes of items 0 … outcomes.length − 1, all executed, their changes staged. */
  readonly outcomes: readonly RevmOutcome[];
  /**
   * The item the batch left to a call of its own (`run`), the one after the last executed: revm
   * refused it, it reached a key that is nowhere, it deletes (which the tree prepares per
   * transaction), or its gas limit is above the gas left. Undefined: every item executed.
   */
  readonly deferred: number | undefined;
}

/** True where the revm addon is built (native/evm/build/evm.node); loads it on first call. */
export function revmAvailable(): boolean {
  return evmAddon() !== undefined;
}

/** The block environment the engine needs (BlockExecutor's BlockEnv). */
interface EngineEnv {
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly coinbase: Uint8Array;
  readonly gasLimit: bigint;
}

const keyOf = (k: StateKey): string =>
  k.kind === 'account'
    ? `a${bytesKey(k.address)}`
    : k.kind === 'slot'
      ? `s${bytesKey(k.address)}${bytesKey(k.slot)}`
      : `c${bytesKey(k.hash)}`;

/**
 * Addon engines given back (`release`) or whose RevmEngine was collected, kept to be reset for
 * another block: building one costs ~80 µs (its preallocated call frames), as much as a
 * client's whole pre-execution step for a transfer, and a client makes an executor per
 * transaction. Each holds ~84 KiB of Rust memory the collector does not see, so one left to
 * the collector is freed only after two full collections: a client pre-executing a few hundred
 * transactions a second held gigabytes of them that way (the soak, issue 15).
 *
 * Kept per fork (the config's first byte) and reset only for the fork they were built for: one
 * reset for another fork charged a Prague or Osaka call 2,500 gas more than @ethereumjs/evm (a
 * cold access; the engine fuzz, once engines were reused all the time).
 *
 * As many are kept as a client holds at once: its contract calls are pre-executed a few hundred
 * at a time (as many as its EvmPool keeps EVMs for), and with 16 kept each wave's others were
 * dropped to the collector and the next wave built new ones; at the soak's load a client's
 * malloc heap held ~430 MiB of live native memory beside a 345 MiB V8 heap (issue 15). 256 kept
 * engines are ~21 MiB.
 */
const spare = new Map<number, EngineBinding[]>();
const SPARE_KEPT = 256;
const reclaim = new FinalizationRegistry<{ engine: EngineBinding; fork: number }>(({ engine, fork }) =>
  keepSpare(engine, fork),
);

function keepSpare(engine: EngineBinding, fork: number): void {
  const kept = spare.get(fork) ?? [];
  if (kept.length === 0) spare.set(fork, kept);
  if (kept.length < SPARE_KEPT) kept.push(engine);
}

/**
 * An engine's writers and answer buffer: ~5 KiB to begin with, grown to what its runs needed
 * (a contract's code goes over in the records at every pre-execution). Made per executor, they
 * were a client's ~5-15 KiB of fresh array buffers per contract call; given back with the
 * engine (`release`) and taken by the next one instead, written from the start.
 */
interface Buffers {
  readonly txs: TxWriter;
  readonly answers: ResultBuffer;
  readonly records: RecordWriter;
}
const spareBuffers: Buffers[] = [];

export class RevmEngine {
  /** The addon engine, taken on the first run (a block of plain transfers never needs one) until `release`. */
  private engine: EngineBinding | undefined;
  private readonly config: Uint8Array;
  /** Taken on first use (see Buffers) until `release`. */
  private buffers: Buffers | undefined;
  private get txs(): TxWriter {
    return this.taken().txs;
  }
  private get answers(): ResultBuffer {
    return this.taken().answers;
  }
  /** Records for the engine's next call. */
  private get records(): RecordWriter {
    return this.taken().records;
  }
  /** Keys found unresolvable in the current transaction, with the error the manager threw. */
  private readonly unresolved = new Map<string, ExecutionError>();
  private readonly chainId: bigint;
  /** Paid by every transaction: handed over with the first call when accesses are recorded. */
  private readonly coinbase: Uint8Array;
  /** Code hashes (latin1) the engine holds: code is handed over once. */
  private readonly codeFed = new Set<string>();
  /**
   * Accounts (latin1) the engine holds as the tree has them, so a batch need not hand them
   * over again (see runBatch); an account JS writes itself leaves it.
   */
  private readonly held = new Set<string>();
  /** The last `run` executed a transaction whose changes the engine holds until commit(). */
  private executed = false;
  /** Calls into the addon so far (one per execute round): for benchmarks. */
  crossings = 0;
  /** Transactions executed inside batches (not left to `run`): for tests and benchmarks. */
  batched = 0;

  /**
   * Transactions of this block's batches whose run ahead the engine took instead of running
   * them again (nothing that run read had changed since): for tests and benchmarks.
   */
  get reused(): number {
    return this.engine?.reused() ?? 0;
  }

  constructor(
    private readonly sm: TreeStateManager,
    env: EngineEnv,
    rules: ChainRules,
    /** Forget the engine's state before each transaction, so every read is recorded. */
    private readonly recordAccesses: boolean,
  ) {
    if (evmAddon() === undefined) throw new Error('the revm addon is not built');
    this.config = encodeConfig({
      fork: rules.fork as EngineFork,
      chainId: rules.chainId,
      number: env.number,
      timestamp: env.timestamp,
      gasLimit: env.gasLimit,
      baseFee: rules.baseFeePerGas,
      coinbase: env.coinbase,
      reportReads: recordAccesses,
    });
    this.chainId = rules.chainId;
    this.coinbase = env.coinbase;
  }

  /** The writers and answer buffer: the ones held, else spare ones, else new ones. */
  private taken(): Buffers {
    if (this.buffers !== undefined) return this.buffers;
    const buffers = spareBuffers.pop() ?? {
      txs: new TxWriter(),
      answers: new ResultBuffer(),
      records: new RecordWriter(),
    };
    this.buffers = buffers;
    return buffers;
  }

  /** The addon engine: the one held, else a spare one reset for this block, else a new one. */
  private binding(): EngineBinding {
    if (this.engine !== undefined) return this.engine;
    const reused = spare.get(this.config[0]!)?.pop();
    reused?.reset(this.config);
    const engine = reused ?? new (evmAddon()!.Engine)(this.config);
    // A fresh or reset engine holds no code and no accounts: they go over again.
    this.codeFed.clear();
    this.held.clear();
    // Given back by `release`, or else by the collector once nothing can use it.
    reclaim.register(this, { engine, fork: this.config[0]! }, this);
    this.engine = engine;
    return engine;
  }

  /**
   * Gives the addon engine back for reuse now (between transactions only); a later run takes
   * one again, with the block's state read anew. What an executor does when it is done.
   */
  release(): void {
    const buffers = this.buffers;
    if (buffers !== undefined) {
      // Records still pending were for this engine: the next one is reset and reads anew.
      this.buffers = undefined;
      buffers.records.take();
      buffers.txs.take();
      if (spareBuffers.length < SPARE_KEPT) spareBuffers.push(buffers);
    }
    const engine = this.engine;
    if (engine === undefined) return;
    this.engine = undefined;
    reclaim.unregister(this);
    keepSpare(engine, this.config[0]!);
  }

  /** JS changed this account itself (the transfer fast path): the engine must read it again. */
  wrote(address: Uint8Array): void {
    this.records.forget(address);
    this.held.delete(bytesKey(address));
  }

  /** The transaction's changes were applied to the tree: the next transaction reads them. */
  commit(): void {
    // Carried by the next call; until then nothing reads the engine's state. Only after a
    // transaction this engine executed: after one of the fast path, the engine may still hold
    // the changes of an earlier one that failed after execution (its flush), never to be kept.
    if (!this.executed) return;
    this.executed = false;
    this.records.commitPending();
  }

  /**
   * A batch failed on this side after the engine ran it (its changes never reached the tree):
   * the engine forgets everything it holds, that batch's changes too, and reads it all again.
   */
  lost(): void {
    this.records.forgetAll();
    this.codeFed.clear();
    this.held.clear();
    this.executed = false;
  }

  /** The transaction failed after execution (its changes could not be applied): no commit goes. */
  discard(): void {
    this.executed = false;
  }

  /**
   * Runs `tx` from `caller` and stages its changes in the manager's journal (not flushed).
   * Throws MISSING_NODE for a key the witness lacks, BAD_TRANSACTION when revm refuses it.
   * `calleeSlots`: slots of `tx.to` the caller expects the run to read (a guess), handed over
   * with the first call like the coinbase; where accesses are recorded, only what the run read
   * of them is, so a right guess costs one call and a wrong one changes no witness.
   */
  async run(tx: ExecutableTx, caller: Uint8Array, calleeSlots?: readonly Uint8Array[]): Promise<RevmOutcome> {
    const engine = this.binding();
    const records = this.records;
    if (this.recordAccesses) {
      records.forgetAll();
      this.codeFed.clear();
      this.held.clear();
    }
    if (this.unresolved.size > 0) {
      records.clearUnresolvable();
      this.unresolved.clear();
    }
    const encoded = this.txs.encode(engineTx(tx, caller, this.chainId));
    // What every run reads first, handed over with the first call: the sender (read already
    // by the checks), the recipient and its code. Saves a round per new account or contract.
    this.resolve({ kind: 'account', address: caller });
    if (tx.to !== undefined) {
      const key: StateKey = { kind: 'account', address: tx.to };
      this.resolve(key);
      if (this.unresolved.size === 0 || !this.unresolved.has(keyOf(key))) this.feedCode(tx.to);
    }
    // A recording run starts from nothing: the coinbase (every transaction pays it) and the
    // guess would each cost a round; read unrecorded, recorded below where the run used them.
    if (this.recordAccesses) {
      this.sm.unrecorded(() => {
        this.resolve({ kind: 'account', address: this.coinbase });
        const to = tx.to;
        if (to !== undefined && calleeSlots !== undefined && calleeSlots.length > 0) {
          this.sm.hashKeys([], calleeSlots);
          for (const slot of calleeSlots) this.resolve({ kind: 'slot', address: to, slot });
        }
      });
    }
    for (;;) {
      this.crossings++;
      const res = decodeResult(this.answers.execute(engine, encoded, records.take()));
      switch (res.kind) {
        case 'lacking':
          this.resolveAll(res.keys);
          continue;
        case 'unresolvable':
          throw (
            this.unresolved.get(keyOf(res.key)) ??
            new ExecutionError(
              ExecutionErrorCode.MissingNode,
              `the engine stopped on a key it was not told of`,
              {
                key: res.key,
              },
            )
          );
        case 'refused':
          throw new ExecutionError(
            ExecutionErrorCode.BadTransaction,
            `the EVM refused it: ${res.message}`,
            {},
          );
        case 'executed':
          this.executed = true;
          if (res.reads !== undefined)
            for (const k of res.reads)
              if (k.kind === 'slot') this.sm.noteRead(k.address, k.slot);
              else if (k.kind === 'account') this.sm.noteRead(k.address);
          await stageChanges(this.sm, res.changes);
          return {
            status: res.status,
            gasUsed: res.gasUsed,
            logs: res.logs,
            bloom: res.bloom,
            contractAddress: res.created,
          };
      }
    }
  }

  /**
   * Runs `items` in order in one batch (a few calls: one, plus one per round of keys the engine
   * lacks) and stages what the executed ones changed, merged, in the manager's journal: one
   * flush for the batch instead of one per transaction. Stops before an item it leaves to `run`
   * (see RevmBatchRun.deferred); nothing of that item is staged. `gasLeft`: the block's.
   * Only for a manager that does not record accesses (a miner's): the reads are the batch's.
   */
  async runBatch(items: readonly BatchItem[], gasLeft: bigint): Promise<RevmBatchRun> {
    const engine = this.binding();
    const records = this.records;
    if (this.unresolved.size > 0) {
      records.clearUnresolvable();
      this.unresolved.clear();
    }
    const chainId = this.chainId;
    const batch = this.txs.encodeBatch(
      items.map(({ tx, sender }) => engineTx(tx, sender, chainId)),
      gasLeft,
    );
    // Senders and recipients the engine does not hold yet, and the recipients' code, go with
    // the first call (saves a round each). Only now: once the batch runs, the tree is behind
    // the engine until the batch ends, and the engine asks only for what no transaction of the
    // batch wrote.
    const parties: Uint8Array[] = [];
    for (const { tx, sender } of items) {
      parties.push(sender);
      if (tx.to !== undefined) parties.push(tx.to);
    }
    this.sm.hashKeys(parties, []);
    for (const { tx, sender } of items) {
      this.hold(sender);
      if (tx.to !== undefined && this.hold(tx.to)) this.feedCode(tx.to);
    }
    const outcomes: RevmOutcome[] = [];
    let left = gasLeft;
    for (;;) {
      this.crossings++;
      setBatchGasLeft(batch, left);
      const res = decodeBatchResult(
        this.answers.executeBatch(engine, batch, outcomes.length, records.take()),
      );
      for (const o of res.executed) {
        outcomes.push({
          status: o.status,
          gasUsed: o.gasUsed,
          logs: o.logs,
          bloom: o.bloom,
          contractAddress: o.created,
        });
        left -= o.gasUsed;
      }
      const end = res.end;
      if (end.kind === 'lacking') {
        if (end.index !== outcomes.length)
          throw new RangeError(`the engine lacked keys for item ${end.index}, expected ${outcomes.length}`);
        this.resolveAll(end.keys);
        continue;
      }
      this.batched += outcomes.length;
      await stageChanges(this.sm, end.changes);
      // The engine holds the batch's accounts as the tree will once they are flushed.
      for (const c of end.changes) this.held.add(bytesKey(c.address));
      return { outcomes, deferred: end.index };
    }
  }

  /**
   * Hands the engine `address`'s account (or its absence) unless it holds it. True when it was
   * handed over now.
   */
  private hold(address: Uint8Array): boolean {
    const k = bytesKey(address);
    if (this.held.has(k)) return false;
    this.resolve({ kind: 'account', address });
    // The key string only when something is unresolved (a batch's reads seldom are).
    if (this.unresolved.size > 0 && this.unresolved.has(`a${k}`)) return false;
    this.held.add(k);
    return true;
  }

  /** Hands the engine the code of `address` (read as the tree has it) unless it holds it. */
  private feedCode(address: Uint8Array): void {
    const a = this.sm.readAccount(address, bytesKey(address));
    if (
      a !== undefined &&
      !bytesEqual(a.codeHash, EMPTY_CODE_HASH) &&
      !this.codeFed.has(bytesKey(a.codeHash))
    )
      this.resolve({ kind: 'code', hash: a.codeHash, address });
  }

  /**
   * Reads the keys the engine lacks (a batch's: what its transactions were found to lack when
   * run ahead), their trie keys hashed in one call first.
   */
  private resolveAll(keys: readonly StateKey[]): void {
    if (keys.length > 1) {
      const addresses: Uint8Array[] = [];
      const slots: Uint8Array[] = [];
      for (const k of keys) {
        if (k.kind === 'code') continue;
        addresses.push(k.address);
        if (k.kind === 'slot') slots.push(k.slot);
      }
      this.sm.hashKeys(addresses, slots);
    }
    for (const k of keys) this.resolve(k);
  }

  /** Reads one key through the manager for the engine, or marks it unresolvable. */
  private resolve(k: StateKey): void {
    const sm = this.sm;
    const records = this.records;
    try {
      if (k.kind === 'account') {
        const a = sm.readAccount(k.address, bytesKey(k.address));
        if (a === undefined) records.noAccount(k.address);
        else records.account(k.address, a.nonce, a.balance, a.codeHash);
      } else if (k.kind === 'slot') {
        records.slot(k.address, k.slot, sm.readStorage(k.address, k.slot));
      } else {
        records.code(k.hash, this.codeOf(k.hash, k.address));
        this.codeFed.add(bytesKey(k.hash));
      }
    } catch (e) {
      if (!isExecutionError(e, ExecutionErrorCode.MissingNode)) throw e;
      this.unresolved.set(keyOf(k), e);
      records.unresolvable(k);
    }
  }

  /** Code by hash, read as the account's code (so a missing blob is named as the other engine names it). */
  private codeOf(hash: Uint8Array, owner: Uint8Array): Uint8Array {
    const a = this.sm.readAccount(owner, bytesKey(owner));
    if (a !== undefined && bytesKey(a.codeHash) === bytesKey(hash)) return this.sm.readCode(owner);
    const held = this.sm.tree.getCode(hash);
    if (held !== undefined) return held;
    throw new ExecutionError(
      ExecutionErrorCode.MissingNode,
      `code ${Buffer.from(hash).toString('hex')} is neither held nor in the bag`,
      { address: owner, hash },
    );
  }
}

/** `tx` from `caller` as the engine takes it. */
function engineTx(tx: ExecutableTx, caller: Uint8Array, chainId: bigint): EngineTx {
  return {
    type: tx.type,
    caller,
    to: tx.to,
    value: tx.value,
    gasLimit: tx.gasLimit,
    maxFee: tx.maxFeePerGas,
    priorityFee: tx.maxPriorityFeePerGas,
    nonce: tx.nonce,
    chainId,
    data: tx.data,
    accessList: tx.accessList,
  };
}

/** Stages revm's account changes in `sm`'s journal: deletions, wiped storage, code, accounts, slots. */
async function stageChanges(sm: TreeStateManager, changes: readonly AccountChange[]): Promise<void> {
  for (const c of changes) {
    const k = bytesKey(c.address);
    if (c.deleted) {
      sm.stageAccount(k, undefined);
      continue;
    }
    if (c.created) await sm.clearStorage(new Address(c.address));
    if (c.code !== undefined) await sm.putCode(new Address(c.address), c.code);
    sm.stageAccount(k, new Account(c.nonce, c.balance, undefined, c.codeHash));
    for (const [slot, value] of c.storage) sm.stageStorage(k, slot, value);
  }
}
