/**
 * The methods served: for each, its parameters (decoders, required ones first, as geth's
 * signatures have them) and what it asks of the backend. geth's argument rules: a missing or
 * null required argument is refused, extra ones are refused, a missing optional one is undefined.
 */
import { bytesEqual } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import type { BlockTag, CallRequest } from './backend.js';
import { blockJson, blockTransactionJson, transactionHashes } from './blockJson.js';
import { EVENT_METHODS } from './eventMethods.js';
import { hexData, type Json, type JsonObject, quantity } from './json.js';
import {
  ArgError,
  addressArg,
  blockNumberArg,
  blockTagArg,
  boolArg,
  bytesArg,
  type CallArgs,
  callArg,
  type Decoder,
  floatsArg,
  hashArg,
  hexOrDecimal64Arg,
  storageKey,
  stringArg,
  stringsArg,
  uintArg,
} from './params.js';
import { receiptJson } from './receiptJson.js';
import { RpcError, RpcErrorCode } from './rpcError.js';
import { method, type RpcContext, type RpcMethod } from './rpcMethod.js';
import { type Common, commonFor, transactionJson } from './transactionJson.js';

export type { RpcContext, RpcMethod } from './rpcMethod.js';

/** Most blocks one eth_feeHistory covers (geth's default history limit). */
export const MAX_FEE_HISTORY_BLOCKS = 1024;
/** Most reward percentiles one eth_feeHistory takes (geth's query limit). */
export const MAX_REWARD_PERCENTILES = 100;

const LATEST: BlockTag = { kind: 'latest' };

function server(message: string): RpcError {
  return new RpcError(RpcErrorCode.Server, message);
}

/** Refuses a non-empty argument this server does not implement (state and block overrides). */
function unsupported(what: string): Decoder<undefined> {
  return (v) => {
    if (typeof v === 'object' && v !== null && Object.keys(v).length === 0) return undefined;
    throw new ArgError(`${what} are not supported`);
  };
}

/** geth's checks of a call's arguments (TransactionArgs.CallDefaults), with its messages. */
function callRequest(args: CallArgs, chainId: bigint): CallRequest {
  const { input, chainId: asked, data, ...rest } = args;
  if (data !== undefined && input !== undefined && !bytesEqual(data, input)) {
    throw server(
      'both "data" and "input" are set and not equal. Please use "input" to pass transaction call data',
    );
  }
  const { gasPrice, maxFeePerGas, maxPriorityFeePerGas } = args;
  if (gasPrice !== undefined && (maxFeePerGas !== undefined || maxPriorityFeePerGas !== undefined)) {
    throw server('both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified');
  }
  if (
    maxFeePerGas !== undefined &&
    maxPriorityFeePerGas !== undefined &&
    maxFeePerGas < maxPriorityFeePerGas
  ) {
    throw server(`maxFeePerGas (${maxFeePerGas}) < maxPriorityFeePerGas (${maxPriorityFeePerGas})`);
  }
  if (asked !== undefined && asked !== chainId) {
    throw server(`chainId does not match node's (have=${asked}, want=${chainId})`);
  }
  const calldata = input ?? data;
  return calldata === undefined ? rest : { ...rest, data: calldata };
}

/** Storage keys as geth decodes them; a bad one is a method error (-32000), as in geth. */
function storageKeys(keys: readonly string[], prefix: string): { slot: Uint8Array; inputLength: number }[] {
  return keys.map((k) => {
    try {
      return storageKey(k);
    } catch (e) {
      throw e instanceof ArgError ? server(`${prefix}${e.message}`) : e;
    }
  });
}

/** How eth_getProof echoes a key: as given when 32 bytes, else as a QUANTITY (geth). */
function proofKey(k: { slot: Uint8Array; inputLength: number }): string {
  return k.inputLength === 32 ? hexData(k.slot) : quantity(BigInt(hexData(k.slot)));
}

/** geth's checks of reward percentiles (its `%f` prints six decimals). */
function checkPercentiles(p: readonly number[]): void {
  const why = 'invalid reward percentile';
  if (p.length > MAX_REWARD_PERCENTILES)
    throw server(`${why}: over the query limit ${MAX_REWARD_PERCENTILES}`);
  p.forEach((x, i) => {
    if (x < 0 || x > 100) throw server(`${why}: ${x.toFixed(6)}`);
    if (i > 0 && x <= p[i - 1]!) {
      throw server(`${why}: #${i - 1}:${p[i - 1]!.toFixed(6)} >= #${i}:${x.toFixed(6)}`);
    }
  });
}

