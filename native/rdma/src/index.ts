export {
  loadNative,
  NATIVE_ADDON_PATH,
  type NativeWalkArgs,
  type NativeWalkResult,
  nativeBinding,
  type RdmaBinding,
  type VerbsInfo,
} from './loadNative.js';
export { trimNativeHeap } from './nativeHeap.js';
export {
  type AccountsWalk,
  MappedWalkSource,
  ReaderWalkSource,
  type RemoteRegion,
  RemoteWalkSource,
  type SourceAnswer,
  type WalkSource,
  walkAccountsFrom,
} from './nativeWalk.js';
export {
  type AccountWalkOptions,
  accountWalkSteps,
  EMPTY_TRIE_ROOT,
  type NodeFetch,
  type NodeFetchMany,
  type TrieWalk,
  type TrieWalkQuery,
  type WalkAnswer,
  type WalkQuery,
  type WalkStep,
  type WalkStepAnswer,
  walkAccount,
  walkAccounts,
  walkMany,
  walkTrie,
} from './proofWalk.js';
export { fromAddonError, isRdmaError, RdmaError, RdmaErrorCode } from './rdmaError.js';
export {
  ARENA_UNIT,
  BUCKET_BYTES,
  BUCKET_SLOTS,
  bucketsOf,
  ENTRY_BYTES,
  FORMAT_VERSION,
  H as HEADER_FIELDS,
  HEADER_BYTES,
  MAGIC_BYTES,
  planRegion,
  type RegionGeometry,
  readHeader,
  tagsOf,
} from './regionLayout.js';
export {
  defaultRegionReaderOptions,
  type ReadCounters,
  RegionReader,
  type RegionReaderOptions,
} from './regionReader.js';
export {
  defaultRegionWriterOptions,
  RegionWriter,
  type RegionWriterOptions,
  type WriterCounters,
} from './regionWriter.js';
export { requireRdma, SharedRegion, verbsInfo } from './sharedRegion.js';
