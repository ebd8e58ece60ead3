// Re-exported from @monsoon/util for the packages that import them from here.
export {
  byteKey,
  bytesEqual,
  CodedError,
  fromHex,
  listItems,
  type RlpSpan,
  type RlpValue,
  readSpan,
  readWhole,
  rlpDecode,
  rlpEncode,
  toHex,
} from '@monsoon/util';
export { type Account, decodeAccount, EMPTY_CODE_HASH, encodeAccount, makeAccount } from './account.js';
export { DsmError, DsmErrorCode, type DsmErrorMeta, isDsmError } from './dsmError.js';
export {
  DsmTree,
  type DsmTreeOptions,
  defaultDsmTreeOptions,
  EMPTY_ROOT,
  type EvictRule,
  type NodeListener,
  type NodeResolver,
  type NodeSource,
  type PackedNodes,
  residentNodeBytes,
  type SharedNodes,
  type VerifiedNodeSource,
  type WitnessCheck,
  withoutStack,
} from './dsmTree.js';
export { hashOne } from './hashOne.js';
export { keyNibble } from './nibbles.js';
export { NodeBag } from './nodeBag.js';
export { hashedChildren } from './nodeCodec.js';
export { orderedRoot } from './orderedRoot.js';
export { StateTree, type StateTreeOptions } from './stateTree.js';
export { decodeTree, encodeTree, encodeTreeChunks } from './treeCodec.js';
export { verifyProof } from './verifyProof.js';
export { type WalkedPath, walkPath } from './walkPath.js';
