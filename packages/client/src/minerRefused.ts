import { RpcError, RpcErrorCode } from './rpc/rpcError.js';
import { withoutCode } from './txRefusal.js';

/** A transaction a miner refused as invalid (geth's -32000, with the miner's reason in geth's words). */
export class MinerRefused extends RpcError {
  constructor(reason: string) {
    super(RpcErrorCode.Server, withoutCode(reason));
    this.name = 'MinerRefused';
  }
}
