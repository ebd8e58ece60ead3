/**
 * Read-only execution for eth_call and eth_estimateGas, on state read and proven on demand
 * (no miner involved): the EVM over a TreeStateManager on a throwaway snapshot of the tree.
 */
import type { Common } from '@ethereumjs/common';
import { Address } from '@ethereumjs/util';
import { createVM } from '@ethereumjs/vm';
import { type StateTree, toHex } from '@monsoon/dsm-tree';
import { type BlockEnv, blockOf, type ChainRules, TreeStateManager } from '@monsoon/execution';
import type { CallRequest } from './rpc/backend.js';
import { RevertError } from './rpc/revertError.js';
import { RpcError, RpcErrorCode } from './rpc/rpcError.js';

export interface CallResult {
  readonly returnValue: Uint8Array;
  /** Gas used including the intrinsic gas, before refunds. */
  readonly gasUsed: bigint;
  /** The refund the run earned (before the EIP-3529 cap of gasUsed / 5); 0 when it failed. */
  readonly gasRefund: bigint;
  /** The contract a creation deployed. */
  readonly createdAddress?: Uint8Array;
  readonly ok: boolean;
  readonly error: string | undefined;
}

/** One EVM step, as much of ethereumjs' InterpreterStep as tracers here read. */
export interface CallStep {
  readonly opcode: { readonly name: string };
  /** Bottom first: the top of the stack is the last element. */
  readonly stack: readonly bigint[];
  /** The account whose storage the code runs on. */
  readonly address: { readonly bytes: Uint8Array };
}

/** What makes a run more than eth_call's plain message call. */
export interface CallOptions {
  /**
   * Run as a transaction would (eth_createAccessList): the sender, the recipient, the
   * precompiles and the coinbase start warm (EIP-2929, EIP-3651), and `req.accessList` is
   * charged as intrinsic gas and warm (EIP-2930).
   */
  readonly asTransaction?: boolean;
  /** Sees every step of the EVM. */
  readonly onStep?: (step: CallStep) => void;
}

const ZERO_ADDRESS = new Uint8Array(20);

/** Intrinsic gas of a transaction carrying `data` (Shanghai: EIP-2028 calldata, EIP-3860 initcode). */
export function intrinsicGas(data: Uint8Array, create: boolean): bigint {
  let gas = 21_000n;
  for (const b of data) gas += b === 0 ? 4n : 16n;
  if (create) gas += 32_000n + 2n * BigInt(Math.ceil(data.length / 32));
  return gas;
}

/** Access-list intrinsic gas (EIP-2930): per address and per storage key. */
const ACCESS_LIST_ADDRESS_GAS = 2400n;
const ACCESS_LIST_KEY_GAS = 1900n;

/** Runs `req` on a snapshot of `tree` (the tree itself is never changed). */
export async function runCall(
  tree: StateTree,
  req: CallRequest,
  env: BlockEnv,
  rules: ChainRules,
  common: Common,
  opts: CallOptions = {},
): Promise<CallResult> {
  const stateManager = new TreeStateManager(tree.snapshot());
  const vm = await createVM({ common, stateManager });
  const block = blockOf(env, rules, common);
  const data = req.data ?? new Uint8Array(0);
  const caller = req.from ?? ZERO_ADDRESS;
  let intrinsic = intrinsicGas(data, req.to === undefined);
  if (opts.asTransaction === true) {
    const journal = vm.evm.journal;
    for (const [precompile] of vm.evm.precompiles) journal.addAlwaysWarmAddress(precompile);
    for (const a of [caller, env.coinbase, ...(req.to === undefined ? [] : [req.to])]) {
      journal.addAlwaysWarmAddress(toHex(a));
    }
    for (const { address, storageKeys } of req.accessList ?? []) {
      intrinsic += ACCESS_LIST_ADDRESS_GAS + ACCESS_LIST_KEY_GAS * BigInt(storageKeys.length);
      journal.addAlwaysWarmAddress(toHex(address), true);
      for (const key of storageKeys) journal.addAlwaysWarmSlot(toHex(address), toHex(key), true);
    }
  }
  const onStep = opts.onStep;
  if (onStep !== undefined) vm.evm.events!.on('step', (step) => onStep(step));
  const gasLimit = req.gas ?? env.gasLimit;
  if (gasLimit < intrinsic) {
    return {
      returnValue: new Uint8Array(0),
      gasUsed: intrinsic,
      gasRefund: 0n,
      ok: false,
      error: `intrinsic gas too low: have ${gasLimit}, want ${intrinsic}`,
    };
  }
  const res = await vm.evm.runCall({
    block,
    caller: new Address(caller),
    origin: new Address(caller),
    ...(req.to !== undefined ? { to: new Address(req.to) } : {}),
    gasLimit: gasLimit - intrinsic,
    value: req.value ?? 0n,
    data,
    skipBalance: req.value === undefined || req.value === 0n,
  });
  const ex = res.execResult.exceptionError;
  return {
    returnValue: res.execResult.returnValue,
    gasUsed: intrinsic + res.execResult.executionGasUsed,
    gasRefund: ex === undefined ? (res.execResult.gasRefund ?? 0n) : 0n,
    ...(res.createdAddress !== undefined ? { createdAddress: res.createdAddress.bytes } : {}),
    ok: ex === undefined,
    error: ex?.error,
  };
}

/** The result of a call, or the error geth reports: a revert (code 3, with its data) or -32000. */
export function callOutput(r: CallResult): Uint8Array {
  if (r.ok) return r.returnValue;
  if (r.error === 'revert') throw new RevertError(r.returnValue);
  throw new RpcError(RpcErrorCode.Server, r.error ?? 'execution failed');
}

/**
 * The least gas limit with which `req` succeeds, by binary search as geth does (the first
 * run's gas used is a lower bound; refunds and the 63/64 rule can need more).
 */
export async function estimateGas(
  tree: StateTree,
  req: CallRequest,
  env: BlockEnv,
  rules: ChainRules,
  common: Common,
): Promise<bigint> {
  const cap = req.gas ?? env.gasLimit;
  const first = await runCall(tree, { ...req, gas: cap }, env, rules, common);
  if (!first.ok) callOutput(first);
  const ok = async (gas: bigint) => (await runCall(tree, { ...req, gas }, env, rules, common)).ok;
  if (await ok(first.gasUsed)) return first.gasUsed;
  let lo = first.gasUsed;
  let hi = cap;
  while (lo + 1n < hi) {
    const mid = (lo + hi) / 2n;
    if (await ok(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}