function common(ctx: RpcContext): Common {
  return commonFor(ctx.backend.chainId());
}

function byHash(hash: Uint8Array): BlockTag {
  return { kind: 'hash', hash };
}

async function blockOrNull(ctx: RpcContext, tag: BlockTag, full: boolean): Promise<Json> {
  const view = await ctx.backend.blockByTag(tag);
  return view === undefined ? null : blockJson(view, full, common(ctx));
}

async function transactionCountOrNull(ctx: RpcContext, tag: BlockTag): Promise<Json> {
  const view = await ctx.backend.blockByTag(tag);
  return view === undefined ? null : quantity(view.transactions.length);
}

async function blockTransactionOrNull(ctx: RpcContext, tag: BlockTag, index: bigint): Promise<Json> {
  const view = await ctx.backend.blockByTag(tag);
  if (view === undefined || index >= BigInt(view.transactions.length)) return null;
  return blockTransactionJson(view, Number(index), common(ctx));
}

/** Left-pads a storage value to 32 bytes. */
function word(value: Uint8Array): Uint8Array {
  if (value.length >= 32) return value;
  const out = new Uint8Array(32);
  out.set(value, 32 - value.length);
  return out;
}

const callOptional = [blockTagArg, unsupported('state overrides'), unsupported('block overrides')] as const;

/** eth_getBlockReceipts: every receipt of a block, in order; null for a block there is none of. */
async function blockReceiptsOrNull(ctx: RpcContext, tag: BlockTag): Promise<Json> {
  const view = await ctx.backend.blockByTag(tag);
  if (view === undefined) return null;
  const receipts = await Promise.all(
    transactionHashes(view.transactions).map((h) => ctx.backend.transactionReceipt(h)),
  );
  return receipts.map((r, i) => {
    if (r === undefined) {
      throw new Error(`block ${hexData(view.hash)} holds transaction ${i}, whose receipt the backend lacks`);
    }
    return receiptJson(r);
  });
}

