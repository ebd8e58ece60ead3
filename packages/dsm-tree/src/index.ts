export { type Account, decodeAccount, EMPTY_CODE_HASH, encodeAccount, makeAccount } from './account.js';
export { bytesEqual, fromHex, toHex } from './bytes.js';
export { CodedError } from './codedError.js';
export { DsmError, DsmErrorCode, isDsmError } from './dsmError.js';
export {
  DsmTree,
  type DsmTreeOptions,
  defaultDsmTreeOptions,
  EMPTY_ROOT,
  type NodeResolver,
  type NodeSource,
  type WitnessCheck,
} from './dsmTree.js';
export { NodeBag } from './nodeBag.js';
export { type RlpValue, rlpDecode, rlpEncode } from './rlp.js';
export { StateTree, type StateTreeOptions } from './stateTree.js';
export { decodeTree, encodeTree, encodeTreeChunks } from './treeCodec.js';
export { verifyProof } from './verifyProof.js';
