/**
 * The read side of the JSON-RPC backend: balances, nonces, code, storage, proofs, `eth_call`,
 * `eth_estimateGas`, fees, and blocks / transactions / receipts, answered from the chain this
 * client follows and from state proven against a block's root (RemoteState). No miner is
 * involved. What the client's own pending transactions add ('pending' nonces, not-yet-mined
 * transactions) is the facade's (`Client`).
 */
import type { Common } from '@ethereumjs/common';
import {
  type Account,
  bytesEqual,
  EMPTY_CODE_HASH,
  EMPTY_ROOT,
  rlpEncode,
  type StateTree,
  toHex,
} from '@monsoon/dsm-tree';
import {
  type BlockEnv,
  type ChainRules,
  decodeSignedTx,
  decodeTransaction,
  keysAt,
  recoverSenders,
  type SignedTx,
  txFees,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import type { AccountQuery } from '@monsoon/protocol';
import { createAccessList } from './accessList.js';
import { callOutput, estimateGas, runCall } from './calls.js';
import type { ChainView, ClientBlock } from './chain.js';
import { ClientError, ClientErrorCode } from './clientError.js';
import type { PriorRead, RemoteState, StateRef } from './remoteState.js';
import type {
  AccessListView,
  AccountProofView,
  BlockTag,
  BlockView,
  CallRequest,
  FeeHistoryView,
  ReceiptView,
  TransactionView,
} from './rpc/backend.js';
import { RpcError, RpcErrorCode } from './rpc/rpcError.js';

export interface ReadBackendOptions {
  rules: ChainRules;
  /** The tip suggested on top of the (constant) base fee, wei. */
  suggestedTip: bigint;
  /**
   * The most gas eth_call, eth_estimateGas and eth_createAccessList run with (geth's
   * `--rpc.gascap`, 50M): a request asking for more is capped, as geth caps it, so one call's
   * work is bounded (a loop given 2^63 gas ran on the client's event loop until it ran out); 0
   * for no cap.
   */
  gasCap: bigint;
}

export const defaultReadBackendOptions: Pick<ReadBackendOptions, 'suggestedTip' | 'gasCap'> = {
  suggestedTip: 1_000_000_000n,
  gasCap: 50_000_000n,
};

export interface ReadBackendModules {
  readonly chain: ChainView;
  readonly remote: RemoteState;
  readonly common: Common;
}

/** The state a block names: where storage nodes are asked (its hash) and what proofs end in (its root). */
export function stateAt(b: ClientBlock): StateRef {
  // The last one made is kept: a block's transactions ask for it one after another.
  if (b !== lastStateBlock) {
    lastStateBlock = b;
    lastState = { blockHash: b.hash, stateRoot: b.header.stateRoot };
  }
  return lastState!;
}

let lastStateBlock: ClientBlock | undefined;
let lastState: StateRef | undefined;

/** The environment a transaction sent now would run in: the block after `head`. */
export function nextEnv(head: ClientBlock): BlockEnv {
  const now = BigInt(Math.floor(Date.now() / 1000));
  return {
    number: head.header.number + 1n,
    timestamp: now > head.header.timestamp ? now : head.header.timestamp + 1n,
    coinbase: head.header.miner,
    gasLimit: head.header.gasLimit,
  };
}

/** A signed transaction decoded, with its recovered sender; throws the ExecutionError that says why not. */
export function decodeWithSender(raw: Uint8Array, common: Common): { tx: SignedTx; from: Uint8Array } {
  const r = decodeWithSenders([raw], common)[0]!;
  if (r instanceof Error) throw r;
  return r;
}

/**
 * Fewest decodable transactions whose claimed sender keys are checked in one batch: below, the
 * batch check costs more than recovering each (native, one thread: 1 signature 93 against 49 µs,
 * 4: 46 against 40, 6: about even, 8: 33 against 36, 12: 29 against 37, 100: 19 against 35).
 */
export const MIN_CLAIMED_KEYS_BATCH = 8;

/**
 * Signed transactions decoded, with their senders recovered in one native batch (one call for
 * the lot, not one each); in place of each that can't be, the error that says why not.
 * `senderKeys`: each transaction's signer's public key as the caller claims it (64 bytes a
 * transaction, packed in the order of `raws`; a load generator knows them): then, for a batch
 * of at least {@link MIN_CLAIMED_KEYS_BATCH}, the signatures are checked against them in one go
 * and recovered one by one only if that check fails, so the answer is the same whatever the
 * keys say, only its cost differs. Throws RangeError for keys of the wrong length (a caller's
 * bug: the protocol checks the wire's).
 */
export function decodeWithSenders(
  raws: readonly Uint8Array[],
  common: Common,
  senderKeys?: Uint8Array,
): ({ tx: SignedTx; from: Uint8Array } | Error)[] {
  if (senderKeys !== undefined && senderKeys.length !== 64 * raws.length)
    throw new RangeError(
      `sender keys for ${raws.length} transactions are ${64 * raws.length} bytes, found ${senderKeys.length}`,
    );
  const txs: SignedTx[] = [];
  const at: number[] = [];
  const decoded = raws.map((raw, i): SignedTx | Error => {
    try {
      const tx = decodeSignedTx(raw, common);
      txs.push(tx);
      at.push(i);
      return tx;
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  });
  const claimed =
    senderKeys === undefined || txs.length < MIN_CLAIMED_KEYS_BATCH
      ? undefined
      : txs.length === raws.length
        ? senderKeys
        : keysAt(senderKeys, at);
  const senders = recoverSenders(txs, claimed);
  let next = 0;
  return decoded.map((d) => {
    if (d instanceof Error) return d;
    const from = senders[next++]!;
    return from instanceof Error ? from : { tx: d, from };
  });
}

export class ReadBackend {
  constructor(
    readonly opts: ReadBackendOptions,
    private readonly modules: ReadBackendModules,
  ) {}

  private get chain(): ChainView {
    return this.modules.chain;
  }

  /** The block a tag names; 'pending' and the like are the head. Geth's "header not found" otherwise. */
  blockAt(tag: BlockTag): ClientBlock {
    let b: ClientBlock | undefined;
    switch (tag.kind) {
      case 'number':
        b = this.chain.byNumber(tag.number);
        break;
      case 'hash':
        b = this.chain.block(tag.hash);
        break;
      case 'earliest':
        b = this.chain.byNumber(0n);
        break;
      default:
        b = this.chain.requireHead();
    }
    if (b === undefined) throw new RpcError(RpcErrorCode.Server, 'header not found');
    return b;
  }

  // ------------------------------------------------------------ state reads

  /**
   * The account at a block (undefined: it does not exist), proven against the block's root.
   * `alsoFetch` is fetched in the same storage round (what the caller reads next at `at`).
   */
  async accountAt(address: Uint8Array, at: StateRef, alsoFetch: readonly AccountQuery[] = []) {
    return (await this.accountRead(address, at, alsoFetch)).account;
  }

  /**
   * accountAt, with what read it: the tree (unchanged), or the accounts' walked paths where no
   * tree was needed; a next read at `at` can start from either.
   */
  async accountRead(
    address: Uint8Array,
    at: StateRef,
    alsoFetch: readonly AccountQuery[] = [],
  ): Promise<{ account: Account | undefined; read: PriorRead }> {
    // The account is asked for once: a query of it among `alsoFetch` (the sender in a
    // pre-execution's first reads) proves it too, and a second probe of the same path was a
    // second miss thrown and caught at every admission.
    const first = alsoFetch.some((q) => bytesEqual(q.address, address))
      ? alsoFetch
      : [{ address, slots: [], code: false }, ...alsoFetch];
    // Accounts alone (a plain transfer's reads): walked over cached paths, no tree.
    const reads = await this.modules.remote.readAccounts(at, first);
    if (reads !== undefined)
      return {
        account: reads.find((r) => bytesEqual(r.address, address))!.account,
        read: { stateRoot: at.stateRoot, reads },
      };
    const { value, read } = await this.modules.remote.withState(at, first, (t) => t.getAccount(address));
    return { account: value, read };
  }

  async balance(address: Uint8Array, tag: BlockTag): Promise<bigint> {
    return (await this.accountAt(address, stateAt(this.blockAt(tag))))?.balance ?? 0n;
  }

  /** The account's nonce in the block's state (what is mined; the facade adds its own pending ones). */
  async nonce(address: Uint8Array, tag: BlockTag): Promise<bigint> {
    return (await this.accountAt(address, stateAt(this.blockAt(tag))))?.nonce ?? 0n;
  }

  async code(address: Uint8Array, tag: BlockTag): Promise<Uint8Array> {
    const at = stateAt(this.blockAt(tag));
    const { value } = await this.modules.remote.withState(at, [{ address, slots: [], code: true }], (t) => {
      const a = t.getAccount(address);
      if (a === undefined || bytesEqual(a.codeHash, EMPTY_CODE_HASH)) return new Uint8Array(0);
      const code = t.getCode(a.codeHash) ?? t.resolver?.(a.codeHash);
      if (code === undefined)
        throw new ClientError(ClientErrorCode.BadProof, `code of ${toHex(address)} not served`, { address });
      return code;
    });
    return value;
  }

  async storageAt(address: Uint8Array, slot: Uint8Array, tag: BlockTag): Promise<Uint8Array> {
    const at = stateAt(this.blockAt(tag));
    const { value } = await this.modules.remote.withState(
      at,
      [{ address, slots: [slot], code: false }],
      (t) => {
        t.getAccount(address);
        return t.getStorage(address, slot);
      },
    );
    const out = new Uint8Array(32);
    if (value !== undefined) out.set(value, 32 - value.length);
    return out;
  }

  async proof(address: Uint8Array, slots: readonly Uint8Array[], tag: BlockTag): Promise<AccountProofView> {
    const at = stateAt(this.blockAt(tag));
    const { value } = await this.modules.remote.withState(
      at,
      [{ address, slots: [...slots], code: false }],
      (t) => {
        const a = t.getAccount(address);
        return {
          address,
          balance: a?.balance ?? 0n,
          nonce: a?.nonce ?? 0n,
          codeHash: a?.codeHash ?? EMPTY_CODE_HASH,
          storageHash: a?.storageRoot ?? EMPTY_ROOT,
          accountProof: t.proveAccount(address),
          storageProof: slots.map((key) => {
            const v = t.getStorage(address, key);
            return {
              key,
              value: v === undefined || v.length === 0 ? 0n : BigInt(`0x${toHex(v)}`),
              proof: a === undefined ? [] : t.proveStorage(address, key),
            };
          }),
        };
      },
    );
    return value;
  }

  async call(req: CallRequest, tag: BlockTag): Promise<Uint8Array> {
    return callOutput(await this.execute(req, tag, runCall));
  }

  estimateGas(req: CallRequest, tag: BlockTag): Promise<bigint> {
    return this.execute(req, tag, estimateGas);
  }

  createAccessList(req: CallRequest, tag: BlockTag): Promise<AccessListView> {
    return this.execute(req, tag, createAccessList);
  }

  /** Runs `f` on the state at `tag`, the request's gas capped at `gasCap`. */
  private async execute<T>(
    req: CallRequest,
    tag: BlockTag,
    f: (t: StateTree, req: CallRequest, env: BlockEnv, rules: ChainRules, common: Common) => Promise<T>,
  ): Promise<T> {
    const b = this.blockAt(tag);
    const env = envOf(b);
    const cap = this.opts.gasCap;
    const capped = cap > 0n && (req.gas ?? env.gasLimit) > cap ? { ...req, gas: cap } : req;
    const { value } = await this.modules.remote.withState(stateAt(b), callKeys(req), (t) =>
      f(t, capped, env, this.opts.rules, this.modules.common),
    );
    return value;
  }

  // ------------------------------------------------------------ fees

  /** Base fee (constant on this chain) plus the tip miners are asked for. */
  async gasPrice(): Promise<bigint> {
    return this.opts.rules.baseFeePerGas + (await this.maxPriorityFeePerGas());
  }

  async maxPriorityFeePerGas(): Promise<bigint> {
    return this.opts.suggestedTip;
  }

  async feeHistory(
    blockCount: number,
    newest: BlockTag,
    rewardPercentiles: readonly number[],
  ): Promise<FeeHistoryView> {
    const last = this.blockAt(newest);
    const blocks: ClientBlock[] = [];
    for (let n = last.header.number; blocks.length < blockCount && n >= 0n; n--) {
      const b = this.chain.byNumber(n);
      if (b === undefined) break;
      blocks.unshift(b);
    }
    const base = this.opts.rules.baseFeePerGas;
    return {
      oldestBlock: blocks[0]?.header.number ?? last.header.number,
      // One more than blocks: the base fee of the block after the newest.
      baseFeePerGas: [...blocks.map(() => base), base],
      gasUsedRatio: blocks.map((b) =>
        b.header.gasLimit === 0n ? 0 : Number(b.header.gasUsed) / Number(b.header.gasLimit),
      ),
      ...(rewardPercentiles.length > 0
        ? { reward: blocks.map((b) => this.rewards(b, rewardPercentiles)) }
        : {}),
    };
  }

  /** The priority fees paid in a block at the given gas-weighted percentiles, as geth computes them. */
  private rewards(b: ClientBlock, percentiles: readonly number[]): bigint[] {
    if (b.transactions.length === 0) return percentiles.map(() => 0n);
    const base = this.opts.rules.baseFeePerGas;
    let prev = 0n;
    const items = b.transactions
      .map((raw, i) => {
        const used = b.receipts[i]!.cumulativeGasUsed - prev;
        prev = b.receipts[i]!.cumulativeGasUsed;
        return { tip: txFees(decodeTransaction(raw, this.modules.common), base).priorityFee, used };
      })
      .sort((x, y) => (x.tip < y.tip ? -1 : x.tip > y.tip ? 1 : 0));
    const total = Number(b.header.gasUsed);
    return percentiles.map((p) => {
      const threshold = (total * p) / 100;
      let sum = 0;
      for (const it of items) {
        sum += Number(it.used);
        if (sum >= threshold) return it.tip;
      }
      return items.at(-1)!.tip;
    });
  }

  // ------------------------------------------------------------ blocks and transactions

  async blockByTag(tag: BlockTag): Promise<BlockView | undefined> {
    let b: ClientBlock | undefined;
    try {
      b = this.blockAt(tag);
    } catch {
      return undefined;
    }
    return {
      hash: b.hash,
      header: b.header,
      transactions: b.transactions,
      size: b.size,
      baseFeePerGas: this.opts.rules.baseFeePerGas,
      logsBloom: b.logsBloom,
    };
  }

  /** A mined transaction (undefined when no canonical block holds it). */
  async minedTransaction(hash: Uint8Array): Promise<TransactionView | undefined> {
    const loc = this.chain.transaction(hash);
    if (loc === undefined) return undefined;
    const raw = loc.block.transactions[loc.index]!;
    return {
      raw,
      from: decodeWithSender(raw, this.modules.common).from,
      blockHash: loc.block.hash,
      blockNumber: loc.block.header.number,
      index: loc.index,
      baseFeePerGas: this.opts.rules.baseFeePerGas,
    };
  }

  async transactionReceipt(hash: Uint8Array): Promise<ReceiptView | undefined> {
    const loc = this.chain.transaction(hash);
    if (loc === undefined) return undefined;
    const { block, index } = loc;
    const raw = block.transactions[index]!;
    const { tx, from } = decodeWithSender(raw, this.modules.common);
    const r = block.receipts[index]!;
    const before = index === 0 ? 0n : block.receipts[index - 1]!.cumulativeGasUsed;
    let firstLogIndex = 0;
    for (let i = 0; i < index; i++) firstLogIndex += block.receipts[i]!.logs.length;
    return {
      transactionHash: hash,
      blockHash: block.hash,
      blockNumber: block.header.number,
      index,
      from,
      ...(tx.to !== undefined ? { to: tx.to } : { contractAddress: createdAddress(from, tx.nonce) }),
      gasUsed: r.cumulativeGasUsed - before,
      cumulativeGasUsed: r.cumulativeGasUsed,
      effectiveGasPrice: txFees(tx, this.opts.rules.baseFeePerGas).gasPrice,
      status: r.status,
      type: r.type,
      logs: r.logs,
      firstLogIndex,
    };
  }
}

/** The environment of a block itself (eth_call at it). */
function envOf(b: ClientBlock): BlockEnv {
  return {
    number: b.header.number,
    timestamp: b.header.timestamp,
    coinbase: b.header.miner,
    gasLimit: b.header.gasLimit,
  };
}

/** What a call reads first: the sender's account, and the callee's with its code. */
function callKeys(req: CallRequest): AccountQuery[] {
  const keys: AccountQuery[] = [];
  if (req.from !== undefined) keys.push({ address: req.from, slots: [], code: false });
  if (req.to !== undefined) keys.push({ address: req.to, slots: [], code: true });
  return keys;
}

/** The address a CREATE from `sender` with `nonce` deploys to: keccak(rlp([sender, nonce]))[12:]. */
function createdAddress(sender: Uint8Array, nonce: bigint): Uint8Array {
  const hex = nonce.toString(16);
  const n =
    nonce === 0n ? new Uint8Array(0) : new Uint8Array(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
  return keccak.keccak256(rlpEncode([sender, n])).subarray(12);
}
