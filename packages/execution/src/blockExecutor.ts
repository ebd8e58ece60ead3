/**
 * Executes one block's transactions over a StateTree (a miner's top layer filled from bags, or
 * a full state) and gives what the block commits to: the state root, the receipts, and the
 * logical updates the storage nodes apply. Contract calls run in @ethereumjs/vm through a
 * TreeStateManager; plain value transfers take a fast path that writes the same state (a
 * differential test holds the two to that), since they are 85% of the traffic and need no EVM.
 *
 * A transaction that fails before or during execution for want of a node (MISSING_NODE) or a
 * check (nonce, funds, gas) leaves no trace in the block; one that reverts in the EVM is
 * included with status 0, as in Ethereum.
 */
import { type Block, createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, Address } from '@ethereumjs/util';
import { createVM, runTx, type VM } from '@ethereumjs/vm';
import { bytesEqual, EMPTY_CODE_HASH, type StateTree } from '@monsoon/dsm-tree';
import type { AccountUpdate } from '@monsoon/protocol';
import { type ChainRules, makeCommon } from './chain.js';
import { ExecutionError, ExecutionErrorCode, isExecutionError } from './executionError.js';
import type { Receipt } from './receipt.js';
import { keyBytes, TreeStateManager, WriteSet } from './treeStateManager.js';
import { checkTransaction } from './txChecks.js';

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
  /** An ethereumjs Common for the chain (default: makeCommon(rules.chainId)). */
  common?: Common;
}

/** The state after a block, and what it did. */
export interface ExecutedBlock {
  readonly stateRoot: Uint8Array;
  readonly gasUsed: bigint;
  readonly receipts: readonly ExecutedReceipt[];
  /** The included transactions, in order. */
  readonly transactions: readonly TypedTransaction[];
  /** Every account the block changed or deleted, with its slots written (storage nodes' input). */
  readonly updates: readonly AccountUpdate[];
}

export class BlockExecutor {
  private gasUsed = 0n;
  private readonly receipts: ExecutedReceipt[] = [];
  private readonly included: TypedTransaction[] = [];
  /** Everything the block wrote so far, folded per transaction. */
  private readonly written = new WriteSet();
  private finished = false;

  private constructor(
    readonly state: StateTree,
    readonly env: BlockEnv,
    readonly rules: ChainRules,
    private readonly sm: TreeStateManager,
    private readonly vm: VM,
    private readonly block: Block,
    private readonly fast: boolean,
  ) {}

