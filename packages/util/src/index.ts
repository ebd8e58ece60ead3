export {
  asBuffer,
  byteKey,
  byteKeyAt,
  bytesEqual,
  concatBytes,
  detachAll,
  stripLeadingZeros,
} from './bytes.js';
export { BytesError, BytesErrorCode, type BytesErrorMeta, isBytesError } from './bytesError.js';
export {
  CodedError,
  type CodedErrorArgs,
  codedErrorGuard,
  type ErrorMeta,
  type ErrorMetaMap,
  type NoMeta,
  type OpenErrorMeta,
  type WithCode,
} from './codedError.js';
export { bytesToHex, fromHex, hexToBytes, quantityToHex, toHex } from './hex.js';
export { bigintToBytes, bytesToBigint } from './integers.js';
export {
  listHeaderLength,
  listItems,
  type RlpInput,
  type RlpSpan,
  type RlpValue,
  readSpan,
  readWhole,
  rlpDecode,
  rlpEncode,
  stringHeaderLength,
  writeHeader,
} from './rlp.js';
export { type SteadyTicker, steadyTicker, type TickerClock } from './steadyTicker.js';
export { syncDir } from './syncDir.js';
export { type WindowBounds, windowLength } from './window.js';
