/**
 * eth_createAccessList as geth computes it (internal/ethapi `AccessList` with
 * `logger.AccessListTracer`): run the call as a transaction with an access-list tracer, run it
 * again with the list found, and so on until a run adds nothing; answer that list and the gas
 * the last run used (after refunds, as a receipt would say). The tracer records the storage
 * slots SLOAD / SSTORE touch (on any account), and the accounts BALANCE, EXTCODE*, SELFDESTRUCT
 * and the CALL family name — except the sender, the recipient (or the created contract) and the
 * precompiles, which a transaction has warm anyway.
 */
import type { Common } from '@ethereumjs/common';
import { getActivePrecompiles } from '@ethereumjs/evm';
import { type StateTree, toHex } from '@monsoon/dsm-tree';
import type { BlockEnv, ChainRules } from '@monsoon/execution';
import { type CallStep, runCall } from './calls.js';
import type { AccessListEntry, AccessListView, CallRequest } from './rpc/backend.js';
import { RpcError, RpcErrorCode } from './rpc/rpcError.js';

/** Runs after which a list that still grows is answered as it is (geth loops until it settles). */
export const MAX_ACCESS_LIST_RUNS = 32;

const ZERO_ADDRESS = new Uint8Array(20);

const SLOT_OPS = new Set(['SLOAD', 'SSTORE']);
const ADDRESS_OPS = new Set(['EXTCODECOPY', 'EXTCODEHASH', 'EXTCODESIZE', 'BALANCE', 'SELFDESTRUCT']);
const CALL_OPS = new Set(['DELEGATECALL', 'CALL', 'STATICCALL', 'CALLCODE']);

/** Accounts (hex, no 0x) to the slots (hex) listed for them. */
type AccessMap = Map<string, Set<string>>;

function word(n: bigint, bytes: number): string {
  return (n & ((1n << BigInt(8 * bytes)) - 1n)).toString(16).padStart(2 * bytes, '0');
}

/** geth's AccessListTracer: starts from a list, adds what the run touches. */
class AccessListTracer {
  readonly list: AccessMap;

  constructor(
    from: AccessMap,
    private readonly excluded: ReadonlySet<string>,
  ) {
    this.list = new Map([...from].map(([a, slots]) => [a, new Set(slots)]));
  }

  private addAddress(a: string): void {
    if (!this.list.has(a)) this.list.set(a, new Set());
  }

  step(s: CallStep): void {
    const op = s.opcode.name;
    const n = s.stack.length;
    if (SLOT_OPS.has(op) && n >= 1) {
      const a = toHex(s.address.bytes);
      this.addAddress(a);
      this.list.get(a)!.add(word(s.stack[n - 1]!, 32));
    } else if (ADDRESS_OPS.has(op) && n >= 1) {
      const a = word(s.stack[n - 1]!, 20);
      if (!this.excluded.has(a)) this.addAddress(a);
    } else if (CALL_OPS.has(op) && n >= 5) {
      const a = word(s.stack[n - 2]!, 20);
      if (!this.excluded.has(a)) this.addAddress(a);
    }
  }
}

function sameList(x: AccessMap, y: AccessMap): boolean {
  if (x.size !== y.size) return false;
  for (const [a, slots] of x) {
    const other = y.get(a);
    if (other === undefined || other.size !== slots.size) return false;
    for (const s of slots) if (!other.has(s)) return false;
  }
  return true;
}

/** The list as geth answers it: accounts by address, each one's slots sorted. */
function entries(list: AccessMap): AccessListEntry[] {
  return [...list.keys()].sort().map((a) => ({
    address: Buffer.from(a, 'hex'),
    storageKeys: [...list.get(a)!].sort().map((s) => Buffer.from(s, 'hex')),
  }));
}

/** geth's wording of an EVM failure. */
function vmError(error: string): string {
  return error === 'revert' ? 'execution reverted' : error;
}

/**
 * The access list and gas of `req` at the state of `tree` (see the file's comment). A call
 * that cannot start (its gas below the intrinsic gas) is refused as geth refuses it (-32000).
 */
export async function createAccessList(
  tree: StateTree,
  req: CallRequest,
  env: BlockEnv,
  rules: ChainRules,
  common: Common,
): Promise<AccessListView> {
  const from = toHex(req.from ?? ZERO_ADDRESS);
  const excluded = new Set([from, ...getActivePrecompiles(common).keys()]);
  if (req.to !== undefined) excluded.add(toHex(req.to));
  const initial: AccessMap = new Map();
  for (const e of req.accessList ?? []) {
    const a = toHex(e.address);
    if (excluded.has(a)) continue;
    initial.set(a, new Set([...(initial.get(a) ?? []), ...e.storageKeys.map(toHex)]));
  }
  let prev = new AccessListTracer(initial, excluded);
  for (let run = 1; ; run++) {
    const accessList = entries(prev.list);
    const tracer = new AccessListTracer(prev.list, excluded);
    const r = await runCall(tree, { ...req, accessList }, env, rules, common, {
      asTransaction: true,
      onStep: (s) => tracer.step(s),
    });
    if (r.error?.startsWith('intrinsic gas too low') === true) {
      throw new RpcError(RpcErrorCode.Server, `failed to apply transaction: ${r.error}`);
    }
    if (r.createdAddress !== undefined) {
      // The contract a creation deploys is its recipient: excluded as an account (its slots stay).
      const created = toHex(r.createdAddress);
      excluded.add(created);
      if (tracer.list.get(created)?.size === 0) tracer.list.delete(created);
    }
    if (sameList(tracer.list, prev.list) || run === MAX_ACCESS_LIST_RUNS) {
      const cap = r.gasUsed / 5n; // EIP-3529
      return {
        accessList,
        gasUsed: r.gasUsed - (r.gasRefund < cap ? r.gasRefund : cap),
        ...(r.ok ? {} : { error: vmError(r.error ?? 'execution failed') }),
      };
    }
    prev = tracer;
  }
}
