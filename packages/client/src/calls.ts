/**
 * Read-only execution for eth_call and eth_estimateGas, on state read and proven on demand
 * (no miner involved): the EVM over a TreeStateManager on a throwaway snapshot of the tree.
 */
import type { Common } from '@ethereumjs/common';
import { Address } from '@ethereumjs/util';
import { createVM } from '@ethereumjs/vm';
import type { StateTree } from '@monsoon/dsm-tree';
import { type BlockEnv, blockOf, type ChainRules, TreeStateManager } from '@monsoon/execution';
import type { CallRequest } from './rpc/backend.js';
import { RevertError } from './rpc/revertError.js';
import { RpcError, RpcErrorCode } from './rpc/rpcError.js';

export interface CallResult {
  readonly returnValue: Uint8Array;
  /** Gas used including the intrinsic gas, before refunds. */
  readonly gasUsed: bigint;
  readonly ok: boolean;
  readonly error: string | undefined;
}

const ZERO_ADDRESS = new Uint8Array(20);

/** Intrinsic gas of a transaction carrying `data` (Shanghai: EIP-2028 calldata, EIP-3860 initcode). */
export function intrinsicGas(data: Uint8Array, create: boolean): bigint {
  let gas = 21_000n;
  for (const b of data) gas += b === 0 ? 4n : 16n;
  if (create) gas += 32_000n + 2n * BigInt(Math.ceil(data.length / 32));
  return gas;
}

/** Runs `req` on a snapshot of `tree` (the tree itself is never changed). */
export async function runCall(
  tree: StateTree,
  req: CallRequest,
  env: BlockEnv,
  rules: ChainRules,
  common: Common,
): Promise<CallResult> {
  const stateManager = new TreeStateManager(tree.snapshot());
  const vm = await createVM({ common, stateManager });
  const block = blockOf(env, rules, common);
  const data = req.data ?? new Uint8Array(0);
  const intrinsic = intrinsicGas(data, req.to === undefined);
  const gasLimit = req.gas ?? env.gasLimit;
  if (gasLimit < intrinsic) {
    return {
      returnValue: new Uint8Array(0),
      gasUsed: intrinsic,
      ok: false,
      error: `intrinsic gas too low: have ${gasLimit}, want ${intrinsic}`,
    };
  }
  const res = await vm.evm.runCall({
    block,
    caller: new Address(req.from ?? ZERO_ADDRESS),
    origin: new Address(req.from ?? ZERO_ADDRESS),
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