/** Every method served, by name. */
export const RPC_METHODS: ReadonlyMap<string, RpcMethod> = new Map<string, RpcMethod>([
  ...EVENT_METHODS,
  ['web3_clientVersion', method([], [], (ctx) => ctx.clientVersion)],
  ['web3_sha3', method([bytesArg], [], (_ctx, data) => hexData(keccak.keccak256(data)))],
  ['net_version', method([], [], (ctx) => ctx.backend.chainId().toString())],
  ['net_listening', method([], [], () => true)],
  ['eth_chainId', method([], [], (ctx) => quantity(ctx.backend.chainId()))],
  ['eth_blockNumber', method([], [], (ctx) => quantity(ctx.backend.blockNumber()))],
  ['eth_accounts', method([], [], () => [])],
  [
    'eth_syncing',
    method([], [], (ctx) => {
      const s = ctx.backend.syncing();
      return s === undefined
        ? false
        : {
            startingBlock: quantity(s.startingBlock),
            currentBlock: quantity(s.currentBlock),
            highestBlock: quantity(s.highestBlock),
          };
    }),
  ],
  [
    'eth_getBalance',
    method([addressArg, blockTagArg], [], async (ctx, a, tag) => quantity(await ctx.backend.balance(a, tag))),
  ],
  [
    'eth_getTransactionCount',
    method([addressArg, blockTagArg], [], async (ctx, a, tag) =>
      quantity(await ctx.backend.transactionCount(a, tag)),
    ),
  ],
  [
    'eth_getCode',
    method([addressArg, blockTagArg], [], async (ctx, a, tag) => hexData(await ctx.backend.code(a, tag))),
  ],
  [
    'eth_getStorageAt',
    method([addressArg, stringArg, blockTagArg], [], async (ctx, a, key, tag) => {
      const { slot } = storageKeys([key], 'unable to decode storage key: ')[0]!;
      return hexData(word(await ctx.backend.storageAt(a, slot, tag)));
    }),
  ],
  [
    'eth_getProof',
    method([addressArg, stringsArg, blockTagArg], [], async (ctx, a, keys, tag) => {
      const decoded = storageKeys(keys, '');
      const p = await ctx.backend.proof(
        a,
        decoded.map((k) => k.slot),
        tag,
      );
      if (p.storageProof.length !== decoded.length) {
        throw new Error(
          `backend proof: expected ${decoded.length} storage proofs, found ${p.storageProof.length}`,
        );
      }
      return {
        address: hexData(p.address),
        accountProof: p.accountProof.map(hexData),
        balance: quantity(p.balance),
        codeHash: hexData(p.codeHash),
        nonce: quantity(p.nonce),
        storageHash: hexData(p.storageHash),
        storageProof: p.storageProof.map((s, i) => ({
          key: proofKey(decoded[i]!),
          value: quantity(s.value),
          proof: s.proof.map(hexData),
        })),
      };
    }),
  ],
  [
    'eth_call',
    method([callArg], callOptional, async (ctx, args, tag) =>
      hexData(await ctx.backend.call(callRequest(args, ctx.backend.chainId()), tag ?? LATEST)),
    ),
  ],
  [
    'eth_estimateGas',
    method([callArg], callOptional, async (ctx, args, tag) =>
      quantity(await ctx.backend.estimateGas(callRequest(args, ctx.backend.chainId()), tag ?? LATEST)),
    ),
  ],
  ['eth_gasPrice', method([], [], async (ctx) => quantity(await ctx.backend.gasPrice()))],
  [
    'eth_maxPriorityFeePerGas',
    method([], [], async (ctx) => quantity(await ctx.backend.maxPriorityFeePerGas())),
  ],
  [
    'eth_feeHistory',
    method([hexOrDecimal64Arg, blockNumberArg], [floatsArg], async (ctx, count, newest, percentiles = []) => {
      if (count === 0n) return { oldestBlock: '0x0', baseFeePerGas: [], gasUsedRatio: [] };
      checkPercentiles(percentiles);
      const blocks = count > BigInt(MAX_FEE_HISTORY_BLOCKS) ? MAX_FEE_HISTORY_BLOCKS : Number(count);
      const h = await ctx.backend.feeHistory(blocks, newest, percentiles);
      const out: JsonObject = {
        oldestBlock: quantity(h.oldestBlock),
        baseFeePerGas: h.baseFeePerGas.map(quantity),
        gasUsedRatio: [...h.gasUsedRatio],
      };
      if (percentiles.length > 0 && h.reward !== undefined) out.reward = h.reward.map((r) => r.map(quantity));
      return out;
    }),
  ],
  [
    'eth_sendRawTransaction',
    method([bytesArg], [], async (ctx, raw) => hexData(await ctx.backend.sendRawTransaction(raw))),
  ],
  [
    'eth_getTransactionByHash',
    method([hashArg], [], async (ctx, hash) => {
      const view = await ctx.backend.transactionByHash(hash);
      return view === undefined ? null : transactionJson(view, common(ctx));
    }),
  ],
  [
    'eth_getTransactionReceipt',
    method([hashArg], [], async (ctx, hash) => {
      const view = await ctx.backend.transactionReceipt(hash);
      return view === undefined ? null : receiptJson(view);
    }),
  ],
  [
    'eth_createAccessList',
    method([callArg], [blockTagArg, unsupported('state overrides')], async (ctx, args, tag) => {
      const r = await ctx.backend.createAccessList(callRequest(args, ctx.backend.chainId()), tag ?? LATEST);
      const out: JsonObject = {
        accessList: r.accessList.map((e) => ({
          address: hexData(e.address),
          storageKeys: e.storageKeys.map(hexData),
        })),
      };
      if (r.error !== undefined) out.error = r.error;
      out.gasUsed = quantity(r.gasUsed);
      return out;
    }),
  ],
  [
    'eth_getRawTransactionByHash',
    method([hashArg], [], async (ctx, hash) => {
      const view = await ctx.backend.transactionByHash(hash);
      return view === undefined ? null : hexData(view.raw);
    }),
  ],
  ['eth_getBlockReceipts', method([blockTagArg], [], blockReceiptsOrNull)],
  ['eth_getBlockByNumber', method([blockNumberArg, boolArg], [], blockOrNull)],
  ['eth_getBlockByHash', method([hashArg, boolArg], [], (ctx, h, full) => blockOrNull(ctx, byHash(h), full))],
  ['eth_getBlockTransactionCountByNumber', method([blockNumberArg], [], transactionCountOrNull)],
  [
    'eth_getBlockTransactionCountByHash',
    method([hashArg], [], (ctx, h) => transactionCountOrNull(ctx, byHash(h))),
  ],
  ['eth_getTransactionByBlockNumberAndIndex', method([blockNumberArg, uintArg], [], blockTransactionOrNull)],
  [
    'eth_getTransactionByBlockHashAndIndex',
    method([hashArg, uintArg], [], (ctx, h, i) => blockTransactionOrNull(ctx, byHash(h), i)),
  ],
]);
