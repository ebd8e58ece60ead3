export {
  type EngineBinding,
  EVM_ADDON_PATH,
  type EvmAddon,
  type EvmLoad,
  evmAddon,
  evmUnavailable,
  loadEvm,
} from './loadEvm.js';
export {
  type AccountChange,
  decodeResult,
  ENGINE_FORKS,
  type EngineConfig,
  type EngineFork,
  type EngineLog,
  type EngineResult,
  type EngineTx,
  encodeConfig,
  RecordWriter,
  ResultBuffer,
  type StateKey,
  TxWriter,
} from './protocol.js';
