/**
 * What the JSON-RPC layer asks of the client: chain, state and transaction queries in domain
 * types (bigint quantities, Uint8Array bytes). The layer parses and validates the JSON, calls
 * one of these, and formats the answer as geth does; the backend never sees JSON.
 *
 * Errors a backend throws become JSON-RPC errors (see `rpcErrorOf`): an RpcError as it is
 * (e.g. `new RpcError(RpcErrorCode.Server, 'header not found')`), a RevertError as code 3 with
 * its revert data, an ExecutionError as -32000 with its geth-style message, anything else as
 * -32603 internal error (logged).
 */
import type { Log } from '@monsoon/execution';
import type { BlockHeader } from '@monsoon/protocol';

/**
 * The block tags of the JSON-RPC spec. `safe` and `finalized` never reach a backend: the layer
 * turns them into block numbers first (see blockTags.ts); `pending` is the backend's call.
 */
export type NamedBlockTag = 'latest' | 'pending' | 'earliest' | 'safe' | 'finalized';

/** Which block a state query is about: a tag, a number, or (EIP-1898) a hash. */
export type BlockTag =
  | { readonly kind: NamedBlockTag }
  | { readonly kind: 'number'; readonly number: bigint }
  | { readonly kind: 'hash'; readonly hash: Uint8Array; readonly requireCanonical?: boolean };

/** One entry of an EIP-2930 access list. */
export interface AccessListEntry {
  /** 20 bytes. */
  readonly address: Uint8Array;
  /** 32 bytes each. */
  readonly storageKeys: readonly Uint8Array[];
}

/** The transaction `eth_call` / `eth_estimateGas` simulate; every field may be left out. */
export interface CallRequest {
  readonly from?: Uint8Array;
  /** Absent for a contract creation. */
  readonly to?: Uint8Array;
  readonly gas?: bigint;
  readonly gasPrice?: bigint;
  readonly maxFeePerGas?: bigint;
  readonly maxPriorityFeePerGas?: bigint;
  readonly value?: bigint;
  /** Call data (the request's `input`, or `data` when only that is given). */
  readonly data?: Uint8Array;
  readonly nonce?: bigint;
  readonly accessList?: readonly AccessListEntry[];
}

/** A block as the chain holds it, with what the JSON needs beyond Monsoon's header. */
export interface BlockView {
  /** 32 bytes: keccak256 of the header's RLP (`headerHash`). */
  readonly hash: Uint8Array;
  readonly header: BlockHeader;
  /** The raw signed transactions, in block order. */
  readonly transactions: readonly Uint8Array[];
  /**
   * The senders of `transactions` (20 bytes each, same order), when known: full-transaction
   * answers recover the ones missing, one ecrecover each.
   */
  readonly senders?: readonly Uint8Array[];
  /** Bytes of the encoded block. */
  readonly size: number;
  /** The chain's (constant) base fee, `ChainRules.baseFeePerGas`. */
  readonly baseFeePerGas: bigint;
  /** 256 bytes: `logsBloom` of all the block's logs; all zeros when left out. */
  readonly logsBloom?: Uint8Array;
  /** Sum of the difficulties from genesis up to this block, when known. */
  readonly totalDifficulty?: bigint;
}

/** A transaction, mined or still pending. */
export interface TransactionView {
  /** The raw signed transaction. */
  readonly raw: Uint8Array;
  /** 20 bytes: its recovered sender. */
  readonly from: Uint8Array;
  /** The block that includes it (all three or none: none while pending). */
  readonly blockHash?: Uint8Array;
  readonly blockNumber?: bigint;
  readonly index?: number;
  /** The including block's base fee: the effective gasPrice of a mined EIP-1559 transaction needs it. */
  readonly baseFeePerGas?: bigint;
}

/** The receipt of a mined transaction. */
export interface ReceiptView {
  readonly transactionHash: Uint8Array;
  readonly blockHash: Uint8Array;
  readonly blockNumber: bigint;
  /** Position of the transaction in its block. */
  readonly index: number;
  readonly from: Uint8Array;
  /** Absent for a contract creation. */
  readonly to?: Uint8Array;
  /** The created contract's address, for a contract creation. */
  readonly contractAddress?: Uint8Array;
  readonly gasUsed: bigint;
  readonly cumulativeGasUsed: bigint;
  /** What the sender paid per gas (base fee + effective tip). */
  readonly effectiveGasPrice: bigint;
  /** 1 success, 0 reverted or failed. */
  readonly status: 0 | 1;
  /** EIP-2718 type of the transaction. */
  readonly type: number;
  readonly logs: readonly Log[];
  /**
   * How many logs the block's earlier transactions emitted: log indexes are block-wide
   * (geth), so this receipt's logs are numbered from here.
   */
  readonly firstLogIndex: number;
}

