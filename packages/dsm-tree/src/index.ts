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
  type VerifiedNodeSource,
  type WitnessCheck,
} from './dsmTree.js';
export { hashOne } from './hashOne.js';
export { NodeBag } from './nodeBag.js';
export {
  listItems,
  type RlpSpan,
  type RlpValue,
  readSpan,
  readWhole,
  rlpDecode,
  rlpEncode,
} from './rlp.js';
export { StateTree, type StateTreeOptions } from './stateTree.js';
export { decodeTree, encodeTree, encodeTreeChunks } from './treeCodec.js';
export { verifyProof } from './verifyProof.js';