  static async create(
    state: StateTree,
    env: BlockEnv,
    rules: ChainRules,
    opts: BlockExecutorOptions = {},
  ): Promise<BlockExecutor> {
    const common = opts.common ?? makeCommon(rules.chainId);
    const sm = new TreeStateManager(state);
    const vm = await createVM({ common, stateManager: sm });
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
    return new BlockExecutor(state, env, rules, sm, vm, block, opts.fastTransfers ?? true);
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
   * an included transaction changes the state.
   */
  async execute(tx: TypedTransaction, sender: Uint8Array): Promise<TxOutcome> {
    if (this.finished) throw new Error('the block is finished');
    this.sm.resetAccesses();
    try {
      const from = new Address(sender);
      const account = await this.sm.getAccount(from);
      const fees = checkTransaction(tx, account, this.rules, this.env.gasLimit - this.gasUsed);
      const receipt =
        this.fast && (await this.isPlainTransfer(tx))
          ? await this.transfer(tx, from, account!, fees.gasPrice, fees.priorityFee)
          : await this.runEvm(tx);
      this.written.absorb(this.sm.flush());
      this.gasUsed = receipt.cumulativeGasUsed;
      this.receipts.push(receipt);
      this.included.push(tx);
      return { status: 'included', receipt };
    } catch (e) {
      this.sm.discard();
      if (isExecutionError(e, ExecutionErrorCode.MissingNode)) return { status: 'missing', error: e };
      if (isExecutionError(e)) return { status: 'invalid', error: e };
      throw e;
    }
  }

  /** A call with no data to an account without code: no EVM needed. */
  private async isPlainTransfer(tx: TypedTransaction): Promise<boolean> {
    if (tx.to === undefined || tx.data.length > 0 || tx.type > 2) return false;
    if (tx.type !== 0 && (tx as { accessList: unknown[] }).accessList.length > 0) return false;
    const to = await this.sm.getAccount(tx.to);
    return to === undefined || bytesEqual(to.codeHash, EMPTY_CODE_HASH);
  }

  /** What runTx does for a plain transfer, written directly (21,000 gas, no refund, no logs). */
  private async transfer(
    tx: TypedTransaction,
    from: Address,
    sender: Account,
    gasPrice: bigint,
    priorityFee: bigint,
  ): Promise<ExecutedReceipt> {
    const gasUsed = tx.getIntrinsicGas();
    const sm = this.sm;
    sender.nonce += 1n;
    sender.balance -= gasUsed * gasPrice + tx.value;
    await sm.putAccount(from, sender);
    const to = tx.to!;
    const recipient = await sm.getAccount(to);
    // EIP-161: a touched account that stays empty is not created.
    if (recipient !== undefined || tx.value > 0n) {
      const r = recipient ?? new Account();
      r.balance += tx.value;
      await sm.putAccount(to, r);
    }
    const miner = new Address(this.env.coinbase);
    const fee = gasUsed * priorityFee;
    const m = await sm.getAccount(miner);
    if (m !== undefined || fee > 0n) {
      const a = m ?? new Account();
      a.balance += fee;
      await sm.putAccount(miner, a);
    }
    return {
      type: tx.type,
      status: 1,
      gasUsed,
      cumulativeGasUsed: this.gasUsed + gasUsed,
      logs: [],
    };
  }

  private async runEvm(tx: TypedTransaction): Promise<ExecutedReceipt> {
    let r: Awaited<ReturnType<typeof runTx>>;
    try {
      r = await runTx(this.vm, {
        tx,
        block: this.block,
        blockGasUsed: this.gasUsed,
        skipHardForkValidation: true,
      });
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
    }
    const receipt = r.receipt as {
      status?: 0 | 1;
      cumulativeBlockGasUsed: bigint;
      logs: [Uint8Array, Uint8Array[], Uint8Array][];
    };
    return {
      type: tx.type,
      status: receipt.status ?? (r.execResult.exceptionError ? 0 : 1),
      gasUsed: r.totalGasSpent,
      cumulativeGasUsed: receipt.cumulativeBlockGasUsed,
      logs: receipt.logs.map(([address, topics, data]) => ({ address, topics, data })),
      ...(r.createdAddress ? { contractAddress: r.createdAddress.bytes } : {}),
    };
  }

  /**
   * Pays the block reward, then gives the state root, receipts and updates. The executor takes
   * no more transactions after this.
   */
  async finish(): Promise<ExecutedBlock> {
    if (this.finished) throw new Error('the block is finished');
    if (this.rules.blockReward > 0n) {
      const miner = new Address(this.env.coinbase);
      const m = (await this.sm.getAccount(miner)) ?? new Account();
      m.balance += this.rules.blockReward;
      await this.sm.putAccount(miner, m);
      this.written.absorb(this.sm.flush());
    }
    this.finished = true;
    return {
      stateRoot: this.state.root(),
      gasUsed: this.gasUsed,
      receipts: this.receipts,
      transactions: this.included,
      updates: this.updates(),
    };
  }

  /** The block's logical updates: final nonce/balance of every account it touched, code it created, slots it wrote. */
  private updates(): AccountUpdate[] {
    const b = this.written;
    const addresses = new Set<string>([...b.accounts.keys(), ...b.storage.keys(), ...b.cleared]);
    const out: AccountUpdate[] = [];
    for (const k of addresses) {
      const address = keyBytes(k);
      const a = this.state.getAccount(address);
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
    return out;
  }
}
