/**
 * A reverted call, answered as geth does: code 3, `execution reverted` (with `: <reason>` when
 * the data is a Solidity `Error(string)` or `Panic(uint256)`), and the revert data as `data`,
 * which is what ethers and viem decode custom errors from.
 */
import { toHex } from '@monsoon/dsm-tree';
import { RpcError, RpcErrorCode } from './rpcError.js';

const ERROR_SELECTOR = '08c379a0';
const PANIC_SELECTOR = '4e487b71';

/** Solidity's panic codes, worded as geth's `abi.UnpackRevert`. */
const PANIC_REASONS: ReadonlyMap<bigint, string> = new Map([
  [0x00n, 'generic panic'],
  [0x01n, 'assert(false)'],
  [0x11n, 'arithmetic underflow or overflow'],
  [0x12n, 'division or modulo by zero'],
  [0x21n, 'enum overflow'],
  [0x22n, 'invalid encoded storage byte array accessed'],
  [0x31n, 'out-of-bounds array access; popping on an empty array'],
  [0x32n, 'out-of-bounds access of an array or bytesslice'],
  [0x41n, 'out of memory'],
  [0x51n, 'uninitialized function'],
]);

/** The ABI word at `offset` as a number, or undefined past the end. */
function word(data: Uint8Array, offset: number): bigint | undefined {
  if (offset + 32 > data.length) return undefined;
  return BigInt(`0x${toHex(data.subarray(offset, offset + 32))}`);
}

/** The `string` of an ABI-encoded `(string)` tuple, or undefined when malformed. */
function abiString(args: Uint8Array): string | undefined {
  const at = word(args, 0);
  if (at === undefined || at > BigInt(args.length)) return undefined;
  const length = word(args, Number(at));
  if (length === undefined) return undefined;
  const start = Number(at) + 32;
  if (BigInt(start) + length > BigInt(args.length)) return undefined;
  return new TextDecoder().decode(args.subarray(start, start + Number(length)));
}

/**
 * The reason revert data states: the message of `Error(string)`, the meaning of a
 * `Panic(uint256)` code; undefined for anything else (custom errors, empty data).
 */
export function revertReason(data: Uint8Array): string | undefined {
  if (data.length < 4) return undefined;
  const selector = toHex(data.subarray(0, 4));
  const args = data.subarray(4);
  if (selector === ERROR_SELECTOR) return abiString(args);
  if (selector !== PANIC_SELECTOR) return undefined;
  const code = word(args, 0);
  if (code === undefined) return undefined;
  return PANIC_REASONS.get(code) ?? `unknown panic code: 0x${code.toString(16)}`;
}

/** Thrown by `RpcBackend.call` / `estimateGas` when execution reverts. */
export class RevertError extends RpcError {
  /** The revert data: what REVERT returned. */
  readonly revertData: Uint8Array;

  constructor(revertData: Uint8Array) {
    const reason = revertReason(revertData);
    super(
      RpcErrorCode.ExecutionReverted,
      reason === undefined ? 'execution reverted' : `execution reverted: ${reason}`,
      `0x${toHex(revertData)}`,
    );
    this.name = 'RevertError';
    this.revertData = revertData;
  }
}