/** One storage slot's EIP-1186 proof. */
export interface StorageProofView {
  /** 32 bytes: the slot, as asked. */
  readonly key: Uint8Array;
  readonly value: bigint;
  /** RLP trie nodes from the storage root down. */
  readonly proof: readonly Uint8Array[];
}

/** An account's EIP-1186 proof (`eth_getProof`). */
export interface AccountProofView {
  readonly address: Uint8Array;
  readonly balance: bigint;
  readonly nonce: bigint;
  /** 32 bytes. */
  readonly codeHash: Uint8Array;
  /** 32 bytes: the account's storage root. */
  readonly storageHash: Uint8Array;
  /** RLP trie nodes from the state root down. */
  readonly accountProof: readonly Uint8Array[];
  /** One per slot asked, in the order asked. */
  readonly storageProof: readonly StorageProofView[];
}

/** `eth_feeHistory`'s answer. */
export interface FeeHistoryView {
  readonly oldestBlock: bigint;
  /** One per block, plus the next block's: blockCount + 1 entries. */
  readonly baseFeePerGas: readonly bigint[];
  /** gasUsed / gasLimit of each block. */
  readonly gasUsedRatio: readonly number[];
  /** Per block, the tip at each asked percentile (left out when none was asked). */
  readonly reward?: readonly (readonly bigint[])[];
}

/** `eth_createAccessList`'s answer. */
export interface AccessListView {
  /** What the call touches beyond its sender, recipient and the precompiles, sorted by address and slot. */
  readonly accessList: readonly AccessListEntry[];
  /** Gas the call uses with that access list, after refunds. */
  readonly gasUsed: bigint;
  /** Why the call failed (geth's words, e.g. "execution reverted"), when it did. */
  readonly error?: string;
}

/** eth_syncing's object (geth's fields) while this client is behind. */
export interface SyncView {
  /** The first block this client took. */
  readonly startingBlock: bigint;
  /** The older of the chain head and the storage nodes' head: what reads are served at. */
  readonly currentBlock: bigint;
  /** The newer of the two. */
  readonly highestBlock: bigint;
}

/** What the JSON-RPC layer serves from. Addresses are 20 bytes, hashes and slots 32. */
export interface RpcBackend {
  chainId(): bigint;
  /** The head's number. */
  blockNumber(): bigint;
  /** eth_syncing: undefined (false) when at the head. */
  syncing(): SyncView | undefined;
  balance(address: Uint8Array, tag: BlockTag): Promise<bigint>;
  /** At 'pending', counts the client's own transactions not yet mined. */
  transactionCount(address: Uint8Array, tag: BlockTag): Promise<bigint>;
  code(address: Uint8Array, tag: BlockTag): Promise<Uint8Array>;
  /** The slot's value: 32 bytes (a shorter answer is left-padded). */
  storageAt(address: Uint8Array, slot: Uint8Array, tag: BlockTag): Promise<Uint8Array>;
  proof(address: Uint8Array, slots: readonly Uint8Array[], tag: BlockTag): Promise<AccountProofView>;
  /** The call's return data; throws RevertError with the revert data on a revert. */
  call(req: CallRequest, tag: BlockTag): Promise<Uint8Array>;
  estimateGas(req: CallRequest, tag: BlockTag): Promise<bigint>;
  /**
   * The EIP-2930 access list of a call, found as geth does: run it with an access-list tracer,
   * again with what it found, until the list no longer changes.
   */
  createAccessList(req: CallRequest, tag: BlockTag): Promise<AccessListView>;
  gasPrice(): Promise<bigint>;
  maxPriorityFeePerGas(): Promise<bigint>;
  /** `blockCount` is 1–1024; percentiles are increasing, 0–100. */
  feeHistory(
    blockCount: number,
    newest: BlockTag,
    rewardPercentiles: readonly number[],
  ): Promise<FeeHistoryView>;
  /** Accepts a raw signed transaction; resolves to its hash. */
  sendRawTransaction(raw: Uint8Array): Promise<Uint8Array>;
  transactionByHash(hash: Uint8Array): Promise<TransactionView | undefined>;
  transactionReceipt(hash: Uint8Array): Promise<ReceiptView | undefined>;
  /** A block by tag, number or hash; undefined when there is none. */
  blockByTag(tag: BlockTag): Promise<BlockView | undefined>;
}
